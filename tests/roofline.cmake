# The ECM prediction (roofline/ecm) on fixture machine.json files of two CPU classes, and the
# families' per-level traffic it reads.
rooflab_unit_test(test_ecm SOURCES roofline/test_ecm.cpp LIBS rooflab_families rooflab_roofline)
target_compile_definitions(test_ecm PRIVATE ROOFLAB_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}")

# `rooflab model --predict-on` (roofline/predict_on) on the stored gate runs of a Zen 3 and a Zen 5.
rooflab_unit_test(test_predict_on SOURCES roofline/test_predict_on.cpp LIBS rooflab_roofline)
target_compile_definitions(test_predict_on PRIVATE ROOFLAB_SOURCE_ROOT="${PROJECT_SOURCE_DIR}")
