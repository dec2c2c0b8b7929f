#!/usr/bin/env bash
# Installs what rooflab needs on Debian (bookworm): the build toolchain and libraries from
# Debian's packages, and a Python venv (.venv) for the plots from plots/requirements.txt.
#   scripts/install_deps.sh [--with-test-tools] [--no-venv] [--required-only]
# Not root: prints the apt-get command to run instead of running it (exit 1 if something
# required is missing).
set -euo pipefail
cd "$(dirname "$0")/.."

with_test=0; venv=1; required_only=0
for a in "$@"; do
  case "$a" in
    --with-test-tools) with_test=1 ;;
    --no-venv) venv=0 ;;
    --required-only) required_only=1 ;;
    -h|--help) sed -n '2,7p' "$0"; exit 0 ;;
    *) echo "install_deps.sh: unknown option $a" >&2; exit 2 ;;
  esac
done

required=(build-essential cmake pkg-config libbenchmark-dev libgtest-dev nlohmann-json3-dev
          libre2-dev libhwloc-dev hwloc valgrind python3 python3-venv python3-pip
          python3-numpy python3-pandas python3-matplotlib python3-scipy python3-pytest)
# POT: the peer the Sinkhorn family is compared with (tests skip without it).
# Optional back ends: found at configure time when present (counters, baselines, MPI).
# libdnnl-dev only recommends ocl-icd-opencl-dev, but its CMake config needs OpenCL's headers.
# python3-psycopg2: `rooflab history --db postgresql://...` (a team's store; SQLite needs nothing).
# libsimgrid-dev: SimGrid SMPI (smpicxx/smpirun) for `rooflab mpi --simulate` (simulated clusters).
# iproute2: scripts/hosts.sh's emulated hosts (ip netns, veth, tc).
optional=(libpapi-dev likwid python3-pot libopenblas-dev libblis-dev libdnnl-dev ocl-icd-opencl-dev libxsmm-dev mpich libmpich-dev
          python3-psycopg2 libsimgrid-dev iproute2)
[ "$required_only" = 1 ] && optional=()
# postgresql: the server the history store's test starts and stops (users bring their own).
# slurm-wlm, munge: the one-host Slurm the fleet test starts and stops (tests/fleet/).
# git: the perf gate builds its baseline's commit for its A/B (docs/measuring.md#ab).
test_tools=(chromium python3-pot postgresql python3-psycopg2 slurm-wlm munge git)

missing=()
for p in "${required[@]}" "${optional[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "$with_test" = 1 ]; then
  for p in "${test_tools[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
fi

if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "[deps] installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "[deps] missing Debian packages: ${missing[*]}" >&2
    echo "[deps] run as root:  apt-get update && apt-get install -y ${missing[*]}" >&2
    for p in "${missing[@]}"; do
      for r in "${required[@]}"; do [ "$p" = "$r" ] && exit 1; done
    done
    echo "[deps] (only optional packages are missing; continuing without them)" >&2
  fi
else
  echo "[deps] Debian packages present"
fi

if [ "$venv" = 1 ]; then
  # Debian's interpreter, so the venv sees Debian's numpy/pandas/matplotlib (no download).
  py=/usr/bin/python3; [ -x "$py" ] || py=$(command -v python3)
  if [ ! -x .venv/bin/python ]; then
    echo "[deps] creating .venv with $py"
    "$py" -m venv --system-site-packages .venv
  fi
  # pip contacts the index only for requirements Debian's packages do not already satisfy.
  .venv/bin/python -m pip install -q --disable-pip-version-check -r plots/requirements.txt
  # From PyPI (Debian has no package): a machine without PyPI runs everything but what needs it.
  # One requirement at a time, so one that fails leaves the others installed.
  grep -v -e '^#' -e '^[[:space:]]*$' plots/requirements-optional.txt | while IFS= read -r req; do
    .venv/bin/python -m pip install -q --disable-pip-version-check "$req" </dev/null \
      || echo "[deps] optional Python package off (PyPI unreachable?): $req" >&2
  done
  echo "[deps] python: $(.venv/bin/python --version) in .venv"
fi
