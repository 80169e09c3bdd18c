#!/usr/bin/env bash
# Creates the Go module of one Kubernetes version for the test control plane and its node:
#
#   test/cluster/add-version.sh 1.35.4            writes test/cluster/v1.35/go.mod and go.sum:
#                                                 a further version the suite runs
#   test/cluster/add-version.sh --default 1.38.0  moves the default module (test/cluster/go.mod)
#                                                 to test/cluster/v1.<its minor>/ and writes the
#                                                 new default in its place
#
# The module requires k8s.io/kubernetes at that version with every staging module it replaces
# with a local directory replaced by the published module of the same release (v0.35.4), and
# etcd's server at the version that release's k8s.io/apiserver selects. Its tools are everything
# test/cluster/build.sh builds: kube-apiserver, etcd, kube-controller-manager, kube-scheduler and
# kubelet. Run once per version; commit go.mod and go.sum (docs/kubernetes-versions.md).
set -euo pipefail
usage() { echo "usage: test/cluster/add-version.sh [--default] 1.MINOR.PATCH" >&2; exit 1; }
make_default=false
if [[ ${1:-} == --default ]]; then make_default=true; shift; fi
[[ $# -eq 1 && $1 =~ ^1\.([0-9]+)\.[0-9]+$ ]] || usage
version=$1 minor=${BASH_REMATCH[1]}
cluster_dir="$(cd "$(dirname "$0")" && pwd)"
export GOTOOLCHAIN=local GOFLAGS=-trimpath
command -v jq >/dev/null || { echo "test/cluster/add-version.sh: jq is required (apt-get install jq)" >&2; exit 1; }

if $make_default; then
  dir=$cluster_dir
  if [[ -f $dir/go.mod ]]; then
    old=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' "$dir/go.mod")
    [[ $old =~ ^v1\.([0-9]+)\. ]] || { echo "test/cluster/add-version.sh: test/cluster/go.mod requires no k8s.io/kubernetes v1.x" >&2; exit 1; }
    old_minor=${BASH_REMATCH[1]}
    ((old_minor < minor)) || { echo "test/cluster/add-version.sh: the default is $old already; a new default must be a newer minor" >&2; exit 1; }
    [[ ! -e $dir/v1.$old_minor ]] || { echo "test/cluster/add-version.sh: test/cluster/v1.$old_minor exists; remove it first" >&2; exit 1; }
    mkdir "$dir/v1.$old_minor"
    mv "$dir/go.mod" "$dir/go.sum" "$dir/v1.$old_minor/"
    echo "test/cluster/v1.$old_minor: the former default ($old)" >&2
  fi
else
  dir=$cluster_dir/v1.$minor
  mkdir -p "$dir"
fi
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
for command in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
  go get -tool "k8s.io/kubernetes/cmd/$command@v$version"
done
etcd=$(go list -m -f '{{.Version}}' go.etcd.io/etcd/server/v3)
go get -tool "go.etcd.io/etcd/server/v3@$etcd"
echo "test/cluster/$(basename "$dir" | sed 's/^cluster$/ (default)/'): Kubernetes v$version, etcd $etcd" >&2
