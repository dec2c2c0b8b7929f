rooflab_unit_test(test_registry SOURCES core/test_registry.cpp LIBS rooflab_core)
# `list --json`'s families block (apps/list.cpp): the registry as data for figures.
rooflab_unit_test(test_list SOURCES core/test_list.cpp LIBS rooflab_apps)
rooflab_unit_test(test_json_io SOURCES core/test_json_io.cpp core/test_diagnostics.cpp LIBS rooflab_core)
rooflab_unit_test(test_roofline SOURCES core/test_roofline.cpp LIBS rooflab_core)
target_compile_definitions(test_roofline PRIVATE ROOFLAB_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}")
rooflab_unit_test(test_quiet_budget SOURCES core/test_quiet_budget.cpp LIBS rooflab_core)
rooflab_unit_test(test_bad_json SOURCES core/test_bad_json.cpp LIBS rooflab_core)
# The one argument parser (harness/args): every option kind and every error class.
rooflab_unit_test(test_args SOURCES core/test_args.cpp LIBS rooflab_util)
rooflab_unit_test(test_measure SOURCES core/test_measure.cpp LIBS rooflab_core)
# The allocation policy of kernel and microbenchmark buffers (huge pages from 2 MiB).
rooflab_unit_test(test_buffer SOURCES core/test_buffer.cpp LIBS rooflab_util)
# Every family / variant / ISA / dtype of the registry verified at tiny odd sizes; links the
# family list only (no benchmark driver).
rooflab_unit_test(test_conformance SOURCES core/test_conformance.cpp LIBS rooflab_families)
# The MPI sweep's core-sharing model and claim rows (roofline/mpi_model), on tests/fixtures/mpi_run.
rooflab_unit_test(test_mpi_model SOURCES core/test_mpi_model.cpp LIBS rooflab_roofline)
target_compile_definitions(test_mpi_model PRIVATE ROOFLAB_TEST_DIR="${CMAKE_CURRENT_SOURCE_DIR}")
# The default ISA by measurement (harness/isa_choice): the rule, the section's checks, the profiles.
rooflab_unit_test(test_isa_choice SOURCES core/test_isa_choice.cpp LIBS rooflab_families)
