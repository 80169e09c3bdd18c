#!/usr/bin/env bash
# Builds helm from the pinned Go module test/cluster/helm into test/cluster/bin/helm/helm, for the
# Helm chart tests (test/integration/helm-chart.test.ts). Same rules as build.sh: Go >= 1.26 and
# the module proxy, nothing prebuilt downloaded, and a build whose go.mod/go.sum/script stamp
# matches is reused.
set -euo pipefail
cluster_dir=$(cd "$(dirname "$0")" && pwd)
# A directory of its own: build.sh clears the stamps in bin/ when it rebuilds the control plane.
module_dir=$cluster_dir/helm bin_dir=$cluster_dir/bin/helm
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-trimpath
cd "$module_dir"
helm_version=$(awk '$1 == "helm.sh/helm/v4" { print $2 }' go.mod)
[[ -n $helm_version ]] || { echo "test/cluster/build-helm.sh: $module_dir/go.mod requires no helm.sh/helm/v4" >&2; exit 1; }
stamp="$bin_dir/.stamp-$(cat go.mod go.sum "$cluster_dir/build-helm.sh" | sha256sum | cut -c1-16)"
if [[ -x $bin_dir/helm && -f $stamp ]]; then
  exit 0
fi
command -v go >/dev/null || { echo "test/cluster/build-helm.sh: Go 1.26+ is required (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$bin_dir"
echo "building helm $helm_version (a first build takes a few minutes)..." >&2
# The version `helm version` prints; without it a module build calls itself v4.3 (a prerelease).
go build -ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$helm_version" -o "$bin_dir/helm" helm.sh/helm/v4/cmd/helm
rm -f "$bin_dir"/.stamp-*
touch "$stamp"
