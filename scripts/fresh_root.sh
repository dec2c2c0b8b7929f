#!/usr/bin/env bash
# Runs commands in a clean Debian bookworm root, as a new user's machine would be: nothing
# installed but Debian's essential packages and apt. The repository's files (tracked and
# untracked, not ignored: no build/, .venv/ or results) are copied to /rooflab in the root,
# and each COMMAND runs there in turn (bash -c, as root, /proc /sys /dev bound), stopping at
# the first that fails.
#
#   scripts/fresh_root.sh [--keep-root] [--out DIR] [--copy-back PATH] COMMAND...
#
#   --out DIR         where the root is unpacked (default: a new directory under /var/tmp)
#   --copy-back PATH  after the commands (also on failure), copy /rooflab/PATH out of the
#                     root into build/fresh-root/ (e.g. results/ci-smoke)
#   --keep-root       leave the unpacked root (for a look inside); default: removed
#
# The root comes from mmdebstrap (Debian package, installed here when missing) with this
# machine's own apt sources and Acquire settings, and is cached as a tarball per day in
# $ROOFLAB_ROOT_CACHE (default /var/cache/rooflab-ci), so a second run the same day only
# unpacks it. Needs root (mmdebstrap --mode=root, chroot, mount).
set -euo pipefail
cd "$(dirname "$0")/.."
REPO=$(pwd)

keep=0; out=""; copy_back=()
while [ $# -gt 0 ]; do
  case "$1" in
    --keep-root) keep=1; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --copy-back) copy_back+=("${2:?--copy-back needs a path}"); shift 2 ;;
    -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
    --) shift; break ;;
    -*) echo "fresh_root.sh: unknown option $1" >&2; exit 2 ;;
    *) break ;;
  esac
done
[ $# -gt 0 ] || { echo "fresh_root.sh: no command given (see --help)" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "fresh_root.sh: needs root (mmdebstrap --mode=root, chroot, mount)" >&2; exit 1; }

log() { echo "[fresh-root $(date -u +%H:%M:%S)] $*"; }

# --- the cached root tarball ------------------------------------------------------------
cache=${ROOFLAB_ROOT_CACHE:-/var/cache/rooflab-ci}
mkdir -p "$cache"
tarball="$cache/bookworm-apt-$(date -u +%Y%m%d).tar"
if [ ! -s "$tarball" ]; then
  if ! command -v mmdebstrap >/dev/null; then
    log "installing mmdebstrap"
    DEBIAN_FRONTEND=noninteractive apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends mmdebstrap >/dev/null
  fi
  # This machine's apt sources (the registry it already uses) and its Acquire settings
  # (proxies, snapshot validity), so the root reaches the same mirror the same way.
  sources=()
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources; do
    [ -s "$f" ] && grep -qE '^[[:space:]]*(deb|Types:)' "$f" && sources+=("$f")
  done
  [ ${#sources[@]} -gt 0 ] || { echo "fresh_root.sh: no apt sources on this machine" >&2; exit 1; }
  aptopts=()
  while IFS= read -r line; do aptopts+=(--aptopt="$line"); done < <(
    apt-config dump | grep -E '^Acquire::((https?|ftp)::Proxy|Check-Valid-Until|Check-Date) ' || true)
  log "creating a bookworm root with mmdebstrap -> $tarball"
  rm -rf "$cache"/bookworm-apt-*  # older days' roots, an interrupted one
  part="${tarball%.tar}.part.tar"  # mmdebstrap picks the format from the .tar ending
  mmdebstrap --variant=apt --mode=root --quiet "${aptopts[@]}" bookworm "$part" "${sources[@]}"
  mv "$part" "$tarball"
fi

# --- unpack, copy the tree, bind the kernel file systems ----------------------------------
root=${out:-$(mktemp -d /var/tmp/rooflab-root.XXXXXX)}
mkdir -p "$root"
mounted=()
cleanup() {
  local rc=$?
  set +e
  for p in "${copy_back[@]}"; do
    if [ -e "$root/rooflab/$p" ]; then
      mkdir -p "$REPO/build/fresh-root/$(dirname "$p")"
      rm -rf "$REPO/build/fresh-root/$p"
      cp -a "$root/rooflab/$p" "$REPO/build/fresh-root/$p" && log "copied $p to build/fresh-root/$p"
    fi
  done
  for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
    umount -R "${mounted[$i]}" 2>/dev/null || umount -lR "${mounted[$i]}" 2>/dev/null
  done
  if [ "$keep" = 1 ]; then
    log "root kept at $root"
  elif findmnt -rn -o TARGET | grep -q "^$root/"; then
    echo "fresh_root.sh: something is still mounted under $root; not removing it" >&2
  else
    rm -rf --one-file-system "$root"
  fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "unpacking $tarball into $root"
tar -xf "$tarball" -C "$root"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
mkdir -p "$root/rooflab"
git -C "$REPO" ls-files -z --cached --others --exclude-standard \
  | tar --null --ignore-failed-read -T - -cf - 2>/dev/null | tar -xf - -C "$root/rooflab"
# The history too, as a clone has it: the perf gate builds its baseline's commit for its A/B.
if [ -d "$REPO/.git" ]; then
  cp -a "$REPO/.git" "$root/rooflab/.git"
else
  log "no $REPO/.git directory: the fresh root has no history (the perf gate re-times instead of its A/B)"
fi
# The repository keeps ../shared beside it (the papers, read by the claims ledger).
if [ -d "$REPO/../shared" ]; then
  mkdir -p "$root/shared" && cp -a "$REPO/../shared/." "$root/shared/"
fi
for m in proc sys dev; do
  mkdir -p "$root/$m"
  mount --rbind "/$m" "$root/$m"
  mount --make-rslave "$root/$m"
  mounted+=("$root/$m")
done

# This machine's pip settings, as its apt settings above: the CA bundle pip trusts here (on a
# network with a TLS-inspecting proxy its CA is only there) and the index / proxy variables.
pipenv=()
ca=${PIP_CERT:-/etc/ssl/certs/ca-certificates.crt}
if [ -r "$ca" ]; then
  cp "$ca" "$root/etc/rooflab-host-ca.crt" && pipenv+=(PIP_CERT=/etc/rooflab-host-ca.crt)
fi
for v in PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_TRUSTED_HOST PIP_DEFAULT_TIMEOUT \
         http_proxy https_proxy no_proxy HTTP_PROXY HTTPS_PROXY NO_PROXY; do
  [ -n "${!v:-}" ] && pipenv+=("$v=${!v}")
done

# --- the commands -------------------------------------------------------------------------
for cmd in "$@"; do
  log "running in the fresh root: $cmd"
  t0=$(date +%s)
  rc=0
  chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM="${TERM:-dumb}" CI="${CI:-}" "${pipenv[@]}" \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    /bin/bash -c "cd /rooflab && $cmd" || rc=$?
  log "exit $rc after $(( $(date +%s) - t0 )) s: $cmd"
  [ $rc = 0 ] || exit $rc
done
