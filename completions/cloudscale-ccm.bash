# bash completion for cloudscale-ccm
#
#   source <(cloudscale-ccm completion bash)          # this shell
#   cloudscale-ccm completion bash > ~/.local/share/bash-completion/completions/cloudscale-ccm
#
# Completes `cloudscale-ccm`, `npx cloudscale-ccm` and `kubectl-cloudscale` (`kubectl cloudscale`
# completes through kubectl's own script and bin/kubectl_complete-cloudscale, which uses this
# one): subcommands, flags and their fixed values, files (for apply, *.json plans), kubeconfig
# contexts (with kubectl), and for `plan` and `sync-lb` the namespaces after -n and the
# LoadBalancer Services of the namespace given with -n, read from the cluster by
# `cloudscale-ccm __complete namespaces|services`.

# The installation that printed this script (`completion bash` fills it in: node, then
# bin/cloudscale-ccm.js); it answers the lookups of `npx cloudscale-ccm` outside a project.
_cloudscale_ccm_installed=()

# Runs `cloudscale-ccm __complete ARGS…` as the program the line starts with ($1) would. For npx
# that is the package of the directory tree (a project depending on it, or a checkout of it) run
# with the Node of its node_modules/.bin, as npx runs it, else the installation above.
_cloudscale_ccm_lookup() {
  local program=$1 dir=$PWD
  shift
  if [[ $program != npx ]]; then
    "$program" __complete "$@"
    return
  fi
  while [[ -n $dir ]]; do
    if [[ -f $dir/node_modules/cloudscale-ccm/bin/cloudscale-ccm.js ]]; then
      PATH=$dir/node_modules/.bin:$PATH node "$dir/node_modules/cloudscale-ccm/bin/cloudscale-ccm.js" __complete "$@"
      return
    fi
    if [[ -f $dir/bin/cloudscale-ccm.js && -f $dir/package.json ]] && grep -q '"name": *"cloudscale-ccm"' "$dir/package.json"; then
      PATH=$dir/node_modules/.bin:$PATH node "$dir/bin/cloudscale-ccm.js" __complete "$@"
      return
    fi
    dir=${dir%/*}
  done
  ((${#_cloudscale_ccm_installed[@]} > 0)) && "${_cloudscale_ccm_installed[@]}" __complete "$@"
}

_cloudscale_ccm_commands='init-nodes sync-lb plan apply cleanup run status sim manifests completion help'

_cloudscale_ccm_global_flags='--kubeconfig --context -o --output --no-color --api-url --token-file --cluster-id -v --verbose -h --help --version'

# Flags that take a value (the next word, or after "="): when scanning the line their value is
# not a subcommand or an argument.
_cloudscale_ccm_value_flags=' --kubeconfig --context -o --output --api-url --token-file --cluster-id -n --namespace -l --selector -f --filename --out --concurrency --wait-timeout --settle-seconds --poll-seconds --drain-seconds --max-downtime --window --watch-for --max-node-deletions --lease-seconds --metrics-file --pushgateway --fail-if-older-than --seed --port --lb-provision-seconds --token --latency-ms --world --time-scale --image --schedule --api-server-host --api-server-port --admission-policy '

_cloudscale_ccm_command_flags() {
  case $1 in
    init-nodes) echo '--dry-run -l --selector --max-node-deletions --wait --lease-seconds --metrics-file --pushgateway' ;;
    sync-lb) echo '-n --namespace --concurrency --wait-timeout --settle-seconds --poll-seconds --drain-seconds --max-downtime --window --dry-run --wait --lease-seconds --metrics-file --pushgateway' ;;
    plan) echo '-n --namespace -f --filename --detailed-exitcode --out --drain-seconds --max-downtime --window' ;;
    apply) echo '--concurrency --wait-timeout --settle-seconds --poll-seconds --wait --lease-seconds' ;;
    cleanup) echo '--all --include-untagged --yes --dry-run --wait --lease-seconds --metrics-file --pushgateway' ;;
    run) echo '--wait --lease-seconds --metrics-file --pushgateway --force --max-downtime --window --concurrency --max-node-deletions --wait-timeout --settle-seconds --poll-seconds --drain-seconds --watch-for' ;;
    status) echo '-n --namespace --fail-if-older-than --drain-seconds' ;;
    sim) echo '--seed --port --lb-provision-seconds --token --latency-ms --pool-delete-keeps-listeners --world --time-scale' ;;
    manifests) echo '--image --schedule --api-server-host --api-server-port --max-downtime --window --pushgateway --watch-for --admission-policy' ;;
  esac
}

_cloudscale_ccm() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev='' flag=''
  ((COMP_CWORD > 0)) && prev=${COMP_WORDS[COMP_CWORD - 1]}
  COMPREPLY=()

  # bash splits `--output=json` into `--output`, `=`, `json`.
  if [[ $cur == = ]]; then
    flag=$prev
    cur=''
  elif [[ $prev == = ]] && ((COMP_CWORD > 1)); then
    flag=${COMP_WORDS[COMP_CWORD - 2]}
  elif [[ $_cloudscale_ccm_value_flags == *" $prev "* ]]; then
    flag=$prev
  fi

  # What the line holds before the word being completed.
  local command='' namespace='' kubeconfig='' i word name value
  local -a cluster_args=() arguments=()
  for ((i = 1; i < COMP_CWORD; i++)); do
    word=${COMP_WORDS[i]}
    name='' value=''
    if [[ $word == --*=* ]]; then
      name=${word%%=*} value=${word#*=}
    elif [[ $_cloudscale_ccm_value_flags == *" $word "* ]] && ((i + 1 < COMP_CWORD)); then
      name=$word value=${COMP_WORDS[i + 1]}
      ((i++))
      if [[ $value == = ]] && ((i + 1 < COMP_CWORD)); then
        value=${COMP_WORDS[i + 1]}
        ((i++))
      fi
    elif [[ $word == -* ]]; then
      continue
    elif [[ -z $command ]]; then
      command=$word
      continue
    else
      arguments+=("$word")
      continue
    fi
    case $name in
      -n | --namespace) namespace=$value ;;
      --kubeconfig) kubeconfig=$value ;;&
      --kubeconfig | --context) cluster_args+=("$name" "$value") ;;
    esac
  done

  if [[ -n $flag ]]; then
    case $flag in
      -n | --namespace)
        local namespaces
        namespaces=$(_cloudscale_ccm_lookup "${COMP_WORDS[0]}" namespaces "${cluster_args[@]}" 2>/dev/null)
        mapfile -t COMPREPLY < <(compgen -W "$namespaces" -- "$cur")
        ;;
      -o | --output)
        # markdown is written by plan only.
        local formats='text json yaml'
        [[ -z $command || $command == plan ]] && formats+=' markdown'
        mapfile -t COMPREPLY < <(compgen -W "$formats" -- "$cur")
        ;;
      --world)
        mapfile -t COMPREPLY < <(compgen -W 'strict forgiving' -- "$cur")
        ;;
      --admission-policy)
        mapfile -t COMPREPLY < <(compgen -W 'deny warn none' -- "$cur")
        ;;
      --kubeconfig | --token-file | --seed | -f | --filename | --out | --metrics-file)
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -f -- "$cur")
        ;;
      --context)
        if command -v kubectl >/dev/null 2>&1; then
          local contexts
          contexts=$(kubectl config get-contexts -o name ${kubeconfig:+--kubeconfig "$kubeconfig"} 2>/dev/null)
          mapfile -t COMPREPLY < <(compgen -W "$contexts" -- "$cur")
        fi
        ;;
    esac
    return 0
  fi

  if [[ $cur == -* ]]; then
    mapfile -t COMPREPLY < <(compgen -W "$(_cloudscale_ccm_command_flags "$command") $_cloudscale_ccm_global_flags" -- "$cur")
    return 0
  fi

  case $command in
    '') mapfile -t COMPREPLY < <(compgen -W "$_cloudscale_ccm_commands" -- "$cur") ;;
    help) ((${#arguments[@]} == 0)) && mapfile -t COMPREPLY < <(compgen -W "$_cloudscale_ccm_commands" -- "$cur") ;;
    completion) ((${#arguments[@]} == 0)) && mapfile -t COMPREPLY < <(compgen -W 'bash zsh fish' -- "$cur") ;;
    apply)
      # The file plan --out wrote: JSON files, and directories to get to one.
      if ((${#arguments[@]} == 0)); then
        compopt -o filenames 2>/dev/null
        mapfile -t COMPREPLY < <(compgen -d -- "$cur"; compgen -f -X '!*.json' -- "$cur")
      fi
      ;;
    plan | sync-lb | status)
      local services
      # Without -n the lookup uses the context's namespace, as the command will.
      services=$(_cloudscale_ccm_lookup "${COMP_WORDS[0]}" services ${namespace:+-n "$namespace"} "${cluster_args[@]}" 2>/dev/null)
      mapfile -t COMPREPLY < <(compgen -W "$services" -- "$cur")
      ;;
  esac
  return 0
}

# `npx cloudscale-ccm …`: the words after npx are completed as a cloudscale-ccm line (the lookup
# then knows it came through npx); any other npx line goes to the completion npx had before, or
# to file names.
_cloudscale_ccm_npx_previous=$(complete -p npx 2>/dev/null | sed -n 's/.* -F \([^ ]*\) .*/\1/p')
[[ $_cloudscale_ccm_npx_previous == _cloudscale_ccm_npx ]] && _cloudscale_ccm_npx_previous=''

_cloudscale_ccm_npx() {
  if ((COMP_CWORD >= 2)) && [[ ${COMP_WORDS[1]} == cloudscale-ccm ]]; then
    local -a COMP_WORDS=(npx "${COMP_WORDS[@]:2}")
    local COMP_CWORD=$((COMP_CWORD - 1))
    _cloudscale_ccm
  elif [[ -n $_cloudscale_ccm_npx_previous ]]; then
    "$_cloudscale_ccm_npx_previous" "$@"
  else
    compopt -o default 2>/dev/null
    COMPREPLY=()
  fi
}

complete -F _cloudscale_ccm cloudscale-ccm kubectl-cloudscale
complete -F _cloudscale_ccm_npx npx
