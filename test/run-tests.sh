#!/usr/bin/env bash
# `npm test`: everything a fresh clone needs, then all tests (unit + integration).
#
#   1. npm ci when node_modules is missing or older than package-lock.json
#   2. Debian tools the tests use (openssl, curl, script), installed with apt-get when root
#   3. kube-apiserver, kube-controller-manager + etcd from test/cluster (Go >= 1.26 and the module
#      proxy; cached)
#   4. npm run build (dist/ is what the CLI tests run), typecheck of src + tests
#   5. vitest run; on failure the tails of the control-plane logs, then vitest's summary again
#
# Extra arguments go to vitest, e.g. `npm test -- --project unit` or a file filter.
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
for tool in openssl:openssl curl:curl script:bsdutils; do
  command -v "${tool%%:*}" >/dev/null || missing+=("${tool#*:}")
done
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

# ---- 4. build and typecheck -------------------------------------------------------------------
step "npm run build"
npm run build --silent
step "typecheck of sources and tests (tsconfig.test.json)"
npx tsc -p tsconfig.test.json

# ---- 5. tests ---------------------------------------------------------------------------------
step "vitest run $*"
rm -rf .tmp/test-cluster-logs # global-setup copies the logs of this run here
output=$(mktemp)
trap 'rm -f "$output"' EXIT
set +e
npx vitest run "$@" 2>&1 | tee "$output"
status=${PIPESTATUS[0]}
set -e
if ((status != 0)); then
  logs=.tmp/test-cluster-logs
  for log in apiserver.log etcd.log controller-manager.log; do
    [[ -f $logs/$log ]] || continue
    # klog info lines (I...) and etcd info entries are mostly allocation noise: show the last
    # warnings and errors, then the plain tail.
    printf '\n---- last warnings/errors in %s ----\n' "$logs/$log"
    grep -E '^[WEF][0-9]{4} |"level":"(warn|error|fatal|panic)"' "$logs/$log" | tail -n 40 || true
    printf -- '---- last 20 lines of %s ----\n' "$logs/$log"
    tail -n 20 "$logs/$log"
  done
  printf '\n---- vitest summary ----\n'
  sed 's/\x1b\[[0-9;]*m//g' "$output" | grep -E '^ *(Test Files|Tests|Errors|Start at|Duration) ' || true
fi
# The plain closing line CI reads: "N passed, N failed[, N skipped]" from vitest's Tests line.
tests_line=$(sed 's/\x1b\[[0-9;]*m//g' "$output" | grep -E '^ *Tests ' | tail -n 1 || true)
count() { [[ $tests_line =~ ([0-9]+)\ $1 ]] && echo "${BASH_REMATCH[1]}" || echo 0; }
if [[ -n $tests_line ]]; then
  skipped=$(count skipped)
  printf '\n%s passed, %s failed%s\n' "$(count passed)" "$(count failed)" "$( ((skipped > 0)) && echo ", $skipped skipped")"
fi
exit "$status"
