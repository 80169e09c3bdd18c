#!/usr/bin/env bash
# Builds the test control plane from pinned Go modules:
#
#   test/cluster/build.sh          the Kubernetes of test/cluster/go.mod: kube-apiserver,
#                                  kube-controller-manager and etcd into test/cluster/bin
#   test/cluster/build.sh v1.35    the module test/cluster/v1.35 (test/cluster/add-version.sh):
#                                  kube-apiserver and etcd into test/cluster/bin/v1.35
#
# The Kubernetes version is the one the module's go.mod requires. Idempotent: a build whose
# go.mod/go.sum/build.sh stamp matches is reused.
set -euo pipefail
cluster_dir=$(cd "$(dirname "$0")" && pwd)
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-trimpath
if (($# == 0)); then
  module_dir=$cluster_dir bin_dir=$cluster_dir/bin
  # kube-controller-manager: only the CronJob test starts it (helpers/test-cluster start-controllers).
  commands=(kube-apiserver kube-controller-manager)
elif [[ $1 =~ ^v1\.[0-9]+$ && -f $cluster_dir/$1/go.mod ]]; then
  module_dir=$cluster_dir/$1 bin_dir=$cluster_dir/bin/$1 commands=(kube-apiserver)
else
  echo "test/cluster/build.sh: there is no module test/cluster/$1 (test/cluster/add-version.sh adds one)" >&2
  exit 1
fi
cd "$module_dir"
kube_version=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' go.mod)
[[ $kube_version =~ ^v1\.([0-9]+)\. ]] || { echo "test/cluster/build.sh: $module_dir/go.mod requires no k8s.io/kubernetes v1.x" >&2; exit 1; }
kube_minor=${BASH_REMATCH[1]}
stamp="$bin_dir/.stamp-$(cat go.mod go.sum "$cluster_dir/build.sh" | sha256sum | cut -c1-16)"
complete=true
for binary in "${commands[@]}" etcd; do [[ -x $bin_dir/$binary ]] || complete=false; done
if $complete && [[ -f $stamp ]]; then
  exit 0
fi
command -v go >/dev/null || { echo "test/cluster/build.sh: Go 1.26+ is required (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$bin_dir"
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor -X $pkg.gitTreeState=clean"
done
echo "building ${commands[*]} $kube_version and etcd (a first build takes several minutes)..." >&2
for command in "${commands[@]}"; do
  go build -ldflags "$ldflags" -o "$bin_dir/$command" "k8s.io/kubernetes/cmd/$command"
done
go build -ldflags "-s -w" -o "$bin_dir/etcd" go.etcd.io/etcd/server/v3
rm -f "$bin_dir"/.stamp-*
touch "$stamp"
