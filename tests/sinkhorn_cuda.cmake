# sinkhorn_cuda (kernels/sinkhorn/cuda): units that need no device (tiles, planning, the
# kernels' decomposition and the iteration recipes through the host emulation, the family
# table, the GPU roofline and machine.json section); the device tests skip with "no CUDA
# device". CLI checks of bad tiles and gpu-characterize; with nvcc, that the library holds
# sm_80 / sm_90 code for the kernels.
rooflab_unit_test(test_sinkhorn_cuda
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sinkhorn_cuda/test_sinkhorn_cuda.cpp
  LIBS rooflab_apps)
target_include_directories(test_sinkhorn_cuda PRIVATE ${PROJECT_SOURCE_DIR})

set(_skc_rl $<TARGET_FILE:rooflab>)
set(_skc_expect ${CMAKE_CURRENT_LIST_DIR}/cli/expect.sh)
set(_skc_tmp ${CMAKE_CURRENT_BINARY_DIR}/sinkhorn_cuda_tmp)
file(MAKE_DIRECTORY ${_skc_tmp})
function(rooflab_skc_test name code regex)
  add_test(NAME sinkhorn_cuda_${name} COMMAND ${_skc_expect} ${code} ${regex} -- ${ARGN})
  set_tests_properties(sinkhorn_cuda_${name} PROPERTIES LABELS integration TIMEOUT 120)
endfunction()
rooflab_skc_test(list_verbose 0 "sinkhorn_cuda: Sinkhorn" ${_skc_rl} list --verbose)
rooflab_skc_test(bad_tile 1 "ty x tx = 2048 threads, more than the 1024"
  ${_skc_rl} bench --case sinkhorn_cuda/mapuot/f32/64x64/ty:2/tx:1024/ny:8/rtx:128/rny:8/part:iter/threads:1 --out ${_skc_tmp})
rooflab_skc_test(bad_row_tile 1 "rtx must be a multiple of 32"
  ${_skc_rl} bench --case sinkhorn_cuda/fused_uv/f64/64x64/rtx:100/threads:1 --out ${_skc_tmp})
rooflab_skc_test(characterize_needs_machine 1 "not found. run .rooflab characterize"
  ${_skc_rl} gpu-characterize --out ${_skc_tmp}/nowhere)
rooflab_skc_test(characterize_usage 2 "unknown option '--bogus'" ${_skc_rl} gpu-characterize --bogus)
rooflab_skc_test(characterize_help 0 "usage: rooflab gpu-characterize" ${_skc_rl} gpu-characterize --help)
rooflab_skc_test(characterize_reps_overflow 2 "--reps must be an integer in \\[1, 10000\\], got '18446744073709551617'"
  ${_skc_rl} gpu-characterize --reps 18446744073709551617)
rooflab_skc_test(characterize_out_is_file 1 "--out .*expect.sh is a file, not a directory"
  ${_skc_rl} gpu-characterize --out ${_skc_expect})

# The build produced device code for the targeted architectures and every kernel
# instantiation (binutils only: the toolkit's cuobjdump is not always installed).
if(ROOFLAB_HAVE_CUDA)
  add_test(NAME sinkhorn_cuda_device_code
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/sinkhorn_cuda/check_device_code.sh $<TARGET_FILE:rooflab_sinkhorn_cuda>)
  set_tests_properties(sinkhorn_cuda_device_code PROPERTIES LABELS integration)
  # device_build.sh (nvcc + g++ alone, for a lent GPU machine) still links with the current
  # source list; its family check then runs here (77 = skipped without a device).
  set(_skc_gtest /usr/src/googletest/googletest)
  if(NOT EXISTS ${_skc_gtest}/src/gtest-all.cc)
    set(_skc_gtest "")
  endif()
  add_test(NAME sinkhorn_cuda_device_build COMMAND sh -c
    "rm -rf ${_skc_tmp}/db ${_skc_tmp}/dbrun && mkdir -p ${_skc_tmp}/dbrun && \
     ${CMAKE_CURRENT_LIST_DIR}/sinkhorn_cuda/device_build.sh ${_skc_tmp}/db /usr/include sm_90 ${_skc_gtest} && \
     cp ${PROJECT_SOURCE_DIR}/tests/fixtures/run_small/machine.json ${_skc_tmp}/dbrun/ && \
     ${_skc_tmp}/db/fc ${_skc_tmp}/dbrun --profile smoke --reps 2")
  set_tests_properties(sinkhorn_cuda_device_build PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 900)
endif()

# scripts/gpu_sweep.sh end to end at a small size (machine.json's CPU part from the fixture
# so no characterization runs): exit 77 = skipped without a device; with one, the figures.
add_test(NAME sinkhorn_cuda_sweep_script COMMAND sh -c
  "rm -rf ${_skc_tmp}/sweep && mkdir -p ${_skc_tmp}/sweep && \
   cp ${PROJECT_SOURCE_DIR}/tests/fixtures/run_small/machine.json ${_skc_tmp}/sweep/ && \
   ${PROJECT_SOURCE_DIR}/scripts/gpu_sweep.sh --rooflab ${_skc_rl} --out ${_skc_tmp}/sweep --size 257 --quick && \
   test -s ${_skc_tmp}/sweep/gpu_sweep.png && test -s ${_skc_tmp}/sweep/gpu_roofline.png")
set_tests_properties(sinkhorn_cuda_sweep_script PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 600)
rooflab_skc_test(sweep_script_usage 2 "--size takes an integer" ${PROJECT_SOURCE_DIR}/scripts/gpu_sweep.sh
  --rooflab ${_skc_rl} --size abc)

# The kernels on a device against the reference and the emulation (odd shapes, unaligned rows,
# tiles, > 65535 row tiles); exits 77 (skipped) without one. `--time` adds the timings.
add_executable(sinkhorn_cuda_device_check ${CMAKE_CURRENT_LIST_DIR}/sinkhorn_cuda/device_check.cpp)
target_link_libraries(sinkhorn_cuda_device_check PRIVATE rooflab_apps)
add_test(NAME sinkhorn_cuda_device_check COMMAND sinkhorn_cuda_device_check)
# The registry path on a device (rooflab gpu-characterize + bench + model without Google
# Benchmark; families_cuda_only.cpp's families() has this family only, so the other families'
# objects are never pulled from the static libraries). Built here so it keeps compiling; run on a lent GPU
# machine through device_build.sh.
add_executable(sinkhorn_cuda_family_check ${CMAKE_CURRENT_LIST_DIR}/sinkhorn_cuda/family_check.cpp
               ${CMAKE_CURRENT_LIST_DIR}/sinkhorn_cuda/families_cuda_only.cpp)
target_link_libraries(sinkhorn_cuda_family_check PRIVATE rooflab_apps)
set_tests_properties(sinkhorn_cuda_device_check PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 600)
# Both device drivers parse with harness/args before looking for a device: usage errors exit 2.
rooflab_skc_test(device_check_usage 2 "--n must be an integer in \\[64, 65536\\], got 'abc'"
  $<TARGET_FILE:sinkhorn_cuda_device_check> --n abc)
rooflab_skc_test(family_check_usage 2 "needs RUN_DIR" $<TARGET_FILE:sinkhorn_cuda_family_check> --reps 3)
rooflab_skc_test(family_check_reps 2 "--reps must be an integer in \\[1, 10000\\], got '0'"
  $<TARGET_FILE:sinkhorn_cuda_family_check> /tmp --reps 0)

