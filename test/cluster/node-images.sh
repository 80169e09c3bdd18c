#!/usr/bin/env bash
# Builds the pod-sandbox ("pause") image of the test node, which can pull nothing:
#
#   test/cluster/node-images.sh        writes test/cluster/bin/pause.tar (an OCI image layout,
#                                      packed as `ctr images import` takes it, tagged `test`)
#                                      and prints its path
#
# The image holds one static program, test/cluster/pause/main.go. Cached: rebuilt only when that
# program or this script changes (a stamp file beside it). Needs Go (and no module download).
set -euo pipefail
cluster_dir=$(cd "$(dirname "$0")" && pwd)
bin_dir=$cluster_dir/bin
out=$bin_dir/pause.tar
stamp="$bin_dir/.stamp-pause-$(cat "$cluster_dir/pause/main.go" "$0" | sha256sum | cut -c1-16)"
if [[ -f $out && -f $stamp ]]; then echo "$out"; exit 0; fi
command -v go >/dev/null || { echo "test/cluster/node-images.sh: Go is required (https://go.dev/dl)" >&2; exit 1; }
mkdir -p "$bin_dir"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/rootfs" "$work/oci/blobs/sha256"
# A module of its own: the program needs the standard library only.
(cd "$cluster_dir/pause" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-trimpath GO111MODULE=off \
  go build -ldflags "-s -w" -o "$work/rootfs/pause" main.go)
tar --create --file="$work/layer.tar" --directory="$work/rootfs" --sort=name --mtime=@0 \
  --owner=0 --group=0 --numeric-owner --format=posix --pax-option=delete=atime,delete=ctime pause
diff_id=$(sha256sum "$work/layer.tar" | cut -d' ' -f1)
gzip -n -9 <"$work/layer.tar" >"$work/layer.tar.gz"
blob() { # FILE -> digest and size, the file moved into the layout
  local digest size
  digest=$(sha256sum "$1" | cut -d' ' -f1) size=$(stat -c %s "$1")
  mv "$1" "$work/oci/blobs/sha256/$digest"
  echo "$digest $size"
}
read -r layer_digest layer_size < <(blob "$work/layer.tar.gz")
printf '{"architecture":"%s","os":"linux","config":{"Entrypoint":["/pause"],"User":"65535:65535"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]}}' \
  "$(go env GOARCH)" "$diff_id" >"$work/config.json"
read -r config_digest config_size < <(blob "$work/config.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:%s","size":%s},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:%s","size":%s}]}' \
  "$config_digest" "$config_size" "$layer_digest" "$layer_size" >"$work/manifest.json"
read -r manifest_digest manifest_size < <(blob "$work/manifest.json")
printf '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:%s","size":%s,"annotations":{"org.opencontainers.image.ref.name":"test"}}]}' \
  "$manifest_digest" "$manifest_size" >"$work/oci/index.json"
printf '{"imageLayoutVersion":"1.0.0"}' >"$work/oci/oci-layout"
tar --create --file="$out.new" --directory="$work/oci" --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner .
mv -f "$out.new" "$out"
rm -f "$bin_dir"/.stamp-pause-*
touch "$stamp"
echo "$out"
