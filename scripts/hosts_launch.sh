#!/bin/sh
# MPICH hydra's launcher for the emulated hosts of scripts/hosts.sh (given as
# `mpiexec -launcher ssh -launcher-exec scripts/hosts_launch.sh`): hydra calls it as ssh,
#   hosts_launch.sh [-x] HOST COMMAND...
# with HOST a namespace PREFIX-hK, and it runs COMMAND (hydra's proxy) in that namespace, as
# ssh would on a remote host (the words joined and given to a shell).
# One machine under many namespaces is still one boot: UCX (MPICH's ch4 transport) pairs
# processes over shared memory when their boot ids match (ucs_get_system_id), which would
# carry "inter-node" messages around the emulated links. So each host also gets its own
# mount and UTS namespace, with its own boot id (/run/rooflab-hosts/HOST.boot_id, written by
# `hosts.sh up`) bound over /proc/sys/kernel/random/boot_id, and its own hostname: ranks on one
# host share memory, ranks on two hosts talk TCP over the shaped veth links.
[ "$1" = -x ] && shift
host=$1; shift
prefix=${ROOFLAB_HOSTS_PREFIX:-rl}
case $host in
  "$prefix"-h[0-9]*) ;;
  *) echo "hosts_launch.sh: '$host' is not an emulated host ($prefix-hK); use scripts/hosts.sh mpiexec" >&2; exit 1 ;;
esac
boot=/run/rooflab-hosts/$host.boot_id
[ -f "$boot" ] || { echo "hosts_launch.sh: $boot is missing (scripts/hosts.sh up N)" >&2; exit 1; }
exec ip netns exec "$host" unshare --mount --uts --propagation private sh -c \
  "mount --bind $boot /proc/sys/kernel/random/boot_id && hostname $host && exec $*"
