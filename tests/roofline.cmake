# The ECM prediction (roofline/ecm) on fixture machine.json files of two CPU classes, and the
# families' per-level traffic it reads.
rooflab_unit_test(test_ecm SOURCES roofline/test_ecm.cpp LIBS rooflab_families rooflab_roofline)
target_compile_definitions(test_ecm PRIVATE ROOFLAB_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}")
