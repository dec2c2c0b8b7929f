# ReFrame integration (integrations/reframe/): references.py on the stored gate runs, and ReFrame
# itself (reframe-hpc from plots/requirements-optional.txt, in the project's .venv) running the
# two tests with the local launcher, and rooflab_bench through a local Slurm; those are skipped
# (77) with the reason without reframe (and, for Slurm, without root or slurm-wlm / munge).
# ROOFLAB_PYTHON comes from plots.cmake.
if(NOT ROOFLAB_PYTHON)
  return()
endif()
add_test(NAME reframe.references
         COMMAND ${ROOFLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plots/run_pytest.py
                 ${CMAKE_CURRENT_SOURCE_DIR}/reframe/test_references.py -q -p no:cacheprovider
         WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
set_tests_properties(reframe.references PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 120)
if(TARGET rooflab)
  add_test(NAME reframe.local
           COMMAND ${ROOFLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plots/run_pytest.py --skip-if-none-ran
                   ${CMAKE_CURRENT_SOURCE_DIR}/reframe/test_reframe_local.py -q -p no:cacheprovider
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  # Three ReFrame sessions (four smoke characterizes in all, each with a tiny bench).
  set_tests_properties(reframe.local PROPERTIES LABELS "integration;cluster" SKIP_RETURN_CODE 77 TIMEOUT 900
                       ENVIRONMENT "ROOFLAB_BIN=$<TARGET_FILE:rooflab>;ROOFLAB_PYTEST_NEEDS=reframe;PYTHONDONTWRITEBYTECODE=1")
  rooflab_test_cost(550 reframe.local)
  # rooflab_bench through a real one-host Slurm (tests/fleet/local_slurm.sh; settings.py's
  # cluster:compute partition, srun): ~30 s. Skipped (77) without root, slurm-wlm/munge or reframe.
  add_test(NAME reframe.slurm_local
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/reframe/slurm_local.sh $<TARGET_FILE:rooflab> ${ROOFLAB_PYTHON})
  set_tests_properties(reframe.slurm_local PROPERTIES LABELS "integration;cluster" SKIP_RETURN_CODE 77 TIMEOUT 300)
  rooflab_test_cost(120 reframe.slurm_local)
endif()
