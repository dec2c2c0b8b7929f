#!/usr/bin/env bash
# device_build.sh OUTDIR [NLOHMANN_INCLUDE] [ARCH] [GTEST_DIR]: builds sinkhorn_cuda_device_check
# (dc), sinkhorn_cuda_family_check (fc) and, given googletest's source dir, test_sinkhorn_cuda
# (ut) with nvcc and g++ alone, for a lent GPU machine that has the CUDA toolkit but not the
# project's other dependencies (Google Benchmark, hwloc, BLAS, GTest).
# NLOHMANN_INCLUDE holds nlohmann/json.hpp (default /usr/include); ARCH default sm_90.
set -euo pipefail
out=$1
inc=${2:-/usr/include}
arch=${3:-sm_90}
gtest=${4:-}
root=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$out"
I=(-I"$root" -I"$inc")
# what CMake defines for harness/diagnostics.cpp (the build the numbers came from)
D=(-DROOFLAB_BUILD_TYPE=\"Release\" -DROOFLAB_SANITIZER=\"\")
cxx() {  # source [flags...]
  local src=$1; shift
  g++ -std=c++20 -O2 -fopenmp "${I[@]}" "${D[@]}" "$@" -c "$root/$src" -o "$out/$(echo "$src" | tr / _).o"
}
pids=()
for f in kernels device bench; do
  nvcc -std=c++17 -O3 -gencode "arch=compute_${arch#sm_},code=$arch" "${I[@]}" \
       -c "$root/kernels/sinkhorn/cuda/$f.cu" -o "$out/cu_$f.o" & pids+=($!)
done
common=(harness/registry.cpp harness/isa_choice.cpp harness/families.cpp harness/isa.cpp harness/buffer.cpp harness/json_io.cpp harness/args.cpp harness/measure.cpp harness/diagnostics.cpp harness/host_caches.cpp
        roofline/machine.cpp roofline/predict.cpp roofline/ecm.cpp roofline/calibration.cpp roofline/evaluate.cpp
        kernels/sinkhorn/cuda/plan.cpp kernels/sinkhorn/cuda/solver.cpp apps/gpu_characterize.cpp
        kernels/sinkhorn/cuda/family.cpp)
for f in "${common[@]}" $(cd "$root" && ls kernels/sinkhorn/*.cpp | grep -v "_avx"); do cxx "$f" & pids+=($!); done
cxx kernels/sinkhorn/microkernel_avx2.cpp -mavx2 -mfma & pids+=($!)
cxx kernels/sinkhorn/microkernel_avx512.cpp -mavx512f -mavx512vl -mavx512bw -mavx512dq -mfma -mavx2 & pids+=($!)
cxx tests/sinkhorn_cuda/device_check.cpp & pids+=($!)
cxx tests/sinkhorn_cuda/family_check.cpp & pids+=($!)
cxx tests/sinkhorn_cuda/families_cuda_only.cpp & pids+=($!)
if [[ -n $gtest ]]; then
  g++ -std=c++20 -O1 -I"$gtest/include" -I"$gtest" -c "$gtest/src/gtest-all.cc" -o "$out/gtest_all.o" & pids+=($!)
  g++ -std=c++20 -O1 -I"$gtest/include" -c "$gtest/src/gtest_main.cc" -o "$out/gtest_main.o" & pids+=($!)
  cxx tests/sinkhorn_cuda/test_sinkhorn_cuda.cpp -I"$gtest/include" -DROOFLAB_SOURCE_DIR="\"$root\"" & pids+=($!)
fi
for p in "${pids[@]}"; do wait "$p"; done
objs=$(ls "$out"/*.o | grep -v "tests_sinkhorn_cuda_\|gtest_")
fam="$out/tests_sinkhorn_cuda_families_cuda_only.cpp.o"
nvcc -Xcompiler -fopenmp -o "$out/dc" $objs "$out/tests_sinkhorn_cuda_device_check.cpp.o" "$fam"
nvcc -Xcompiler -fopenmp -o "$out/fc" $objs "$out/tests_sinkhorn_cuda_family_check.cpp.o" "$fam"
if [[ -n $gtest ]]; then
  nvcc -Xcompiler -fopenmp -o "$out/ut" $objs "$out/tests_sinkhorn_cuda_test_sinkhorn_cuda.cpp.o" "$fam" \
       "$out/gtest_all.o" "$out/gtest_main.o" -lpthread
fi
echo "built $out/dc $out/fc${gtest:+ $out/ut}"
