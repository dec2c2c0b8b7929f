# Floyd-Warshall kernels, schedules and layouts vs the double reference; generators,
# verification, bad input, the family table.
rooflab_unit_test(test_floyd_warshall
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/floyd_warshall/test_floyd_warshall.cpp
  LIBS rooflab_core rooflab_floyd_warshall)
