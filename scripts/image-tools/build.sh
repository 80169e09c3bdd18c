#!/usr/bin/env bash
# Builds crane (github.com/google/go-containerregistry, pinned in scripts/image-tools/go.mod)
# into .tmp/tools/crane and prints its path. crane pushes the OCI layout of `npm run image` to
# a registry and answers with the digest to pin (docs/deploy.md, "The image"); the image test
# (test/cli/image.test.ts) pushes to a `crane registry serve` on loopback. Idempotent: a build
# whose go.mod/go.sum/build.sh stamp matches is reused. Needs Go and the Go module proxy.
set -euo pipefail
module_dir=$(cd "$(dirname "$0")" && pwd)
bin_dir=$(cd "$module_dir/../.." && pwd)/.tmp/tools
stamp="$bin_dir/.crane-$(cat "$module_dir/go.mod" "$module_dir/go.sum" "$module_dir/build.sh" | sha256sum | cut -c1-16)"
if [[ ! -x $bin_dir/crane || ! -f $stamp ]]; then
  command -v go >/dev/null || { echo "scripts/image-tools/build.sh: Go is required (https://go.dev/dl)" >&2; exit 1; }
  mkdir -p "$bin_dir"
  (cd "$module_dir" && CGO_ENABLED=0 GOTOOLCHAIN=local GOFLAGS=-trimpath go build -ldflags "-s -w" -o "$bin_dir/crane" github.com/google/go-containerregistry/cmd/crane)
  rm -f "$bin_dir"/.crane-*
  touch "$stamp"
fi
echo "$bin_dir/crane"
