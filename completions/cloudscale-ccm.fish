# fish completion for cloudscale-ccm
#
#   cloudscale-ccm completion fish | source                                      # this shell
#   cloudscale-ccm completion fish > ~/.config/fish/completions/cloudscale-ccm.fish   # every shell
#
# Completes `cloudscale-ccm`, `npx cloudscale-ccm` and `kubectl-cloudscale` (`kubectl cloudscale`
# completes through kubectl's own script and bin/kubectl_complete-cloudscale): subcommands, flags
# and their fixed values, files (for apply, *.json plans), kubeconfig contexts (with kubectl), and
# for `plan` and `sync-lb` the namespaces after -n and the LoadBalancer Services of the namespace
# given with -n, read from the cluster by `cloudscale-ccm __complete namespaces|services`.

# The installation that printed this script (`completion fish` fills it in: node, then
# bin/cloudscale-ccm.js); it answers the lookups of `npx cloudscale-ccm` outside a project.
set -g __cloudscale_ccm_installed

# Set while an `npx cloudscale-ccm …` line is completed as a `cloudscale-ccm …` line.
set -g __cloudscale_ccm_via_npx 0

# Runs `cloudscale-ccm __complete ARGS…` as the program the line starts with ($argv[1]) would.
# For npx that is the package of the directory tree (a project depending on it, or a checkout of
# it) run with the Node of its node_modules/.bin, as npx runs it, else the installation above.
function __cloudscale_ccm_lookup
    set -l program $argv[1]
    set -l args $argv[2..-1]
    if test $__cloudscale_ccm_via_npx = 0
        $program __complete $args
        return
    end
    set -l dir $PWD
    while test -n "$dir"
        if test -f $dir/node_modules/cloudscale-ccm/bin/cloudscale-ccm.js
            env PATH=$dir/node_modules/.bin:$PATH node $dir/node_modules/cloudscale-ccm/bin/cloudscale-ccm.js __complete $args
            return
        end
        if test -f $dir/bin/cloudscale-ccm.js -a -f $dir/package.json; and grep -q '"name": *"cloudscale-ccm"' $dir/package.json
            env PATH=$dir/node_modules/.bin:$PATH node $dir/bin/cloudscale-ccm.js __complete $args
            return
        end
        set dir (string replace -r '/[^/]*$' '' -- $dir)
    end
    test (count $__cloudscale_ccm_installed) -gt 0; and $__cloudscale_ccm_installed __complete $args
end

# The value of the last of the given flags on the line (as `--flag value` or `--flag=value`).
function __cloudscale_ccm_flag_value
    set -l tokens (commandline -opc)
    set -l value
    for i in (seq 2 (count $tokens))
        for flag in $argv
            if test "$tokens[$i]" = $flag; and test $i -lt (count $tokens)
                set value $tokens[(math $i + 1)]
            else if string match -q -- "$flag=*" $tokens[$i]
                set value (string replace -- "$flag=" '' $tokens[$i])
            end
        end
    end
    printf '%s\n' $value
end

function __cloudscale_ccm_cluster_args
    set -l kubeconfig (__cloudscale_ccm_flag_value --kubeconfig)
    set -l context (__cloudscale_ccm_flag_value --context)
    test -n "$kubeconfig"; and printf '%s\n' --kubeconfig $kubeconfig
    test -n "$context"; and printf '%s\n' --context $context
end

function __cloudscale_ccm_services
    set -l program (commandline -opc)[1]
    set -l namespace (__cloudscale_ccm_flag_value -n --namespace)
    # Without -n the lookup uses the context's namespace, as the command will.
    set -l namespace_args
    test -n "$namespace"; and set namespace_args -n $namespace
    __cloudscale_ccm_lookup $program services $namespace_args (__cloudscale_ccm_cluster_args) 2>/dev/null
end

function __cloudscale_ccm_namespaces
    set -l program (commandline -opc)[1]
    __cloudscale_ccm_lookup $program namespaces (__cloudscale_ccm_cluster_args) 2>/dev/null
end

function __cloudscale_ccm_contexts
    command -q kubectl; or return
    set -l kubeconfig (__cloudscale_ccm_flag_value --kubeconfig)
    if test -n "$kubeconfig"
        kubectl config get-contexts -o name --kubeconfig $kubeconfig 2>/dev/null
    else
        kubectl config get-contexts -o name 2>/dev/null
    end
end

set -l commands init-nodes sync-lb plan apply cleanup run status sim manifests completion help

# The -o formats: markdown is written by plan only (and may still follow before a subcommand).
# The arguments are the subcommands.
function __cloudscale_ccm_output_formats
    printf '%s\n' text json yaml
    __fish_seen_subcommand_from $argv; and not __fish_seen_subcommand_from plan; or echo markdown
end

# `npx cloudscale-ccm …` completes as the same line without `npx`.
function __cloudscale_ccm_npx_is_ours
    set -l tokens (commandline -opc)
    test (count $tokens) -ge 2; and test "$tokens[2]" = cloudscale-ccm
end

function __cloudscale_ccm_npx_candidates
    set -l tokens (commandline -opc)
    set -g __cloudscale_ccm_via_npx 1
    complete -C (string join ' ' -- (string escape -- $tokens[2..-1]) (commandline -ct))
    set -g __cloudscale_ccm_via_npx 0
end

complete -c npx -n __cloudscale_ccm_npx_is_ours -f -a '(__cloudscale_ccm_npx_candidates)'
complete -c kubectl-cloudscale -w cloudscale-ccm

complete -c cloudscale-ccm -f

# Global options, valid before and after the subcommand.
complete -c cloudscale-ccm -l kubeconfig -r -F -d 'path to the kubeconfig file'
complete -c cloudscale-ccm -l context -x -a '(__cloudscale_ccm_contexts)' -d 'kubeconfig context to use'
complete -c cloudscale-ccm -s o -l output -x -a "(__cloudscale_ccm_output_formats $commands)" -d 'output format'
complete -c cloudscale-ccm -l no-color -d 'disable colours'
complete -c cloudscale-ccm -l api-url -x -d 'cloudscale API base URL'
complete -c cloudscale-ccm -l token-file -r -F -d 'file holding the cloudscale API token'
complete -c cloudscale-ccm -l cluster-id -x -d 'cluster identity for ownership tags'
complete -c cloudscale-ccm -s v -l verbose -d 'on an error, also print its causes'
complete -c cloudscale-ccm -s h -l help -d 'show help'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -l version -d 'print the version'

# Subcommands.
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a init-nodes -d 'initialise nodes, refresh metadata, node lifecycle'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a sync-lb -d 'reconcile load balancers of LoadBalancer Services'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a plan -d 'show every change init-nodes and sync-lb would make'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a apply -d 'apply a plan saved by plan --out, or refuse it if stale'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a cleanup -d 'delete load balancers this cluster left behind'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a run -d 'init-nodes then sync-lb under a Lease'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a status -d 'what the last passes recorded, how long ago one succeeded'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a sim -d 'start the cloudscale API simulator'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a manifests -d 'print the CronJob and RBAC manifests'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a completion -d 'print a shell completion script'
complete -c cloudscale-ccm -n "not __fish_seen_subcommand_from $commands" -a help -d 'show help for a command'

# init-nodes
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from init-nodes' -l dry-run -d 'show what would be done, write nothing'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from init-nodes' -s l -l selector -x -d 'only nodes with these labels (kubectl syntax)'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from init-nodes run' -l max-node-deletions -x -d 'refuse to delete more Nodes than this'

# sync-lb and plan
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sync-lb plan status' -s n -l namespace -x -a '(__cloudscale_ccm_namespaces)' -d 'namespace of the named Services'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sync-lb plan status' -a '(__cloudscale_ccm_services)' -d 'LoadBalancer Service'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sync-lb' -l dry-run -d 'plan only, write nothing'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from plan' -s f -l filename -r -F -d 'plan a proposed Service manifest'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from plan' -l detailed-exitcode -d 'exit 2 when changes are pending'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from plan' -l out -r -F -d 'also save the plan, for cloudscale-ccm apply FILE'

# reconciling load balancers: sync-lb, apply, run (and plan, manifests: the budget)
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sync-lb apply run' -l concurrency -x -d 'Services reconciled at once'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sync-lb apply run' -l wait-timeout -x -d 'give up waiting for a load balancer after this long (s)'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sync-lb apply run' -l settle-seconds -x -d 'pause between deleting and re-creating similar objects'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sync-lb apply run' -l poll-seconds -x -d 'interval between reads of a "changing" load balancer'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sync-lb plan run' -l drain-seconds -x -d 'delete a disabled pool member after this long'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sync-lb plan run manifests' -l max-downtime -x -d 'hold back changes interrupting a port longer (e.g. 15s)'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sync-lb plan run manifests' -l window -x -d 'maintenance window with its own budget'

# apply: the file plan --out wrote (JSON files, and directories to get to one)
function __cloudscale_ccm_plan_files
    __fish_complete_path (commandline -ct) | string match -r -- '^[^\t]*(?:/|\.json)(?:\t.*)?$'
end
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from apply' -a '(__cloudscale_ccm_plan_files)'

# cleanup
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from cleanup' -l all -d 'delete every load balancer of this cluster'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from cleanup' -l include-untagged -d 'also delete load balancers without the kube-system-uid tag of this cluster'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from cleanup' -l yes -d 'do not ask for confirmation'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from cleanup' -l dry-run -d 'list what would be deleted, delete nothing'

# every writer: init-nodes, sync-lb, apply, cleanup, run
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from init-nodes sync-lb apply cleanup run' -l wait -d 'wait for another pass holding the Lease'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from init-nodes sync-lb apply cleanup run' -l lease-seconds -x -d 'duration of the Lease held for the pass (s)'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from init-nodes sync-lb cleanup run' -l metrics-file -r -F -d 'write the metrics of the pass to this file'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from init-nodes sync-lb cleanup run manifests' -l pushgateway -x -d 'push the metrics of the pass to this Pushgateway'

# run
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from run' -l force -d 'act even while another CCM holds its Lease'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from run manifests' -l watch-for -x -d 'watch and react to changes until this long after the start'

# status
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from status' -l fail-if-older-than -x -d 'exit 1 when the last successful pass is older (e.g. 5m)'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from status' -l drain-seconds -x -d "the passes' --drain-seconds: when a draining member is removed"

# sim
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sim' -l seed -r -F -d 'seed file (YAML or JSON)'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sim' -l port -x -d 'port on 127.0.0.1'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sim' -l lb-provision-seconds -x -d 'how long new load balancers stay "changing"'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sim' -l token -x -d 'require this bearer token'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sim' -l latency-ms -x -d 'delay every API request by this many milliseconds'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sim' -l pool-delete-keeps-listeners -d 'a pool delete leaves its listeners instead of deleting them'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sim' -l world -x -a 'strict forgiving' -d 'how strictly it plays the real API'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from sim' -l time-scale -x -d 'multiply every modelled duration'

# manifests
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from manifests' -l image -x -d 'container image of cloudscale-ccm'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from manifests' -l schedule -x -d 'CronJob schedule'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from manifests' -l api-server-host -x -d 'reach the API server at this host'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from manifests' -l api-server-port -x -d 'port of --api-server-host'
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from manifests' -l admission-policy -x -a 'deny warn none' -d 'the admission policy checking load-balancer annotations'

# completion and help
complete -c cloudscale-ccm -n '__fish_seen_subcommand_from completion; and not __fish_seen_subcommand_from bash zsh fish' -a 'bash zsh fish'
complete -c cloudscale-ccm -n "__fish_seen_subcommand_from help; and not __fish_seen_subcommand_from $commands[1..-2]" -a "$commands[1..-2]"
