#!/usr/bin/env bash
# `npm test`: everything a fresh clone needs, then all tests (docs/testing.md).
#
#   1. npm ci when node_modules is missing or older than package-lock.json
#   2. Debian tools the tests use (openssl, curl, script, faketime, zsh, fish, bash-completion,
#      prometheus-pushgateway, flock; containerd and runc for the real node), installed with
#      apt-get when root
#   3. the selection: the files vitest would run (`vitest list --filesOnly`), and what they
#      declare at their top: `// @kube-versions: all` (runs on every further Kubernetes
#      version) and `// @test-tools: helm|kube-controller-manager|node` (node: kube-scheduler,
#      kubelet and kube-controller-manager, the pause image; docs/real-node.md)
#   4. what the selection needs, and nothing else (Go >= 1.26 and the module proxy; each binary
#      cached by its module's go.sum): kube-apiserver + etcd when a file talks to Kubernetes,
#      the tools the files name, and kube-apiserver + etcd of each further version
#      (test/cluster/v1.*) when a selected file runs there (in the background, niced, during 6)
#   5. npm run build (dist/ is what the CLI tests run), typecheck of src + tests
#   6. vitest run; on failure the tails of the control-plane logs, then vitest's summary again
#   7. the files marked `@kube-versions: all` once more against each further version
#   8. a line per run, then one closing line "N passed, N failed" over all runs
#
# Extra arguments go to vitest, e.g. `npm test -- --project unit` or a file filter; with them,
# step 7 runs only for the versions named in TEST_KUBE_VERSIONS. TEST_KUBE_VERSIONS="v1.30 v1.34"
# picks versions, "none" skips step 7. With TEST_KUBECONFIG (an existing cluster) there is no
# step 7, and nothing of step 4 but helm.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s (at %d s)\n' "$*" "$SECONDS" >&2; }
fail() { printf '\nrun-tests: %s\n' "$*" >&2; exit 1; }

# ---- 1. npm dependencies --------------------------------------------------------------------
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  step "npm ci (node_modules missing or stale)"
  npm ci --no-audit --no-fund
fi

# ---- 2. Debian tools ------------------------------------------------------------------------
missing=()
for tool in openssl:openssl curl:curl script:bsdutils faketime:faketime zsh:zsh fish:fish prometheus-pushgateway:prometheus-pushgateway flock:util-linux containerd:containerd ctr:containerd runc:runc; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
# kubectl's bash completion script needs it (test/cli/completion-shells.test.ts).
[[ -f /usr/share/bash-completion/bash_completion ]] || missing+=(bash-completion)
if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    step "apt-get install ${missing[*]}"
    apt-get update -qq
    mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" ca-certificates
  else
    fail "missing tools: ${missing[*]} (install them, e.g. sudo apt-get install ${missing[*]})"
  fi
fi

# ---- 3. the selection -------------------------------------------------------------------------
step "the selection (vitest list --filesOnly $*)"
listing=$(npx vitest list --filesOnly "$@" | sed 's/\x1b\[[0-9;]*m//g')
# Lines are "[project] path"; the projects with a control plane per worker (vitest.config.ts).
mapfile -t selected < <(awk '{ print $NF }' <<<"$listing" | grep -E '\.test\.tsx?$' || true)
mapfile -t kube_selected < <(awk '$1 ~ /^\[(integration|fault-race|fault-race-soak)\]$/ { print $NF }' <<<"$listing")
((${#selected[@]} > 0)) || fail "vitest selects no test file for: $*"
# Markers sit in the first lines of a file: `// @kube-versions: all — why`, `// @test-tools: helm`.
# The files among $2… whose first five lines match $1.
marked() {
  local pattern=$1 file
  shift
  for file in "$@"; do head -n 5 "$file" | grep -qE "$pattern" && echo "$file"; done
  return 0
}
mapfile -t versioned < <(marked '^// @kube-versions: all( |$)' "${kube_selected[@]}")
tools=" $(for file in "${selected[@]}"; do head -n 5 "$file" | sed -n 's|^// @test-tools: *||p'; done | tr ',\n' '  ') "
printf '%d files, %d with a control plane, %d on every Kubernetes version; tools:%s\n' \
  "${#selected[@]}" "${#kube_selected[@]}" "${#versioned[@]}" "${tools% }" >&2

# The further versions: every module test/cluster/v1.MINOR, newest first.
kube_versions=()
if [[ -z ${TEST_KUBECONFIG:-} && ${#versioned[@]} -gt 0 ]]; then
  if [[ -n ${TEST_KUBE_VERSIONS:-} ]]; then
    [[ $TEST_KUBE_VERSIONS == none ]] || read -r -a kube_versions <<<"$TEST_KUBE_VERSIONS"
  elif (($# == 0)); then
    mapfile -t kube_versions < <(cd test/cluster && ls -d v1.* 2>/dev/null | sort -t. -k2,2nr)
  fi
fi

# ---- 4. what the selection needs --------------------------------------------------------------
# Against TEST_KUBECONFIG, helm is built when Go is there; without it the chart test fails naming
# test/cluster/build-helm.sh.
build_helm=false
[[ $tools == *" helm "* ]] && { [[ -z ${TEST_KUBECONFIG:-} ]] || command -v go >/dev/null; } && build_helm=true
needs_go=$build_helm
[[ -z ${TEST_KUBECONFIG:-} && ${#kube_selected[@]} -gt 0 ]] && needs_go=true
if $needs_go; then
  go_version=$(go env GOVERSION 2>/dev/null || true)
  if [[ ! $go_version =~ ^go([0-9]+)\.([0-9]+) ]] ||
    ((BASH_REMATCH[1] < 1 || (BASH_REMATCH[1] == 1 && BASH_REMATCH[2] < 26))); then
    fail "the integration tests build kube-apiserver and etcd (and helm) from Go modules and need Go >= 1.26 \
(found: ${go_version:-no go on PATH}). Install Go from https://go.dev/dl, or run against an existing \
cluster with TEST_KUBECONFIG=..., or run only the unit tests: npm run test:unit"
  fi
fi
if [[ -z ${TEST_KUBECONFIG:-} && ${#kube_selected[@]} -gt 0 ]]; then
  commands=(kube-apiserver etcd)
  [[ $tools == *" kube-controller-manager "* || $tools == *" node "* ]] && commands+=(kube-controller-manager)
  [[ $tools == *" node "* ]] && commands+=(kube-scheduler kubelet)
  step "${commands[*]} (test/cluster/build.sh; cached by go.sum)"
  bash test/cluster/build.sh "${commands[@]}"
  if [[ $tools == *" node "* ]]; then
    step "the pause image of the test node (test/cluster/node-images.sh)"
    bash test/cluster/node-images.sh >/dev/null
  fi
fi
if $build_helm; then
  step "helm (test/cluster/build-helm.sh; cached by go.sum)"
  bash test/cluster/build-helm.sh
fi
# The further versions are needed only in step 7: they build meanwhile, one after another at the
# lowest CPU priority, so a fresh machine's builds (about 5 minutes of CPU each) overlap the main
# run, which mostly waits on API servers and spawned CLIs.
versions_log=.tmp/build-versions.log
versions_build=
if ((${#kube_versions[@]} > 0)); then
  step "kube-apiserver + etcd ${kube_versions[*]} in the background (test/cluster/build.sh; cached by go.sum; log: $versions_log)"
  mkdir -p .tmp
  # What the files marked for every version need: a node's binaries only when one of them says so.
  version_commands=(kube-apiserver etcd)
  versioned_tools=" $(for file in "${versioned[@]}"; do head -n 5 "$file" | sed -n 's|^// @test-tools: *||p'; done | tr ',\n' '  ') "
  [[ $versioned_tools == *" kube-controller-manager "* || $versioned_tools == *" node "* ]] && version_commands+=(kube-controller-manager)
  [[ $versioned_tools == *" node "* ]] && version_commands+=(kube-scheduler kubelet)
  (for version in "${kube_versions[@]}"; do nice -n 19 bash test/cluster/build.sh "$version" "${version_commands[@]}" || exit 1; done) >"$versions_log" 2>&1 &
  versions_build=$!
fi

# ---- 5. build and typecheck -------------------------------------------------------------------
step "npm run build"
npm run build --silent
step "typecheck of sources and tests (tsconfig.test.json)"
npx tsc -p tsconfig.test.json

# ---- 6. tests ---------------------------------------------------------------------------------
logs=.tmp/test-cluster-logs # test/global-setup.ts copies each worker's logs to $TEST_CLUSTER_LOGS/worker-N
rm -rf "$logs"
output=$(mktemp)
trap 'rm -f "$output"' EXIT
total_passed=0 total_failed=0 total_skipped=0 overall=0
summaries=()
failures=() # "label: FAIL line" of every failed test, repeated in the closing lines (CI shows the tail)

# Tails of the control-plane logs under $1 (one directory per worker): the last warnings and
# errors (klog info lines and etcd info entries are mostly allocation noise), then the plain tail.
show_logs() {
  local dir log
  for dir in "$1"/worker-*; do
    for log in apiserver.log etcd.log controller-manager.log; do
      [[ -f $dir/$log ]] || continue
      printf '\n---- last warnings/errors in %s ----\n' "$dir/$log"
      grep -E '^[WEF][0-9]{4} |"level":"(warn|error|fatal|panic)"' "$dir/$log" | tail -n 40 || true
      printf -- '---- last 20 lines of %s ----\n' "$dir/$log"
      tail -n 20 "$dir/$log"
    done
  done
}

# Runs vitest with the given arguments (label and logs directory first), adds its counts to the
# totals, and on failure shows the logs and vitest's summary again.
run_vitest() {
  local label=$1 logs_dir=$2 status tests_line started=$SECONDS
  shift 2
  step "vitest run $* ($label)"
  set +e
  TEST_CLUSTER_LOGS=$logs_dir npx vitest run "$@" 2>&1 | tee "$output"
  status=${PIPESTATUS[0]}
  set -e
  if ((status != 0)); then
    overall=1
    show_logs "$logs_dir"
    printf '\n---- vitest summary (%s) ----\n' "$label"
    sed 's/\x1b\[[0-9;]*m//g' "$output" | grep -E '^ *(Test Files|Tests|Errors|Start at|Duration) ' || true
  fi
  tests_line=$(sed 's/\x1b\[[0-9;]*m//g' "$output" | grep -E '^ *Tests ' | tail -n 1 || true)
  local passed failed skipped
  passed=$(count passed "$tests_line") failed=$(count failed "$tests_line") skipped=$(count skipped "$tests_line")
  # A run that failed without a single failed test (a setup error) still counts as a failure.
  if ((status != 0 && failed == 0)); then failed=1; fi
  if ((status != 0)); then
    local line
    while IFS= read -r line; do failures+=("$label:$line"); done < <(
      sed 's/\x1b\[[0-9;]*m//g' "$output" | grep -E '^ *FAIL ' | sed -E 's/^ *FAIL +/ /' | sort -u | head -n 20 || true)
  fi
  total_passed=$((total_passed + passed)) total_failed=$((total_failed + failed)) total_skipped=$((total_skipped + skipped))
  summaries+=("$label: $(counts_line "$passed" "$failed" "$skipped") in $((SECONDS - started)) s")
}

count() { [[ $2 =~ ([0-9]+)\ $1 ]] && echo "${BASH_REMATCH[1]}" || echo 0; }

counts_line() {
  if (($3 > 0)); then echo "$1 passed, $2 failed, $3 skipped"; else echo "$1 passed, $2 failed"; fi
}

main_label="Kubernetes $(awk '$1 == "k8s.io/kubernetes" { print $2 }' test/cluster/go.mod)"
if (($# == 0)); then main_label+=", all tests"; else main_label+=", vitest $*"; fi
run_vitest "$main_label" "$logs" "$@"

# ---- 7. the further Kubernetes versions ---------------------------------------------------------
# The files marked `@kube-versions: all`, against control planes of that version (one per worker,
# as in the main run: TEST_CLUSTER_KUBE reaches helpers/test-cluster through the workers).
if [[ -n $versions_build ]]; then
  step "waiting for the background build of ${kube_versions[*]}"
  if ! wait "$versions_build"; then
    tail -n 40 "$versions_log" >&2
    overall=1 total_failed=$((total_failed + 1))
    summaries+=("Kubernetes ${kube_versions[*]}: the build failed (log: $versions_log)")
    kube_versions=()
  fi
fi
for version in "${kube_versions[@]}"; do
  export TEST_CLUSTER_KUBE=$version
  run_vitest "Kubernetes $version, the ${#versioned[@]} files marked @kube-versions: all" \
    "$logs/$version" "${versioned[@]}"
  unset TEST_CLUSTER_KUBE
done

# ---- 8. the closing line ------------------------------------------------------------------------
if ((${#summaries[@]} > 1)); then
  printf '\n'
  printf '%s\n' "${summaries[@]}"
fi
printf 'whole run: %d s\n' "$SECONDS"
if ((${#failures[@]} > 0)); then
  printf '\nfailed:\n'
  printf '  %s\n' "${failures[@]}"
fi
# The plain closing line CI reads, over all runs.
printf '\n%s\n' "$(counts_line "$total_passed" "$total_failed" "$total_skipped")"
exit "$overall"
