# Shared by the emulated-hosts tests (sourced): skip (exit 77, CTest SKIP_RETURN_CODE) where
# namespaces cannot be made, tear down on every exit, and the checks that nothing is left.
# Each test uses its own ROOFLAB_HOSTS_PREFIX / ROOFLAB_HOSTS_NET, so it never touches hosts a
# user has up, and tests can run in parallel.
set -euo pipefail
HOSTS_SH=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)/scripts/hosts.sh
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || skip "not root: network namespaces need root"
command -v ip >/dev/null && command -v tc >/dev/null || skip "no iproute2 (ip, tc): scripts/install_deps.sh installs it"
# In a chroot (CI's fresh Debian root) `ip netns add` would mount /run/netns inside the
# chroot's tree, which then could not be removed with it. A chroot into a plain directory
# (scripts/fresh_root.sh) sees no mount at "/" in its mountinfo (/proc/1/root, the usual
# test, may be unreadable even to root).
awk '$5 == "/" {found = 1} END {exit !found}' /proc/self/mountinfo \
  || skip "in a chroot: ip netns would leave its /run/netns mount in the chroot's tree"
ip netns list >/dev/null 2>&1 || skip "'ip netns' does not work here: $(ip netns list 2>&1 | head -1)"

ours() { ip netns list | awk '{print $1}' | grep -E "^${ROOFLAB_HOSTS_PREFIX}-" || true; }
# The namespace the tests start from: its links and addresses, which hosts.sh must not change.
root_net() { ip -o link show | awk -F': ' '{print $2}' | sort; ip -o addr show | awk '{print $2, $4}' | sort; }
ROOT_BEFORE=$(root_net)
teardown() {
  local rc=$?
  "$HOSTS_SH" down >/dev/null 2>&1 || true
  exit "$rc"
}
trap teardown EXIT
# Nothing of this prefix is left, and the starting namespace is as it was.
check_clean() {
  [ -z "$(ours)" ] || fail "namespaces left behind: $(ours | tr '\n' ' ')"
  ! ls /run/rooflab-hosts/"$ROOFLAB_HOSTS_PREFIX".env /run/rooflab-hosts/"$ROOFLAB_HOSTS_PREFIX"-h*.boot_id 2>/dev/null \
    || fail "state files left behind in /run/rooflab-hosts"
  [ "$(root_net)" = "$ROOT_BEFORE" ] || fail "the starting namespace's links or addresses changed:
$(diff <(echo "$ROOT_BEFORE") <(root_net))"
}
# Received bytes of interface $2 in namespace $1.
rx_bytes() { ip -n "$1" -s link show "$2" | awk 'f {print $1; exit} /RX:/ {f = 1}'; }
