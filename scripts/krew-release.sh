#!/usr/bin/env bash
# Builds the release tarball of the kubectl plugin and its filled-in krew manifest:
#
#   scripts/krew-release.sh URL_PREFIX [OUT_DIR]
#
# OUT_DIR (default .tmp/krew) receives cloudscale-ccm-kubectl-vVERSION.tar.gz, the npm package
# (`npm pack`) with its production dependencies installed under package/node_modules (the
# versions of package-lock.json), since krew installs a tarball as it is; and cloudscale.yaml,
# deploy/krew/cloudscale.yaml with the version, URL_PREFIX/<tarball> and the tarball's sha256
# filled in. Upload the tarball to URL_PREFIX, then submit the manifest to the krew index (or
# serve it: kubectl krew install --manifest=…).
set -euo pipefail
cd "$(dirname "$0")/.."
(($# >= 1)) || { echo "usage: scripts/krew-release.sh URL_PREFIX [OUT_DIR]" >&2; exit 1; }
url_prefix=${1%/}
out=${2:-.tmp/krew}
version=$(node -p "require('./package.json').version")
tarball=cloudscale-ccm-kubectl-v$version.tar.gz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mkdir -p "$out"
npm pack --silent --pack-destination "$work" >/dev/null
tar -xzf "$work"/cloudscale-ccm-"$version".tgz -C "$work"
# The versions of the checkout's lockfile, which npm pack leaves out.
cp package-lock.json "$work/package/"
(cd "$work/package" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --silent)
# Fixed owner and times: the same sources give the same sha256.
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -cf - -C "$work" package | gzip -n >"$out/$tarball"
sha256=$(sha256sum "$out/$tarball" | cut -d' ' -f1)
sed -e "s|@VERSION@|$version|g" -e "s|@URI@|$url_prefix/$tarball|" -e "s|@SHA256@|$sha256|" \
  deploy/krew/cloudscale.yaml >"$out/cloudscale.yaml"
echo "$out/$tarball  sha256 $sha256"
echo "$out/cloudscale.yaml"
