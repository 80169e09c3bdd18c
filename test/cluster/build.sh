#!/usr/bin/env bash
# Builds the test control plane from pinned Go modules:
#
#   test/cluster/build.sh                   kube-apiserver and etcd of test/cluster/go.mod
#                                           into test/cluster/bin
#   test/cluster/build.sh v1.35             the same of module test/cluster/v1.35
#                                           (test/cluster/add-version.sh) into test/cluster/bin/v1.35
#   test/cluster/build.sh [v1.35] COMMAND…  only these of kube-apiserver, etcd,
#                                           kube-controller-manager, kube-scheduler and kubelet
#                                           (the node of helpers/test-cluster start-node needs the
#                                           last three)
#
# The Kubernetes version is the one the module's go.mod requires. Each binary is cached by the
# module's go.mod and go.sum and its own go build flags (a stamp file beside it): editing this
# script rebuilds nothing unless the build itself changes. One build at a time per directory (a
# lock), so parallel test workers and runs wait for each other's build instead of racing it.
set -euo pipefail
cluster_dir=$(cd "$(dirname "$0")" && pwd)
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-trimpath
module_dir=$cluster_dir bin_dir=$cluster_dir/bin
if [[ ${1:-} == v* ]]; then
  [[ $1 =~ ^v1\.[0-9]+$ && -f $cluster_dir/$1/go.mod ]] ||
    { echo "test/cluster/build.sh: there is no module test/cluster/$1 (test/cluster/add-version.sh adds one)" >&2; exit 1; }
  module_dir=$cluster_dir/$1 bin_dir=$cluster_dir/bin/$1
  shift
fi
commands=("$@")
((${#commands[@]} > 0)) || commands=(kube-apiserver etcd)
for command in "${commands[@]}"; do
  case $command in
    kube-apiserver | etcd | kube-controller-manager | kube-scheduler | kubelet) ;;
    *) echo "test/cluster/build.sh: cannot build '$command' (kube-apiserver, etcd, kube-controller-manager, kube-scheduler or kubelet)" >&2; exit 1 ;;
  esac
done
cd "$module_dir"
kube_version=$(awk '$1 == "k8s.io/kubernetes" { print $2 }' go.mod)
[[ $kube_version =~ ^v1\.([0-9]+)\. ]] || { echo "test/cluster/build.sh: $module_dir/go.mod requires no k8s.io/kubernetes v1.x" >&2; exit 1; }
kube_minor=${BASH_REMATCH[1]}
kube_ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  kube_ldflags+=" -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$kube_minor -X $pkg.gitTreeState=clean"
done

package_of() { [[ $1 == etcd ]] && echo go.etcd.io/etcd/server/v3 || echo "k8s.io/kubernetes/cmd/$1"; }
ldflags_of() { [[ $1 == etcd ]] && echo "-s -w" || echo "$kube_ldflags"; }
stamp_of() {
  echo "$bin_dir/.stamp-$1-$({ cat go.mod go.sum; echo "$CGO_ENABLED $GOFLAGS $(ldflags_of "$1") $(package_of "$1")"; } | sha256sum | cut -c1-16)"
}
fresh() { [[ -x $bin_dir/$1 && -f $(stamp_of "$1") ]]; }

stale=()
for command in "${commands[@]}"; do fresh "$command" || stale+=("$command"); done
((${#stale[@]} > 0)) || exit 0

command -v go >/dev/null || { echo "test/cluster/build.sh: Go 1.26+ is required (https://go.dev/dl)" >&2; exit 1; }
command -v flock >/dev/null || { echo "test/cluster/build.sh: flock (util-linux) is required" >&2; exit 1; }
mkdir -p "$bin_dir"
exec 9>"$bin_dir/.build.lock"
flock 9
for command in "${stale[@]}"; do
  # Another build may have finished it while this one waited for the lock.
  fresh "$command" && continue
  echo "building $command ($kube_version module $(basename "$module_dir"); a first build takes several minutes)..." >&2
  go build -ldflags "$(ldflags_of "$command")" -o "$bin_dir/$command.new" "$(package_of "$command")"
  mv -f "$bin_dir/$command.new" "$bin_dir/$command"
  rm -f "$bin_dir/.stamp-$command-"*
  touch "$(stamp_of "$command")"
done
