#!/usr/bin/env bash
# `npm test`: everything a fresh clone needs, then all tests (unit + integration).
#
#   1. npm ci when node_modules is missing or older than package-lock.json
#   2. Debian tools the tests use (openssl, curl, script, faketime, zsh, fish, bash-completion,
#      prometheus-pushgateway),
#      installed with apt-get when root
#   3. kube-apiserver, kube-controller-manager + etcd from test/cluster, helm, and kube-apiserver +
#      etcd of every further supported Kubernetes (test/cluster/v1.*) (Go >= 1.26 and the module
#      proxy; cached)
#   4. npm run build (dist/ is what the CLI tests run), typecheck of src + tests
#   5. vitest run; on failure the tails of the control-plane logs, then vitest's summary again
#   6. the kube-facing integration files once more against each further Kubernetes version
#   7. one closing line "N passed, N failed" over all runs
#
# Extra arguments go to vitest, e.g. `npm test -- --project unit` or a file filter; with them,
# step 6 runs only for the versions named in TEST_KUBE_VERSIONS. TEST_KUBE_VERSIONS="v1.30 v1.34"
# picks versions, "none" skips step 6. With TEST_KUBECONFIG (an existing cluster) there is no
# step 6.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*" >&2; }
fail() { printf '\nrun-tests: %s\n' "$*" >&2; exit 1; }

# ---- 1. npm dependencies --------------------------------------------------------------------
if [[ ! -f node_modules/.package-lock.json || package-lock.json -nt node_modules/.package-lock.json ]]; then
  step "npm ci (node_modules missing or stale)"
  npm ci --no-audit --no-fund
fi

# ---- 2. Debian tools ------------------------------------------------------------------------
missing=()
for tool in openssl:openssl curl:curl script:bsdutils faketime:faketime zsh:zsh fish:fish prometheus-pushgateway:prometheus-pushgateway; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
# kubectl's bash completion script needs it (test/cli/completion-shells.test.ts).
[[ -f /usr/share/bash-completion/bash_completion ]] || missing+=(bash-completion)
if ((${#missing[@]} > 0)); then
  if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
    step "apt-get install ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" ca-certificates
  else
    fail "missing tools: ${missing[*]} (install them, e.g. sudo apt-get install ${missing[*]})"
  fi
fi

# ---- 3. the test control plane ----------------------------------------------------------------
if [[ -z ${TEST_KUBECONFIG:-} ]]; then
  go_version=$(go env GOVERSION 2>/dev/null || true)
  if [[ ! $go_version =~ ^go([0-9]+)\.([0-9]+) ]] ||
    ((BASH_REMATCH[1] < 1 || (BASH_REMATCH[1] == 1 && BASH_REMATCH[2] < 26))); then
    fail "the integration tests build kube-apiserver and etcd from Go modules and need Go >= 1.26 \
(found: ${go_version:-no go on PATH}). Install Go from https://go.dev/dl, or run against an existing \
cluster with TEST_KUBECONFIG=..., or run only the unit tests: npm run test:unit"
  fi
  step "kube-apiserver, kube-controller-manager + etcd (test/cluster/build.sh; cached after the first build)"
  bash test/cluster/build.sh
fi
# helm for the chart test (test/integration/helm-chart.test.ts), also against TEST_KUBECONFIG when
# Go is there; without it that test fails naming this script.
if [[ -z ${TEST_KUBECONFIG:-} ]] || command -v go >/dev/null; then
  step "helm (test/cluster/build-helm.sh; cached after the first build)"
  bash test/cluster/build-helm.sh
fi

# The further versions: every module test/cluster/v1.MINOR, newest first.
kube_versions=()
if [[ -z ${TEST_KUBECONFIG:-} ]]; then
  if [[ -n ${TEST_KUBE_VERSIONS:-} ]]; then
    [[ $TEST_KUBE_VERSIONS == none ]] || read -r -a kube_versions <<<"$TEST_KUBE_VERSIONS"
  elif (($# == 0)); then
    mapfile -t kube_versions < <(cd test/cluster && ls -d v1.* 2>/dev/null | sort -t. -k2,2nr)
  fi
fi
for version in "${kube_versions[@]}"; do
  step "kube-apiserver + etcd $version (test/cluster/build.sh $version; cached after the first build)"
  bash test/cluster/build.sh "$version"
done

# ---- 4. build and typecheck -------------------------------------------------------------------
step "npm run build"
npm run build --silent
step "typecheck of sources and tests (tsconfig.test.json)"
npx tsc -p tsconfig.test.json

# ---- 5. tests ---------------------------------------------------------------------------------
logs=.tmp/test-cluster-logs # global-setup copies the logs of the main run here
rm -rf "$logs"
output=$(mktemp)
trap 'rm -f "$output"' EXIT
total_passed=0 total_failed=0 total_skipped=0 overall=0
summaries=()

# Tails of the control-plane logs in $1: the last warnings and errors (klog info lines and etcd
# info entries are mostly allocation noise), then the plain tail.
show_logs() {
  for log in apiserver.log etcd.log controller-manager.log; do
    [[ -f $1/$log ]] || continue
    printf '\n---- last warnings/errors in %s ----\n' "$1/$log"
    grep -E '^[WEF][0-9]{4} |"level":"(warn|error|fatal|panic)"' "$1/$log" | tail -n 40 || true
    printf -- '---- last 20 lines of %s ----\n' "$1/$log"
    tail -n 20 "$1/$log"
  done
}

# Runs vitest with the given arguments (label first), adds its counts to the totals, and on
# failure shows the logs in $logs_dir and vitest's summary again.
run_vitest() {
  local label=$1 logs_dir=$2 status tests_line
  shift 2
  step "vitest run $* ($label)"
  set +e
  npx vitest run "$@" 2>&1 | tee "$output"
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
  total_passed=$((total_passed + passed)) total_failed=$((total_failed + failed)) total_skipped=$((total_skipped + skipped))
  summaries+=("$label: $(counts_line "$passed" "$failed" "$skipped")")
}

count() { [[ $2 =~ ([0-9]+)\ $1 ]] && echo "${BASH_REMATCH[1]}" || echo 0; }

counts_line() {
  if (($3 > 0)); then echo "$1 passed, $2 failed, $3 skipped"; else echo "$1 passed, $2 failed"; fi
}

main_label="Kubernetes $(awk '$1 == "k8s.io/kubernetes" { print $2 }' test/cluster/go.mod)"
if (($# == 0)); then main_label+=", all tests"; else main_label+=", vitest $*"; fi
run_vitest "$main_label" "$logs" "$@"

# ---- 6. the further Kubernetes versions ---------------------------------------------------------
# The files that talk to kube-apiserver, against a control plane of that version. The CronJob test
# needs kube-controller-manager, built for the default version only.
kube_facing=(test/integration/{kube-*,init-nodes,sync-lb-*,plan-*,rbac,run,cleanup,sandbox-pass}.test.ts)
for version in "${kube_versions[@]}"; do
  cluster=$(mktemp -d "${TMPDIR:-/tmp}/ccm-test-cluster-$version-XXXXXX")
  version_logs="$logs/$version"
  step "control plane $version (helpers/test-cluster start, TEST_CLUSTER_KUBE=$version)"
  if TEST_CLUSTER_KUBE=$version bash helpers/test-cluster start "$cluster/cluster"; then
    TEST_CLUSTER_KUBE=$version TEST_KUBECONFIG=$cluster/cluster/kubeconfig \
      TEST_KUBECONFIG_NOACCESS=$cluster/cluster/kubeconfig-noaccess \
      run_vitest "Kubernetes $version, kube-facing tests" "$cluster/cluster" --project integration "${kube_facing[@]}"
  else
    overall=1 total_failed=$((total_failed + 1))
    summaries+=("Kubernetes $version: the control plane did not start")
  fi
  mkdir -p "$version_logs"
  cp "$cluster"/cluster/*.log "$version_logs/" 2>/dev/null || true
  bash helpers/test-cluster stop "$cluster/cluster"
  rmdir "$cluster" 2>/dev/null || true
done

# ---- 7. the closing line ------------------------------------------------------------------------
if ((${#summaries[@]} > 1)); then
  printf '\n'
  printf '%s\n' "${summaries[@]}"
fi
# The plain closing line CI reads, over all runs.
printf '\n%s\n' "$(counts_line "$total_passed" "$total_failed" "$total_skipped")"
exit "$overall"
