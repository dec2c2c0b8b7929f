# GEMM: micro-kernels, blocked / sfc_ca drivers and loop orders vs an independent long double
# reference at odd shapes, the generalized Hilbert curve, verification catching broken
# kernels, bad input and the family table.
rooflab_unit_test(test_gemm
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gemm/test_gemm.cpp
  LIBS rooflab_core rooflab_gemm)

# Honest baselines: the core / configuration choice from synthetic CPUs (unit), no probe while the
# registry is built, and the libraries themselves with OPENBLAS_CORETYPE unset and set by a user
# (Prescott): the facts each reports and the environment left as it was.
rooflab_unit_test(test_gemm_code_path
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gemm/test_code_path.cpp
  LIBS rooflab_core rooflab_gemm)
# host_isa(), what baselines are judged against, is the CPU's and not ROOFLAB_MAX_ISA's.
add_test(NAME gemm_code_path_host_isa_capped
  COMMAND test_gemm_code_path --gtest_filter=CodePath.HostIsaIsTheCpusWidestUncapped)
set_tests_properties(gemm_code_path_host_isa_capped PROPERTIES LABELS unit ENVIRONMENT ROOFLAB_MAX_ISA=scalar)
add_executable(test_gemm_code_path_libs ${CMAKE_CURRENT_LIST_DIR}/gemm/test_code_path_libs.cpp)
target_link_libraries(test_gemm_code_path_libs PRIVATE GTest::gtest_main rooflab_core rooflab_gemm)
foreach(core "" Prescott)
  set(tname gemm_code_path_libs_coretype_${core})
  if(core STREQUAL "")
    set(tname gemm_code_path_libs_coretype_unset)
  endif()
  add_test(NAME ${tname} COMMAND $<TARGET_FILE:test_gemm_code_path_libs>)
  set(mod "OPENBLAS_CORETYPE=unset:" "BLIS_ARCH_TYPE=unset:" "ROOFLAB_TEST_CORETYPE=set:${core}")
  if(NOT core STREQUAL "")
    set(mod "OPENBLAS_CORETYPE=set:${core}" "BLIS_ARCH_TYPE=unset:" "ROOFLAB_TEST_CORETYPE=set:${core}")
  endif()
  set_tests_properties(${tname} PROPERTIES LABELS unit ENVIRONMENT_MODIFICATION "${mod}")
endforeach()

# bench.json rows of a vendor baseline carry its code path (rooflab.code_path), with the
# environment the test runner has (no OPENBLAS_CORETYPE set for the test).
if(ROOFLAB_HAVE_OPENBLAS)
  set(cp_dir ${CMAKE_CURRENT_BINARY_DIR}/gemm_code_path_bench)
  add_test(NAME gemm_code_path_in_bench_json COMMAND sh -c
    "rm -rf ${cp_dir} && $<TARGET_FILE:rooflab> bench --case gemm/openblas/f64/48x40x32/threads:1 --out ${cp_dir} --benchmark_repetitions=1 --benchmark_min_time=0.001 > /dev/null && python3 -c \"import json; rows=[b['rooflab'] for b in json.load(open('${cp_dir}/bench.json'))['benchmarks']]; assert rows; cp=[r['code_path'] for r in rows]; assert all(c['library'].startswith('OpenBLAS') and c['ran'].startswith('core ') and c['best'].startswith('core ') and isinstance(c['representative'], bool) and (c['reason'] is None) == c['representative'] and c['selected_by'] for c in cp), cp; print(cp[0])\"")
  set_tests_properties(gemm_code_path_in_bench_json PROPERTIES LABELS integration)
endif()
