#!/bin/bash
# Machine-wide CPU discipline when several people (or agents) share one small machine:
# timings only run when nothing else burns CPU. A reader/writer lock on /tmp files.
#   cpu_lock.sh build CMD...  builds, tests, anything CPU-heavy that is not a timing (shared lock;
#                        waits while a timing job runs or is queued)
#   cpu_lock.sh time  CMD...  anything that times kernels (exclusive: waits until no build runs,
#                        and blocks new builds until it ends)
#   cpu_lock.sh gate  CMD...  for scripts that take /tmp/rooflab-timing.lock themselves per step
#                        (scripts/mpi_sweep.sh, scripts/gemm_paper.sh): blocks new builds only
L=/tmp/rooflab-timing.lock; G=/tmp/rooflab-gate.lock
mode=$1; shift
case $mode in
  build) flock $G true; exec flock -s $L "$@";;
  time)  exec flock $G flock -x $L "$@";;
  gate)  exec flock $G "$@";;
  *) echo "usage: cpu_lock.sh build|time|gate CMD..." >&2; exit 2;;
esac
