# GEMM: micro-kernels, blocked / sfc_ca drivers and loop orders vs an independent long double
# reference at odd shapes, the generalized Hilbert curve, verification catching broken
# kernels, bad input and the family table.
rooflab_unit_test(test_gemm
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gemm/test_gemm.cpp
  LIBS rooflab_core rooflab_gemm)
