#!/usr/bin/env bash
# Emulated hosts for real MPICH runs: N network namespaces joined by shaped links.
#   scripts/hosts.sh up N [--rate RATE] [--delay D]   create (or keep, when already up alike)
#   scripts/hosts.sh down                             remove everything `up` made
#   scripts/hosts.sh status                           what is up (exit 1: nothing)
#   scripts/hosts.sh exec K CMD...                    run CMD in host K (0-based)
#   scripts/hosts.sh mpiexec [--ranks-per-host R] [--hosts N] [--mpiexec PATH] [--dry-run] -- PROGRAM ARGS...
#                   MPICH's hydra starting R ranks per host (default 1) on the first N hosts
#                   (default all): one proxy per host, through scripts/hosts_launch.sh
#                   (`rooflab mpi --hosts N [--ranks-per-host R] ...` runs this)
#   scripts/hosts.sh measure DIR [--build DIR]        ping-pong alpha/beta per link -> DIR/hosts_links.json
# Layout: host K is namespace PREFIX-hK with one interface `rl0` (NET.(K+1)/24, loopback up)
# and, for the ranks hydra starts there, its own hostname and boot id (scripts/hosts_launch.sh);
# its veth peer `hK` sits in namespace PREFIX-hub on the bridge `rl0` (NET.254/24, where
# mpiexec runs and its proxies call back). Nothing is added to the namespace this script is
# started from: every address and link lives in the namespaces it creates, and `down` (or a
# failure during `up`) deletes those namespaces, which deletes their links.
# Shaping, on the egress of both ends of every link (host -> hub and hub -> host): tbf at RATE
# (default 1gbit; `off`: none) and, with --delay D, netem adding D/2 per end, so a message
# between two hosts is delayed D one way. netem needs CONFIG_NET_SCH_NETEM; without it --delay
# is refused (the links then have only the veth's own latency).
# PREFIX and NET: ROOFLAB_HOSTS_PREFIX (default rl) and ROOFLAB_HOSTS_NET (default 10.213.0,
# a /24 used only inside these namespaces). Needs root and iproute2 (`ip netns`, `tc`).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
P=${ROOFLAB_HOSTS_PREFIX:-rl}
NET=${ROOFLAB_HOSTS_NET:-10.213.0}
HUB=$P-hub
STATE_DIR=/run/rooflab-hosts
STATE=$STATE_DIR/$P.env
mpiexec=${MPIEXEC:-mpiexec}

die() { echo "hosts.sh: $*" >&2; exit 1; }
usage() { sed -n '2,/^# Layout/p' "$0" | sed '$d; s/^# \{0,2\}//' >&2; exit "${1:-2}"; }

[[ $P =~ ^[a-z][a-z0-9]{0,5}$ ]] || die "ROOFLAB_HOSTS_PREFIX must be 1-6 lower-case letters/digits, got '$P'"
[[ $NET =~ ^(10|192\.168|172\.(1[6-9]|2[0-9]|3[01]))(\.[0-9]{1,3}){1,2}$ && $(tr -cd . <<<"$NET" | wc -c) = 2 ]] \
  || die "ROOFLAB_HOSTS_NET must be the first three octets of a private /24 (e.g. 10.213.0), got '$NET'"

# Root and iproute2 with network namespaces, checked before anything is touched.
need_netns() {
  [ "$(id -u)" = 0 ] || die "needs root (network namespaces, veth links and tc); run it with sudo"
  command -v ip >/dev/null && command -v tc >/dev/null \
    || die "needs iproute2 (ip, tc): scripts/install_deps.sh installs it"
  ip netns list >/dev/null 2>&1 || die "'ip netns' does not work here: $(ip netns list 2>&1 | head -1)"
}

ours() { ip netns list 2>/dev/null | awk '{print $1}' | grep -E "^$P-(hub|h[0-9]+)\$" || true; }

down() {
  local ns
  for ns in $(ours); do ip netns del "$ns" 2>/dev/null || echo "hosts.sh: could not delete $ns" >&2; done
  rm -f "$STATE" "$STATE_DIR/$P"-h*.boot_id
  # Deleting a namespace deletes its links; a host-side link would outlive it only if it had
  # been moved out, which this script never does. Check, so a leak is loud.
  [ -z "$(ours)" ] || die "namespaces left behind: $(ours | tr '\n' ' ')"
}

# RATE as tc writes it (bit, kbit, mbit, gbit), in bytes per second.
rate_bytes() {
  [[ $1 =~ ^([0-9]+)(bit|kbit|mbit|gbit)$ ]] || die "--rate must be like 100mbit or 1gbit (or off), got '$1'"
  local n=${BASH_REMATCH[1]} mul
  case ${BASH_REMATCH[2]} in bit) mul=1 ;; kbit) mul=1000 ;; mbit) mul=1000000 ;; gbit) mul=1000000000 ;; esac
  [ "$n" -gt 0 ] || die "--rate must be positive, got '$1'"
  echo $(( n * mul / 8 ))
}
# D (us, ms or s) in microseconds.
delay_us() {
  [[ $1 =~ ^([0-9]+)(us|ms|s)$ ]] || die "--delay must be like 200us or 1ms, got '$1'"
  local n=${BASH_REMATCH[1]}
  case ${BASH_REMATCH[2]} in us) echo "$n" ;; ms) echo $(( n * 1000 )) ;; s) echo $(( n * 1000000 )) ;; esac
}

# Egress shaping of interface $2 in namespace $1.
shape() {
  local ns=$1 dev=$2 parent=root
  if [ "$delay_us" -gt 0 ]; then
    tc -n "$ns" qdisc add dev "$dev" root handle 1: netem delay "$(( delay_us / 2 ))us" limit 100000 2>/dev/null \
      || die "--delay needs the netem qdisc, which this kernel lacks (CONFIG_NET_SCH_NETEM); run without --delay"
    parent="parent 1:1"
  fi
  if [ "$rate" != off ]; then
    # burst: 250 us at the rate (at least 16 KiB): messages below it pass a full bucket at
    # veth speed (with 1 ms, 8-128 KiB ping-pongs ran at twice a 1gbit rate); tbf splits
    # larger GSO segments. latency bounds the queue.
    local burst=$(( rate_Bps / 4000 > 16384 ? rate_Bps / 4000 : 16384 ))
    # shellcheck disable=SC2086
    tc -n "$ns" qdisc add dev "$dev" $parent handle 10: tbf rate "$rate" burst "$burst" latency 50ms
  fi
}

up() {
  local n=$1; shift
  rate=1gbit delay=0
  while [ $# -gt 0 ]; do
    case $1 in
      --rate) [ $# -ge 2 ] || die "--rate needs a value"; rate=$2; shift 2 ;;
      --delay) [ $# -ge 2 ] || die "--delay needs a value"; delay=$2; shift 2 ;;
      *) die "up: unknown option '$1'" ;;
    esac
  done
  [[ $n =~ ^[0-9]+$ ]] && [ "$n" -ge 1 ] && [ "$n" -le 64 ] || die "up: N must be an integer in [1, 64], got '$n'"
  rate_Bps=0; [ "$rate" = off ] || rate_Bps=$(rate_bytes "$rate")
  delay_us=0; [ "$delay" = 0 ] || delay_us=$(delay_us "$delay")
  need_netns
  local want="N=$n RATE=$rate DELAY=$delay NET=$NET"
  if [ -f "$STATE" ] && [ "$(head -1 "$STATE")" = "$want" ] && [ "$(ours | wc -l)" = $((n + 1)) ]; then
    echo "hosts.sh: already up: $want"
    return 0
  fi
  [ -z "$(ours)" ] && echo "hosts.sh: up: $want" || echo "hosts.sh: replacing $(ours | wc -l) namespaces by: $want"
  down
  trap 'rc=$?; echo "hosts.sh: up failed; removing what it made" >&2; down; exit $rc' EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$STATE_DIR"
  ip netns add "$HUB"
  ip -n "$HUB" link set lo up
  ip -n "$HUB" link add rl0 type bridge
  ip -n "$HUB" addr add "$NET.254/24" dev rl0
  ip -n "$HUB" link set rl0 up
  local k ns
  for ((k = 0; k < n; k++)); do
    ns=$P-h$k
    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$HUB" link add "h$k" type veth peer name rl0 netns "$ns"
    ip -n "$HUB" link set "h$k" master rl0
    ip -n "$HUB" link set "h$k" up
    ip -n "$ns" addr add "$NET.$((k + 1))/24" dev rl0
    ip -n "$ns" link set rl0 up
    shape "$ns" rl0
    shape "$HUB" "h$k"
    # The host's own boot id (hosts_launch.sh says why): "rlhs" and the host number.
    printf '726c6873-0000-4000-8000-%012x\n' "$k" >"$STATE_DIR/$ns.boot_id"
    [ "${ROOFLAB_HOSTS_FAIL_AT:-}" != "$k" ] || die "ROOFLAB_HOSTS_FAIL_AT=$k: failing after host $k (a test of the cleanup)"
  done
  echo "$want" >"$STATE"
  trap - EXIT INT TERM
  status
}

status() {
  [ -f "$STATE" ] && [ -n "$(ours)" ] || { echo "hosts.sh: no emulated hosts up (prefix $P)"; return 1; }
  echo "hosts.sh: $(head -1 "$STATE") (prefix $P, hub $HUB at $NET.254)"
  local ns
  for ns in $(ours | sort -V); do
    [ "$ns" = "$HUB" ] && continue
    printf '  %-8s %s  %s\n' "$ns" "$(ip -n "$ns" -4 -o addr show dev rl0 | awk '{print $4}')" \
      "$(tc -n "$ns" qdisc show dev rl0 | sed -n 's/.*\(tbf\|netem\)/\1/p' | tr '\n' ';')"
  done
}

# hydra PPN NP HOSTLIST PROGRAM...: mpiexec in the hub, one proxy per host started by
# hosts_launch.sh in that host's namespace; -localhost: the hub's address, which the proxies
# call back. $mpiexec: the mpiexec to run.
hydra_cmd=()
hydra() {
  local ppn=$1 np=$2 list=$3; shift 3
  hydra_cmd=(ip netns exec "$HUB" env "ROOFLAB_HOSTS_PREFIX=$P" "UCX_NET_DEVICES=${UCX_NET_DEVICES:-rl0}" "$mpiexec" -launcher ssh
             -launcher-exec "$here/scripts/hosts_launch.sh" -localhost "$NET.254" -hosts "$list"
             -ppn "$ppn" -n "$np" "$@")
}

hosts_up() { [ -f "$STATE" ] || die "no emulated hosts up: run scripts/hosts.sh up N first"; sed -n 's/^N=\([0-9]*\) .*/\1/p' "$STATE"; }

run_mpiexec() {
  local rph=1 nh="" dry=0
  while [ $# -gt 0 ]; do
    case $1 in
      --mpiexec) mpiexec=$2; shift 2 ;;
      --ranks-per-host) rph=$2; shift 2 ;;
      --hosts) nh=$2; shift 2 ;;
      --dry-run) dry=1; shift ;;
      --) shift; break ;;
      *) die "mpiexec: unknown option '$1' (the program follows --)" ;;
    esac
  done
  [ $# -ge 1 ] || die "mpiexec: no program given (... -- PROGRAM ARGS)"
  local up_n; up_n=$(hosts_up)
  [ -n "$nh" ] || nh=$up_n
  [[ $rph =~ ^[0-9]+$ ]] && [ "$rph" -ge 1 ] || die "--ranks-per-host must be a positive integer, got '$rph'"
  [[ $nh =~ ^[0-9]+$ ]] && [ "$nh" -ge 1 ] || die "--hosts must be a positive integer, got '$nh'"
  [ "$nh" -le "$up_n" ] || die "--hosts $nh but only $up_n emulated hosts are up (scripts/hosts.sh up $nh)"
  local list="" k
  for ((k = 0; k < nh; k++)); do list+="${list:+,}$P-h$k"; done
  hydra "$rph" $((nh * rph)) "$list" "$@"
  if [ $dry = 1 ]; then echo "${hydra_cmd[*]}"; return 0; fi
  need_netns
  exec "${hydra_cmd[@]}"
}

# Ping-pong between host 0 and every other host (one rank each), and between two ranks on
# host 0 (the intra-node path), each into DIR/pingpong/<pair>/mpi_pingpong.json, gathered in
# DIR/hosts_links.json (schema rooflab.hosts_links/1, docs/json.md).
measure() {
  local dir="" build="$here/build/release"
  while [ $# -gt 0 ]; do
    case $1 in
      --build) build=$2; shift 2 ;;
      -*) die "measure: unknown option '$1'" ;;
      *) dir=$1; shift ;;
    esac
  done
  [ -n "$dir" ] || die "measure: needs DIR"
  local bin=${ROOFLAB_MPI_BIN:-$build/rooflab_mpi}
  [ -x "$bin" ] || die "measure: $bin is not built (cmake --build $build --target rooflab_mpi)"
  local n; n=$(hosts_up)
  [ "$n" -ge 2 ] || die "measure: needs at least 2 hosts up (scripts/hosts.sh up 2)"
  mkdir -p "$dir/pingpong"
  local k pairs=("h0-h0")
  for ((k = 1; k < n; k++)); do pairs+=("h0-h$k"); done
  for pair in "${pairs[@]}"; do
    local b=${pair#*-} hostlist
    [ "$b" = h0 ] && hostlist="$P-h0" || hostlist="$P-h0,$P-$b"
    echo "hosts.sh: ping-pong $pair" >&2
    hydra $([ "$b" = h0 ] && echo 2 || echo 1) 2 "$hostlist" "$bin" --pingpong --out "$dir/pingpong/$pair"
    "${hydra_cmd[@]}" >/dev/null
  done
  python3 - "$dir" "$STATE" "$P" "${pairs[@]}" <<'EOF'
import json, os, sys, datetime
d, state, prefix, pairs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
cfg = dict(kv.split("=", 1) for kv in open(state).readline().split())
links = []
for pair in pairs:
    a, b = pair.split("-")
    pp = json.load(open(os.path.join(d, "pingpong", pair, "mpi_pingpong.json")))
    links.append({"from": f"{prefix}-{a}", "to": f"{prefix}-{b}", "path": "intra-node" if a == b else "inter-node",
                  "alpha_s": pp["alpha_s"], "beta_bytes_per_s": pp["beta_bytes_per_s"],
                  "beta_64KiB_up_bytes_per_s": pp["fit"]["beta_64KiB_up_bytes_per_s"],
                  "pingpong": os.path.join("pingpong", pair, "mpi_pingpong.json")})
out = {"schema": "rooflab.hosts_links/1",
       "created": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
       "hosts": int(cfg["N"]), "rate": cfg["RATE"], "delay": cfg["DELAY"], "net": cfg["NET"] + ".0/24",
       "method": "rooflab_mpi --pingpong, one rank on host 0 and one on host K (inter-node), "
                 "two ranks on host 0 (intra-node); alpha, beta: its relative least-squares fit; "
                 "beta_64KiB_up: its fit over 64 KiB .. 2 MiB (the sustained rate)",
       "links": links}
tmp = os.path.join(d, ".hosts_links.json.tmp")
json.dump(out, open(tmp, "w"), indent=2)
os.replace(tmp, os.path.join(d, "hosts_links.json"))
for l in links:
    print(f"{l['from']} -> {l['to']} ({l['path']}): alpha {l['alpha_s']*1e6:.1f} us, "
          f"beta {l['beta_bytes_per_s']/1e6:.1f} MB/s (64 KiB up: {l['beta_64KiB_up_bytes_per_s']/1e6:.1f} MB/s)")
EOF
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
  up) [ $# -ge 1 ] || die "up: needs N"; up "$@" ;;
  down) need_netns; down; echo "hosts.sh: down" ;;
  status) status ;;
  exec)
    [ $# -ge 2 ] || die "exec: needs K and a command"
    [[ $1 =~ ^[0-9]+$ ]] || die "exec: K must be a host number, got '$1'"
    ip netns list | grep -q "^$P-h$1\b" || die "exec: no host $1 (scripts/hosts.sh status)"
    ns=$P-h$1; shift
    exec ip netns exec "$ns" "$@" ;;
  mpiexec) run_mpiexec "$@" ;;
  measure) need_netns; measure "$@" ;;
  -h|--help) usage 0 ;;
  *) echo "hosts.sh: unknown command '$cmd'" >&2; usage ;;
esac
