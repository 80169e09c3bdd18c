#!/usr/bin/env bash
# Builds helm from the pinned Go module test/cluster/helm into test/cluster/bin/helm/helm, for the
# Helm chart tests (test/integration/helm-chart.test.ts). Same rules as build.sh: Go >= 1.26 and
# the module proxy, nothing prebuilt downloaded, cached by the module's go.mod and go.sum and the
# build's flags (a stamp beside the binary), one build at a time (a lock).
set -euo pipefail
cluster_dir=$(cd "$(dirname "$0")" && pwd)
# A directory of its own: build.sh keeps its stamps in bin/.
module_dir=$cluster_dir/helm bin_dir=$cluster_dir/bin/helm
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-trimpath
cd "$module_dir"
helm_version=$(awk '$1 == "helm.sh/helm/v4" { print $2 }' go.mod)
[[ -n $helm_version ]] || { echo "test/cluster/build-helm.sh: $module_dir/go.mod requires no helm.sh/helm/v4" >&2; exit 1; }
# The version `helm version` prints; without it a module build calls itself v4.3 (a prerelease).
ldflags="-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version"
stamp="$bin_dir/.stamp-helm-$({ cat go.mod go.sum; echo "$CGO_ENABLED $GOFLAGS $ldflags"; } | sha256sum | cut -c1-16)"
fresh() { [[ -x $bin_dir/helm && -f $stamp ]]; }
fresh && exit 0
command -v go >/dev/null || { echo "test/cluster/build-helm.sh: Go 1.26+ is required (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$bin_dir"
exec 9>"$bin_dir/.build.lock"
flock 9
fresh && exit 0
echo "building helm $helm_version (a first build takes a few minutes)..." >&2
go build -ldflags "$ldflags" -o "$bin_dir/helm.new" helm.sh/helm/v4/cmd/helm
mv -f "$bin_dir/helm.new" "$bin_dir/helm"
rm -f "$bin_dir"/.stamp-*
touch "$stamp"
