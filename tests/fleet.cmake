# rooflab fleet (docs/fleet.md): the command line without Slurm (argument errors, the batch
# script of --dry-run, collect on a made-up run directory), and a fleet run on a real one-host
# Slurm (tests/fleet/local_slurm.sh: munge, slurmctld, two slurmd) that needs root and
# slurm-wlm + munge (scripts/install_deps.sh --with-test-tools), else skips (77) saying why.
if(TARGET rooflab)
  add_test(NAME fleet_cli COMMAND ${CMAKE_CURRENT_LIST_DIR}/fleet/cli.sh $<TARGET_FILE:rooflab>)
  set_tests_properties(fleet_cli PROPERTIES LABELS integration TIMEOUT 120)
  # Times kernels (a smoke characterize + the Floyd-Warshall cases, on each of the two nodes).
  add_test(NAME fleet_slurm_local COMMAND ${CMAKE_CURRENT_LIST_DIR}/fleet/slurm_local.sh $<TARGET_FILE:rooflab>)
  set_tests_properties(fleet_slurm_local PROPERTIES LABELS "integration;cluster" SKIP_RETURN_CODE 77 TIMEOUT 600
                       RUN_SERIAL TRUE)
  rooflab_test_cost(160 fleet_slurm_local)
endif()
