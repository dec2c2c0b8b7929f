#!/usr/bin/env bash
# Real MPICH across two emulated hosts: `rooflab mpi --hosts 2 --ranks-per-host 2` runs coffee
# verified on 2 nodes of 2 ranks; `hosts.sh measure` shows the inter-node link shaped (beta at
# most the tbf rate, its bytes on the veth) and the intra-node path on shared memory (faster
# than the link, nothing on the veth); a failing run leaves the hosts to the teardown, which
# leaves nothing.
#   tests/hosts/mpi.sh ROOFLAB ROOFLAB_MPI TMPDIR
export ROOFLAB_HOSTS_PREFIX=rlm ROOFLAB_HOSTS_NET=10.213.8
source "$(dirname "$0")/common.sh"
rooflab=$1 tmp=$3
export ROOFLAB_MPI_BIN=$2
rm -rf "$tmp" && mkdir -p "$tmp"

"$HOSTS_SH" down >/dev/null
"$HOSTS_SH" up 2 --rate 1gbit
before=$(rx_bytes rlm-h1 rl0)
"$rooflab" mpi --hosts 2 --ranks-per-host 2 --design coffee --size 37x53 --chunks 2 --iters 2 --verify \
  --out "$tmp/coffee" >/dev/null
python3 - "$tmp/coffee/sinkhorn_mpi.json" <<'PY' || fail "the coffee run's JSON"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verification"]["ok"], j["verification"]
assert (j["ranks"], j["nodes"], j["ranks_per_node"]) == (4, 2, 2), (j["ranks"], j["nodes"], j["ranks_per_node"])
assert j["nodes_emulated"] is False  # the nodes are the hosts, as MPI reports them
for k in ("comm_intra_node_time_per_iter_s", "comm_inter_node_time_per_iter_s"):
    assert 0 < j[k] <= j["comm_time_per_iter_s"] * 1.0001 + 1e-6, (k, j[k], j["comm_time_per_iter_s"])
PY
# The gather of the verification alone moves host 1's 18 rows x 53 doubles to rank 0.
[ $(( $(rx_bytes rlm-h1 rl0) - before )) -gt 2000 ] || fail "no traffic crossed host 1's link"

lo_before=$(rx_bytes rlm-h0 lo) link_before=$(rx_bytes rlm-h1 rl0)
"$HOSTS_SH" measure "$tmp/links"
python3 - "$tmp/links/hosts_links.json" <<'PY' || fail "hosts_links.json"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["schema"] == "rooflab.hosts_links/1" and j["hosts"] == 2 and j["rate"] == "1gbit", j
l = {x["path"]: x for x in j["links"]}
inter, intra = l["inter-node"], l["intra-node"]
assert (inter["from"], inter["to"]) == ("rlm-h0", "rlm-h1"), inter
# tbf at 1 gbit/s both ends: large messages cannot beat 125 MB/s (margin for the fit).
assert 0 < inter["beta_64KiB_up_bytes_per_s"] <= 1.3 * 125e6, inter
assert inter["alpha_s"] > 0, inter
# Two ranks on one host share memory: faster than the shaped link.
assert intra["beta_64KiB_up_bytes_per_s"] > 2 * inter["beta_64KiB_up_bytes_per_s"], (intra, inter)
PY
# The ping-pong's 2 MiB messages (35 round trips) crossed the link, the intra-node pair not lo.
[ $(( $(rx_bytes rlm-h1 rl0) - link_before )) -gt $((35 * 2097152)) ] || fail "the ping-pong's bytes did not cross the link"
[ $(( $(rx_bytes rlm-h0 lo) - lo_before )) -lt 1000000 ] || fail "the intra-node ping-pong went over TCP loopback, not shared memory"

# A failing run (bad input: exit 2 from every rank through mpiexec), then the teardown.
rc=0; "$rooflab" mpi --hosts 2 --design foo --size 30x8 >/dev/null 2>&1 || rc=$?
[ $rc = 2 ] || fail "a bad --design across hosts exited $rc, not 2"
"$HOSTS_SH" down
check_clean
echo "hosts mpi: ok"
