#!/usr/bin/env bash
# The view of the machine that a container of a Pod has, for the test kubelet
# (test/support/kubelet.ts): its own /run holding the Pod's volumes, a read-only root when the
# container asks for readOnlyRootFilesystem, its user and group, no capabilities and no
# privilege escalation. Runs as root, inside a private mount namespace, so nothing of this is
# seen outside the one process:
#
#   unshare --mount --propagation private bash container-sandbox.sh \
#     UID GID ro|rw WORKDIR SOURCE_DIR:MOUNT_PATH... -- COMMAND ARGS...
#
# WORKDIR is entered once the mounts are in place (it may lie in one of them).
#
# Mount paths must lie under /run (or /var/run, its link): that is where a Pod's service
# account volume goes, and the fresh /run keeps the host's own /run out of sight.
set -euo pipefail

die() { echo "container-sandbox: $*" >&2; exit 125; }

(($# >= 6)) || die "usage: container-sandbox.sh UID GID ro|rw WORKDIR SOURCE:MOUNT_PATH... -- COMMAND..."
uid=$1 gid=$2 root_mode=$3 workdir=$4
shift 4
mounts=()
while (($# > 0)) && [[ $1 != -- ]]; do
  mounts+=("$1")
  shift
done
(($# > 1)) || die "no command after --"
shift

# Only in a mount namespace of our own: these mounts would otherwise change the host.
[[ $(readlink /proc/self/ns/mnt) != "$(readlink /proc/1/ns/mnt)" ]] ||
  die "not in a private mount namespace (run it under unshare --mount)"

mount -t tmpfs -o mode=0755,size=4m container-run /run
for entry in "${mounts[@]}"; do
  source=${entry%%:*} target=${entry#*:}
  [[ $target == /run/* || $target == /var/run/* ]] || die "mount path $target is not under /run"
  mkdir -p "$target"
  mount --bind -o ro "$source" "$target"
done
if [[ $root_mode == ro ]]; then
  mount -o remount,bind,ro /
fi
cd "$workdir" || die "working directory $workdir does not exist in the container"
exec setpriv --reuid="$uid" --regid="$gid" --clear-groups --no-new-privs \
  --inh-caps=-all --bounding-set=-all -- "$@"
