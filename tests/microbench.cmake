rooflab_unit_test(test_microbench
  SOURCES microbench/test_capacity.cpp microbench/test_levels.cpp
          microbench/test_kernels.cpp microbench/test_characterize.cpp
          microbench/test_streams.cpp
  LIBS rooflab_microbench)

