rooflab_unit_test(test_microbench
  SOURCES microbench/test_capacity.cpp microbench/test_levels.cpp
          microbench/test_kernels.cpp microbench/test_characterize.cpp
          microbench/test_streams.cpp
  LIBS rooflab_microbench)

# Not a test: runs characterize() and writes machine.json, for timing runs before (or
# without) the `rooflab characterize` command. Timing runs must hold the shared lock:
#   flock /tmp/rooflab-timing.lock build/<dir>/tests/microbench_characterize quick out.json
add_executable(microbench_characterize microbench/characterize_main.cpp)
target_link_libraries(microbench_characterize PRIVATE rooflab_microbench)
