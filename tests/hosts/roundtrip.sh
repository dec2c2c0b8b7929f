#!/usr/bin/env bash
# scripts/hosts.sh up / status / down: the namespaces, addresses and tc shaping it makes, a TCP
# transfer over a link, idempotence, a failure half-way through `up` (nothing left), bad input.
export ROOFLAB_HOSTS_PREFIX=rlt ROOFLAB_HOSTS_NET=10.213.9
source "$(dirname "$0")/common.sh"

"$HOSTS_SH" down >/dev/null  # a previous run killed hard
out=$("$HOSTS_SH" up 2 --rate 200mbit)
echo "$out"
[ "$(ours | sort | tr '\n' ' ')" = "rlt-h0 rlt-h1 rlt-hub " ] || fail "expected rlt-hub, rlt-h0, rlt-h1, got: $(ours | tr '\n' ' ')"
for k in 0 1; do
  ip -n rlt-h$k -4 -o addr show dev rl0 | grep -q "inet 10.213.9.$((k + 1))/24" || fail "host $k has no address 10.213.9.$((k + 1))"
  ip -n rlt-h$k link show lo | grep -q "UP" || fail "host $k: loopback is down"
  tc -n rlt-h$k qdisc show dev rl0 | grep -q "tbf .*rate 200Mbit" || fail "host $k: no tbf at 200mbit on rl0"
  tc -n rlt-hub qdisc show dev h$k | grep -q "tbf .*rate 200Mbit" || fail "hub side of host $k: no tbf at 200mbit"
done
[[ $("$HOSTS_SH" status) == *"N=2 RATE=200mbit"* ]] || fail "status does not say N=2 RATE=200mbit"
# The link carries traffic: 4 MB over TCP from host 1 to host 0 arrive and cross host 0's rl0.
before=$(rx_bytes rlt-h0 rl0)
"$HOSTS_SH" exec 0 python3 -c '
import socket; s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.213.9.1", 5201)); s.listen(1); s.settimeout(20); c, _ = s.accept(); n = 0
while (b := c.recv(1 << 16)): n += len(b)
print(n)' >"${TMPDIR:-/tmp}/rlt_recv.$$" &
srv=$!
for i in $(seq 50); do ip netns exec rlt-h0 ss -ltn 2>/dev/null | grep -q 10.213.9.1:5201 && break; sleep 0.1; done
"$HOSTS_SH" exec 1 python3 -c '
import socket; s = socket.create_connection(("10.213.9.1", 5201), timeout=20); s.sendall(b"x" * 4000000); s.close()'
wait $srv
got=$(cat "${TMPDIR:-/tmp}/rlt_recv.$$"); rm -f "${TMPDIR:-/tmp}/rlt_recv.$$"
[ "$got" = 4000000 ] || fail "host 0 received $got bytes of 4000000"
[ $(( $(rx_bytes rlt-h0 rl0) - before )) -ge 4000000 ] || fail "the 4 MB did not cross host 0's rl0"

# Up again alike: kept; differently: replaced. (Output captured whole: a reader that stops
# early would kill `up` half-way with SIGPIPE.)
[[ $("$HOSTS_SH" up 2 --rate 200mbit) == *"already up"* ]] || fail "a second identical up did not keep the hosts"
[[ $("$HOSTS_SH" up 3 --rate off) == *replacing* ]] || fail "up with other settings did not replace the hosts"
[ "$(ours | wc -l)" = 4 ] || fail "expected 3 hosts and the hub after the replacement"
[[ $(tc -n rlt-h0 qdisc show dev rl0) != *tbf* ]] || fail "--rate off still shapes"
"$HOSTS_SH" down
check_clean

# A failure half-way through up (the test hook fails after host 1 is made): all removed.
if ROOFLAB_HOSTS_FAIL_AT=1 "$HOSTS_SH" up 3 2>"${TMPDIR:-/tmp}/rlt_err.$$"; then fail "up with ROOFLAB_HOSTS_FAIL_AT=1 succeeded"; fi
grep -q "removing what it made" "${TMPDIR:-/tmp}/rlt_err.$$" || fail "up failed without saying it cleans up: $(cat "${TMPDIR:-/tmp}/rlt_err.$$")"
rm -f "${TMPDIR:-/tmp}/rlt_err.$$"
check_clean

# Bad input: refused before anything is made.
for bad in "up 0" "up 2 --rate fast" "up 2 --delay soon" "up x" "exec 7 true" "frobnicate"; do
  # shellcheck disable=SC2086
  if "$HOSTS_SH" $bad >/dev/null 2>&1; then fail "'hosts.sh $bad' succeeded"; fi
done
check_clean
echo "hosts round trip: ok"
