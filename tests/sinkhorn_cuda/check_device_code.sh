#!/usr/bin/env bash
# check_device_code.sh LIB: the sinkhorn_cuda static library holds device code for sm_80 and
# sm_90 (the fat binary records each ptxas target) and the host stubs of every kernel
# instantiation the launchers pick from (f32/f64 x vector/scalar x write/read-only).
lib=$1
fail() { echo "check_device_code: $*"; exit 1; }
[ -f "$lib" ] || fail "$lib not found"
objdump -h "$lib" | grep -q '\.nv_fatbin' || fail "no .nv_fatbin section in $lib"
for arch in sm_80 sm_90; do
  strings "$lib" | grep -q -- "-arch $arch" || fail "no $arch code in $lib"
done
syms=$(nm -C "$lib")
for k in part2_kernel part4_kernel; do
  for inst in "float, 4, true" "float, 4, false" "float, 1, true" "float, 1, false" \
              "double, 2, true" "double, 2, false" "double, 1, true" "double, 1, false"; do
    grep -qF "$k<$inst>" <<<"$syms" || fail "missing $k<$inst>"
  done
done
for k in "factors_kernel<float>" "factors_kernel<double>" "scale_kernel<float>" "peak_kernel<double, true>" \
         "peak_kernel<float, false>" "triad_kernel" "read_kernel" "copy_kernel" "update_kernel"; do
  grep -qF "$k" <<<"$syms" || fail "missing $k"
done
echo "ok: sm_80 + sm_90 device code and all kernel instantiations in $lib"
