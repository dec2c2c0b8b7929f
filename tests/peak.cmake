# The peak family: its names, refusals and model (its verification at odd iteration counts is the
# conformance test's).
rooflab_unit_test(test_peak
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/peak/test_peak.cpp
  LIBS rooflab_core rooflab_microbench)
