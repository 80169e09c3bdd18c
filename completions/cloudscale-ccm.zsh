#compdef cloudscale-ccm kubectl-cloudscale npx
# zsh completion for cloudscale-ccm
#
#   source <(cloudscale-ccm completion zsh)                     # this shell (after compinit)
#   cloudscale-ccm completion zsh > "${fpath[1]}/_cloudscale-ccm"   # every shell
#
# Completes `cloudscale-ccm`, `npx cloudscale-ccm` and `kubectl-cloudscale` (`kubectl cloudscale`
# completes through kubectl's own script and bin/kubectl_complete-cloudscale): subcommands, flags
# and their fixed values, files (for apply, *.json plans), kubeconfig contexts (with kubectl), and
# for `plan` and `sync-lb` the namespaces after -n and the LoadBalancer Services of the namespace
# given with -n, read from the cluster by `cloudscale-ccm __complete namespaces|services`.

# The installation that printed this script (`completion zsh` fills it in: node, then
# bin/cloudscale-ccm.js); it answers the lookups of `npx cloudscale-ccm` outside a project.
_cloudscale_ccm_installed=()

# Runs `cloudscale-ccm __complete ARGS…` as the program the line starts with ($1) would. For npx
# that is the package of the directory tree (a project depending on it, or a checkout of it) run
# with the Node of its node_modules/.bin, as npx runs it, else the installation above.
_cloudscale_ccm_lookup() {
  local program=$1 dir=$PWD
  shift
  if [[ $program != npx ]]; then
    $program __complete "$@"
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
  (( ${#_cloudscale_ccm_installed} > 0 )) && $_cloudscale_ccm_installed __complete "$@"
}

# The value of the last of the given flags on the line (as `--flag value` or `--flag=value`).
_cloudscale_ccm_flag_value() {
  local i flag value=''
  for ((i = 2; i < _cloudscale_ccm_current; i++)); do
    for flag in "$@"; do
      if [[ ${_cloudscale_ccm_line[i]} == "$flag" ]]; then
        value=${_cloudscale_ccm_line[i + 1]}
      elif [[ ${_cloudscale_ccm_line[i]} == "$flag="* ]]; then
        value=${_cloudscale_ccm_line[i]#*=}
      fi
    done
  done
  print -r -- "$value"
}

_cloudscale_ccm_cluster_args() {
  local kubeconfig=$(_cloudscale_ccm_flag_value --kubeconfig)
  local context=$(_cloudscale_ccm_flag_value --context)
  reply=()
  [[ -n $kubeconfig ]] && reply+=(--kubeconfig "$kubeconfig")
  [[ -n $context ]] && reply+=(--context "$context")
}

_cloudscale_ccm_services() {
  local namespace=$(_cloudscale_ccm_flag_value -n --namespace)
  local -a reply services namespace_args
  # Without -n the lookup uses the context's namespace, as the command will.
  [[ -n $namespace ]] && namespace_args=(-n "$namespace")
  _cloudscale_ccm_cluster_args
  services=(${(f)"$(_cloudscale_ccm_lookup ${_cloudscale_ccm_line[1]} services "${namespace_args[@]}" "${reply[@]}" 2>/dev/null)"})
  _wanted services expl 'LoadBalancer Service' compadd -a services
}

_cloudscale_ccm_namespaces() {
  local -a reply namespaces
  _cloudscale_ccm_cluster_args
  namespaces=(${(f)"$(_cloudscale_ccm_lookup ${_cloudscale_ccm_line[1]} namespaces "${reply[@]}" 2>/dev/null)"})
  _wanted namespaces expl 'namespace' compadd -a namespaces
}

_cloudscale_ccm_contexts() {
  local kubeconfig=$(_cloudscale_ccm_flag_value --kubeconfig)
  local -a contexts
  (( $+commands[kubectl] )) || return 1
  contexts=(${(f)"$(kubectl config get-contexts -o name ${kubeconfig:+--kubeconfig "$kubeconfig"} 2>/dev/null)"})
  _wanted contexts expl 'kubeconfig context' compadd -a contexts
}

_cloudscale_ccm_commands() {
  local -a commands=(
    'init-nodes:initialise uninitialised nodes, refresh node metadata, apply node lifecycle'
    'sync-lb:reconcile the cloudscale load balancers of Services of type LoadBalancer'
    'plan:show every change init-nodes and sync-lb would make; writes nothing'
    'apply:apply a plan saved by plan --out exactly as saved, or refuse it if stale'
    'cleanup:delete load balancers this cluster left behind'
    'run:init-nodes then sync-lb under a Lease (what the CronJob runs)'
    'status:print what the last passes recorded and how long ago one succeeded'
    'sim:start the built-in cloudscale API simulator'
    'manifests:print the CronJob and RBAC manifests'
    'completion:print a shell completion script'
    'help:show help for a command'
  )
  _describe -t commands 'cloudscale-ccm command' commands
}

_cloudscale_ccm() {
  # The whole line and the cursor word: _arguments below drops the words before the subcommand.
  local -a _cloudscale_ccm_line=("${words[@]}")
  local -i _cloudscale_ccm_current=$CURRENT
  local curcontext=$curcontext state state_descr line ret=1
  typeset -A opt_args
  local -a global_opts=(
    '--kubeconfig=[path to the kubeconfig file]:kubeconfig:_files'
    '--context=[kubeconfig context to use]:context:_cloudscale_ccm_contexts'
    '--no-color[disable colours]'
    '--api-url=[cloudscale API base URL]:url:'
    '--token-file=[file holding the cloudscale API token]:token file:_files'
    '--cluster-id=[cluster identity for ownership tags]:cluster id:'
    '(-v --verbose)'{-v,--verbose}'[on an error, also print its causes]'
    '(- *)'{-h,--help}'[show help]'
  )
  # -o: markdown is written by plan only (and may still follow before a subcommand is named).
  local -a output_opt=('(-o --output)'{-o+,--output=}'[output format]:format:(text json yaml markdown)')
  local -a namespace_opt=('(-n --namespace)'{-n+,--namespace=}'[namespace of the named Services]:namespace:_cloudscale_ccm_namespaces')
  # The options several subcommands share.
  local -a lease_opts=(
    '--wait[wait for another pass holding the Lease]'
    '--lease-seconds=[duration of the Lease held for the pass]:seconds:'
  )
  local -a metrics_opts=(
    '--metrics-file=[write the metrics of the pass to this file]:metrics file:_files'
    '--pushgateway=[push the metrics of the pass to this Prometheus Pushgateway]:url:'
  )
  local -a lb_opts=(
    '--concurrency=[Services reconciled at once]:count:'
    '--wait-timeout=[give up waiting for a load balancer after this long]:seconds:'
    '--settle-seconds=[pause between deleting and re-creating similar objects]:seconds:'
    '--poll-seconds=[interval between reads of a load balancer that is "changing"]:seconds:'
  )
  local -a drain_opt=('--drain-seconds=[delete a disabled pool member after this long]:seconds:')
  local -a budget_opts=(
    '--max-downtime=[hold back changes predicted to interrupt a port longer than this]:duration (e.g. 15s):'
    '--window=[a maintenance window with its own budget]:window (e.g. Mon-Fri 02\:00-04\:00 Europe/Zurich=5m):'
  )
  local -a node_deletions_opt=('--max-node-deletions=[refuse to delete more Nodes than this in one pass]:count:')

  _arguments -C $global_opts $output_opt \
    '(- *)--version[print the version]' \
    '1: :_cloudscale_ccm_commands' \
    '*:: :->command' && ret=0

  [[ $state == command ]] || return ret
  curcontext=${curcontext%:*:*}:cloudscale-ccm-${words[1]}:
  [[ ${words[1]} == plan ]] || output_opt=('(-o --output)'{-o+,--output=}'[output format]:format:(text json yaml)')
  global_opts+=($output_opt)
  case ${words[1]} in
    init-nodes)
      _arguments $global_opts $lease_opts $metrics_opts $node_deletions_opt \
        '--dry-run[show what would be done, write nothing]' \
        '(-l --selector)'{-l+,--selector=}'[only nodes with these labels (kubectl syntax)]:selector:' \
        '*:node:' && ret=0
      ;;
    sync-lb)
      _arguments $global_opts $namespace_opt $lb_opts $drain_opt $budget_opts $lease_opts $metrics_opts \
        '--dry-run[plan only, write nothing]' \
        '*:service:_cloudscale_ccm_services' && ret=0
      ;;
    plan)
      _arguments $global_opts $namespace_opt $drain_opt $budget_opts \
        '(-f --filename)'{-f+,--filename=}'[plan a proposed Service manifest]:manifest:_files' \
        '--detailed-exitcode[exit 2 when changes are pending]' \
        '--out=[also save the plan, for cloudscale-ccm apply FILE]:plan file:_files' \
        '*:service:_cloudscale_ccm_services' && ret=0
      ;;
    apply)
      _arguments $global_opts $lb_opts $lease_opts \
        '1:plan file (plan --out):_files -g "*.json(-.)"' && ret=0
      ;;
    cleanup)
      _arguments $global_opts $lease_opts $metrics_opts \
        '--all[delete every load balancer of this cluster]' \
        '--include-untagged[also delete load balancers without the kube-system-uid tag of this cluster]' \
        '--yes[do not ask for confirmation]' \
        '--dry-run[list what would be deleted, delete nothing]' && ret=0
      ;;
    run)
      _arguments $global_opts $lease_opts $metrics_opts $budget_opts $lb_opts $drain_opt $node_deletions_opt \
        '--force[act even while another cloud controller manager holds its Lease]' \
        '--watch-for=[after the pass, watch and react to changes until this long after the start]:duration (e.g. 50s, 0\: one pass):' && ret=0
      ;;
    status)
      _arguments $global_opts $namespace_opt \
        '--fail-if-older-than=[exit 1 when the last successful pass is older than this]:duration (e.g. 5m):' \
        "--drain-seconds=[the passes' --drain-seconds\: when a draining member is removed]:seconds:" \
        '*:service:_cloudscale_ccm_services' && ret=0
      ;;
    sim)
      _arguments $global_opts \
        '--seed=[seed file with servers, networks and floating IPs]:seed file:_files' \
        '--port=[port on 127.0.0.1]:port:' \
        '--lb-provision-seconds=[how long new load balancers stay "changing"]:seconds:' \
        '--token=[require this bearer token]:token:' \
        '--latency-ms=[delay every API request by this many milliseconds]:milliseconds:' \
        '--pool-delete-keeps-listeners[a pool delete leaves its listeners instead of deleting them]' \
        '--world=[how strictly it plays the real API]:world:(strict forgiving)' \
        '--time-scale=[multiply every modelled duration]:factor:' && ret=0
      ;;
    manifests)
      _arguments $global_opts $budget_opts \
        '--image=[container image of cloudscale-ccm]:image:' \
        '--schedule=[CronJob schedule]:cron schedule:' \
        '--api-server-host=[reach the API server at this host]:host:_hosts' \
        '--api-server-port=[port of --api-server-host]:port:' \
        "--pushgateway=[each Job's run pushes its metrics there]:url:" \
        "--watch-for=[each Job's run reacts to changes until this long after its start]:duration (e.g. 50s, 0\\: one pass):" \
        '--admission-policy=[the admission policy checking load-balancer annotations]:mode:(deny warn none)' && ret=0
      ;;
    completion)
      _arguments $global_opts '1:shell:(bash zsh fish)' && ret=0
      ;;
    help)
      _arguments '1: :_cloudscale_ccm_commands' && ret=0
      ;;
  esac
  return ret
}

# `npx cloudscale-ccm …`: the words after npx are completed as a cloudscale-ccm line (the lookup
# then knows it came through npx); any other npx line completes file names.
_cloudscale_ccm_npx() {
  if (( CURRENT > 2 )) && [[ ${words[2]} == cloudscale-ccm ]]; then
    words=(npx "${(@)words[3,-1]}")
    (( CURRENT-- ))
    _cloudscale_ccm
  else
    _files
  fi
}

# Autoloaded from $fpath the file is the body of _cloudscale-ccm; sourced it registers itself.
if [[ $funcstack[1] == _cloudscale-ccm ]]; then
  if [[ $service == npx ]]; then _cloudscale_ccm_npx "$@"; else _cloudscale_ccm "$@"; fi
else
  compdef _cloudscale_ccm cloudscale-ccm kubectl-cloudscale
  compdef _cloudscale_ccm_npx npx
fi
