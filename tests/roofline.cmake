# The ECM prediction (roofline/ecm) on fixture machine.json files of two CPU classes, and the
# families' per-level traffic it reads.
rooflab_unit_test(test_ecm SOURCES roofline/test_ecm.cpp LIBS rooflab_families rooflab_roofline)
target_compile_definitions(test_ecm PRIVATE ROOFLAB_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}")
# Its in-core time from calibration runs of the kernel itself, on the same two fixtures.
rooflab_unit_test(test_calibration SOURCES roofline/test_calibration.cpp LIBS rooflab_core rooflab_roofline)
target_compile_definitions(test_calibration PRIVATE ROOFLAB_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}")

# `rooflab model --predict-on` (roofline/predict_on) on the stored gate runs of a Zen 3 and a Zen 5.
rooflab_unit_test(test_predict_on SOURCES roofline/test_predict_on.cpp LIBS rooflab_roofline)
target_compile_definitions(test_predict_on PRIVATE ROOFLAB_SOURCE_ROOT="${PROJECT_SOURCE_DIR}")
# The command line: Zen 3's gate run predicted on the Zen 5 (its bench.json beside: errors), and
# the usage errors.
set(_po_expect ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect.sh)
set(_po_base ${PROJECT_SOURCE_DIR}/results/baselines)
set(_po_out ${CMAKE_CURRENT_BINARY_DIR}/predict_on_tmp)
add_test(NAME cli_predict_on_zen3_on_zen5 COMMAND ${_po_expect} 0 "sinkhorn +3 .*%"
         -- $<TARGET_FILE:rooflab> model --predict-on ${_po_base}/gate-zen5/machine.json ${_po_base}/gate --out ${_po_out})
add_test(NAME cli_predict_on_needs_run COMMAND ${_po_expect} 2 "needs A's run directory"
         -- $<TARGET_FILE:rooflab> model --predict-on ${_po_base}/gate-zen5/machine.json)
add_test(NAME cli_predict_on_measured_alone COMMAND ${_po_expect} 2 "--measured goes with --predict-on"
         -- $<TARGET_FILE:rooflab> model --run ${_po_base}/gate --measured ${_po_base}/gate/bench.json)
add_test(NAME cli_predict_on_missing_b COMMAND ${_po_expect} 1 "/nonexistent/B.json"
         -- $<TARGET_FILE:rooflab> model --predict-on /nonexistent/B.json ${_po_base}/gate)
add_test(NAME cli_predict_on_not_a_run COMMAND ${_po_expect} 1 "bench.json not found"
         -- $<TARGET_FILE:rooflab> model --predict-on ${_po_base}/gate-zen5/machine.json ${PROJECT_SOURCE_DIR}/docs --out ${_po_out})
add_test(NAME cli_predict_on_with_bench COMMAND ${_po_expect} 2 "not --bench / --machine"
         -- $<TARGET_FILE:rooflab> model --predict-on ${_po_base}/gate-zen5/machine.json ${_po_base}/gate
            --bench ${_po_base}/gate/bench.json)
set_tests_properties(cli_predict_on_zen3_on_zen5 cli_predict_on_needs_run cli_predict_on_measured_alone
                     cli_predict_on_missing_b cli_predict_on_not_a_run cli_predict_on_with_bench PROPERTIES LABELS integration)
# scripts/predict_on_pairs.py (docs/predict-on.md's table) on the two stored runs, both ways.
find_package(Python3 COMPONENTS Interpreter)
if(Python3_Interpreter_FOUND)
  add_test(NAME cli_predict_on_pairs COMMAND ${_po_expect} 0 "zen5 -> zen3 \\| all \\| 5 \\|"
           -- ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/scripts/predict_on_pairs.py --rooflab $<TARGET_FILE:rooflab>
              --out ${_po_out}/pairs zen3=${_po_base}/gate zen5=${_po_base}/gate-zen5)
  set_tests_properties(cli_predict_on_pairs PROPERTIES LABELS integration)
endif()
# `rooflab model --remodel` (each case's model re-derived with the caches of the machine that ran
# it) on the committed gate baselines of the Zen 3, Zen 4 and Zen 5, and the gate's cross-CPU ratios.
rooflab_unit_test(test_remodel SOURCES roofline/test_remodel.cpp LIBS rooflab_families rooflab_roofline)
target_compile_definitions(test_remodel PRIVATE ROOFLAB_SOURCE_ROOT="${PROJECT_SOURCE_DIR}")
add_test(NAME cli_model_remodel COMMAND ${_po_expect} 0 "floyd_warshall/simd.* ok "
         -- $<TARGET_FILE:rooflab> model --run ${_po_base}/gate --remodel --out ${_po_out}/remodel)
add_test(NAME cli_model_remodel_no_machine COMMAND ${_po_expect} 1 "--remodel needs the machine.json"
         -- $<TARGET_FILE:rooflab> model --bench ${_po_base}/gate/bench.json --remodel --out ${_po_out}/remodel)
add_test(NAME cli_model_remodel_predict_on COMMAND ${_po_expect} 2 "--remodel goes with --run DIR"
         -- $<TARGET_FILE:rooflab> model --predict-on ${_po_base}/gate-zen5/machine.json ${_po_base}/gate --remodel)
set_tests_properties(cli_model_remodel cli_model_remodel_no_machine cli_model_remodel_predict_on PROPERTIES LABELS integration)
