#!/usr/bin/env bash
# Optional means optional: configure the project with each optional dependency hidden
# (-DROOFLAB_WITH_<NAME>=OFF), and with dependencies that are present but broken (a package
# config that fails, a pkg-config entry whose library does not link, a package the finder
# must not see); every configure must succeed and report the dependency off with its reason,
# the others as in the build under test.
#   optional_deps.sh SOURCE_DIR BUILD_DIR WORK_DIR [CMAKE_ARG...]   (the build's own -D switches)
set -uo pipefail
src=$1; build=$2; work=$3; shift 3
ref="$build/rooflab-deps.txt"
[ -s "$ref" ] || { echo "no $ref: configure the build first"; exit 1; }
rm -rf "$work"; mkdir -p "$work"
fail=0; n=0
base=(-DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF "$@" -DROOFLAB_WITH_CUDA=OFF)

# configure NAME EXPECT_REGEX ARGS... : configure in a fresh dir; NAME's summary line must
# match EXPECT_REGEX and every other line must equal the reference (CUDA is off throughout),
# but for LIBXSMM when OpenBLAS is off: it links against OpenBLAS and must say so.
configure() {
  local name=$1 expect=$2; shift 2
  local skip="$name|CUDA"
  [ "$name" = OPENBLAS ] && skip="$skip|LIBXSMM"
  local dir="$work/$name-$n"; n=$((n + 1))
  if ! cmake -S "$src" -B "$dir" "${base[@]}" "$@" >"$dir.log" 2>&1; then
    echo "FAIL [$name ${*}]: configure failed"; tail -15 "$dir.log"; fail=1; return
  fi
  local line; line=$(grep "^  $name: " "$dir/rooflab-deps.txt")
  if ! grep -qE -- "$expect" <<<"$line"; then
    echo "FAIL [$name ${*}]: expected /$expect/, got: $line"; fail=1; return
  fi
  if [ "$name" = OPENBLAS ] && grep -q "^  LIBXSMM: found" "$ref" &&
     ! grep -q "^  LIBXSMM: off (it needs a BLAS to link and OpenBLAS is off)" "$dir/rooflab-deps.txt"; then
    echo "FAIL [$name ${*}]: LIBXSMM does not say it needs OpenBLAS"; fail=1; return
  fi
  local others; others=$(diff <(grep -vE "^  ($skip): " "$ref") <(grep -vE "^  ($skip): " "$dir/rooflab-deps.txt"))
  if [ -n "$others" ]; then echo "FAIL [$name ${*}]: other dependencies changed:"; echo "$others"; fail=1; return; fi
  echo "ok   [$name ${*}]: $line"
}

for d in PAPI LIKWID VALGRIND MPI SIMGRID OPENBLAS BLIS DNNL LIBXSMM; do
  configure "$d" "^  $d: off \(disabled by -DROOFLAB_WITH_$d=OFF\)" "-DROOFLAB_WITH_$d=OFF"
done

# Present but broken: a dnnl package config that fails (as Debian's does without OpenCL).
mkdir -p "$work/fake/lib/cmake/dnnl" "$work/fake/pkgconfig"
echo 'message(FATAL_ERROR "rooflab test: this dnnl config is broken")' >"$work/fake/lib/cmake/dnnl/dnnl-config.cmake"
# (ROOFLAB_WITH_<NAME>=ON: the broken package is looked for even where the build has it off.)
configure DNNL "^  DNNL: off \(present but its config fails: .*this dnnl config is broken" "-DCMAKE_PREFIX_PATH=$work/fake" -DROOFLAB_WITH_DNNL=ON
# ... a package the finder must not see (CMake's own switch).
configure DNNL "^  DNNL: off \(hidden by CMAKE_DISABLE_FIND_PACKAGE_dnnl" -DCMAKE_DISABLE_FIND_PACKAGE_dnnl=ON -DROOFLAB_WITH_DNNL=ON
# ... pkg-config entries whose library does not exist: found, but the test program fails to link.
for pc in openblas:OPENBLAS libxsmm:LIBXSMM papi:PAPI; do
  mod=${pc%%:*}; name=${pc##*:}
  if grep -q "^  $name: found" "$ref"; then
    printf 'Name: %s\nDescription: broken on purpose\nVersion: 9.9\nLibs: -lrooflab_no_such_library\nCflags:\n' "$mod" \
      >"$work/fake/pkgconfig/$mod.pc"
    PKG_CONFIG_PATH="$work/fake/pkgconfig" configure "$name" "^  $name: off \(found 9.9 but it does not link" 
    rm -f "$work/fake/pkgconfig/$mod.pc"
  fi
done

[ $fail = 0 ] && echo "all $n configures succeeded with the expected summaries" && rm -rf "$work"
exit $fail
