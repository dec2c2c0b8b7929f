# Sinkhorn-Knopp kernels vs the long-double reference, verification, family table.
rooflab_unit_test(test_sinkhorn
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sinkhorn/test_sinkhorn.cpp
  LIBS rooflab_core rooflab_sinkhorn)
