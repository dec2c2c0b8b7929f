# Sourced by the tests that run on a one-host Slurm (tests/fleet/slurm_local.sh,
# tests/reframe/slurm_local.sh). Sets T (a temp dir; short, as munge's and Slurm's unix sockets
# live there and sun_path holds 108 bytes), fail(), an EXIT trap that stops every daemon
# local_slurm.sh started, also on failure, and then shows the daemons' logs and the files the
# test names in SLURM_TEST_LOGS (globs), and slurm_test_start NODES: starts the cluster (exit 77
# passed on) and exports SLURM_CONF.
LOCAL_SLURM=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/local_slurm.sh
T=$(mktemp -d /tmp/rooflab-slurm-test.XXXXXX)
SLURM_TEST_LOGS=
cleanup() {
  local rc=$? f
  "$LOCAL_SLURM" stop "$T/slurm"
  if [ $rc != 0 ] && [ $rc != 77 ]; then
    for f in "$T"/slurm/log/*.log $SLURM_TEST_LOGS; do
      [ -s "$f" ] && { echo "--- $f"; tail -n 15 "$f"; }
    done
  fi
  rm -rf "$T"
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "FAIL: $*" >&2; exit 1; }
slurm_test_start() {
  local rc
  "$LOCAL_SLURM" start "$T/slurm" "$1" >"$T/conf"; rc=$?
  [ $rc = 77 ] && { cat "$T/conf"; exit 77; }
  [ $rc = 0 ] || fail "the local Slurm did not start (exit $rc)"
  export SLURM_CONF=$(tail -n 1 "$T/conf")
  sinfo -N
}
