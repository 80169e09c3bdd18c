#!/usr/bin/env bash
# Builds kube-apiserver, kube-controller-manager and etcd from the pinned Go modules into
# test/cluster/bin.
# Idempotent: a build whose go.mod/go.sum stamp matches is reused.
set -euo pipefail
cd "$(dirname "$0")"
export CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-trimpath
KUBE_VERSION=v1.36.3
KUBE_MINOR=36
stamp="bin/.stamp-$(cat go.mod go.sum build.sh | sha256sum | cut -c1-16)"
if [[ -x bin/kube-apiserver && -x bin/kube-controller-manager && -x bin/etcd && -f $stamp ]]; then
  exit 0
fi
command -v go >/dev/null || { echo "test/cluster/build.sh: Go 1.26+ is required (https://go.dev/dl)" >&2; exit 1; }
mkdir -p bin
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags+=" -X $pkg.gitVersion=$KUBE_VERSION -X $pkg.gitMajor=1 -X $pkg.gitMinor=$KUBE_MINOR -X $pkg.gitTreeState=clean"
done
echo "building kube-apiserver, kube-controller-manager $KUBE_VERSION and etcd (first build takes several minutes)..." >&2
go build -ldflags "$ldflags" -o bin/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
# Only the CronJob test starts it (helpers/test-cluster start-controllers).
go build -ldflags "$ldflags" -o bin/kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
go build -ldflags "-s -w" -o bin/etcd go.etcd.io/etcd/server/v3
rm -f bin/.stamp-*
touch "$stamp"
