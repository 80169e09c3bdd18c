#!/usr/bin/env bash
# Creates the Go module of one more Kubernetes version for the test control plane:
#
#   test/cluster/add-version.sh 1.35.4     writes test/cluster/v1.35/go.mod and go.sum
#
# The module requires k8s.io/kubernetes at that version with every staging module it replaces
# with a local directory replaced by the published module of the same release (v0.35.4), and
# etcd's server at the version that release's k8s.io/apiserver selects. test/cluster/build.sh
# v1.35 then builds its kube-apiserver and etcd. Run once per version; commit go.mod and go.sum.
set -euo pipefail
[[ $# -eq 1 && $1 =~ ^1\.([0-9]+)\.[0-9]+$ ]] || { echo "usage: test/cluster/add-version.sh 1.MINOR.PATCH" >&2; exit 1; }
version=$1 minor=${BASH_REMATCH[1]}
dir="$(cd "$(dirname "$0")" && pwd)/v1.$minor"
export GOTOOLCHAIN=local GOFLAGS=-trimpath
mkdir -p "$dir"
cd "$dir"
rm -f go.mod go.sum
go mod init testcluster
# k8s.io/kubernetes' own go.mod lists its staging modules as `=> ./staging/src/...` replacements.
kubernetes_gomod=$(go mod download -json "k8s.io/kubernetes@v$version" | jq -r .GoMod)
# The Go version that release declares, not this toolchain's: any Go from there on builds it.
go mod edit -go="$(awk '$1 == "go" { print $2 }' "$kubernetes_gomod")"
for module in $(sed -n 's|^[[:space:]]*\(k8s.io/[^ ]*\) => ./staging/.*|\1|p' "$kubernetes_gomod"); do
  go mod edit -replace="$module=$module@v0.$minor.${version##*.}"
done
go get -tool "k8s.io/kubernetes/cmd/kube-apiserver@v$version"
etcd=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
go get -tool "go.etcd.io/etcd/server/v3@$etcd"
echo "test/cluster/v1.$minor: kube-apiserver v$version, etcd $etcd" >&2
