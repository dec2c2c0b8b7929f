rooflab_unit_test(test_microbench
  SOURCES microbench/test_capacity.cpp microbench/test_levels.cpp
          microbench/test_kernels.cpp microbench/test_characterize.cpp
          microbench/test_streams.cpp microbench/test_overlap.cpp
  LIBS rooflab_microbench
  SLOW Characterize.SmokeProfileFillsWhatReadersNeed)

# The bandwidth and compute kernels (and the latency / clock loops in measure) carry the code
# alignment the kernel families have.
rooflab_code_align_test(microbench_code_align LIB rooflab_microbench
  OBJECTS kernels_scalar kernels_avx2 kernels_avx512 measure)


# The bandwidth curve's shape, counted: instructions per byte of every bandwidth kernel (scalar
# and avx2 tables, valgrind runs no AVX-512) flat within 10% from 4 to 64 KiB. Needs valgrind and
# its callgrind.h; not in sanitizer builds (their runtimes refuse to run under valgrind).
if(VALGRIND_INCLUDE_DIR AND NOT ROOFLAB_SANITIZE)
  add_executable(microbench_shape_probe microbench/shape_probe.cpp)
  target_include_directories(microbench_shape_probe PRIVATE ${VALGRIND_INCLUDE_DIR})
  target_link_libraries(microbench_shape_probe PRIVATE rooflab_microbench)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)
  add_test(NAME microbench.bandwidth_shape_valgrind
           COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_SOURCE_DIR}/microbench/check_shape.py
                   $<TARGET_FILE:microbench_shape_probe> ${CMAKE_CURRENT_BINARY_DIR}/shape_out)
  set_tests_properties(microbench.bandwidth_shape_valgrind PROPERTIES
                       LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 600)
endif()
