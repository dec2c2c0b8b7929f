# SimGrid SMPI (apps/smpi, scripts/smpi_platform.py, `rooflab mpi --simulate`): the platform
# generator (Python only, always runs), then, with SimGrid, the rooflab_smpi build and small
# simulated runs verified against the reference. Without SimGrid those say so and are
# skipped (exit 77).
set(_smpi_test ${CMAKE_CURRENT_LIST_DIR}/sinkhorn_smpi/test_smpi.py)
find_package(Python3 COMPONENTS Interpreter)
if(NOT Python3_Interpreter_FOUND)
  return()
endif()
foreach(_mode platform build runs pingpong injected)
  add_test(NAME sinkhorn_smpi_${_mode}
           COMMAND ${Python3_EXECUTABLE} ${_smpi_test} ${_mode} ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}
                   ${CMAKE_CURRENT_BINARY_DIR}/sinkhorn_smpi_tmp/${_mode})
  set_tests_properties(sinkhorn_smpi_${_mode} PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 300)
endforeach()
# The simulated runs go through `rooflab mpi --simulate` and need rooflab_smpi built.
if(TARGET rooflab_smpi)
  set_tests_properties(sinkhorn_smpi_build sinkhorn_smpi_runs sinkhorn_smpi_pingpong sinkhorn_smpi_injected
                       PROPERTIES REQUIRED_FILES "$<TARGET_FILE:rooflab_smpi>")
endif()
# scripts/witness.py (real MPICH on emulated hosts vs SMPI vs the model): its table on the
# committed fixture, and with the rooflab binary its model input through `rooflab model`.
set(_witness_rooflab none)
if(TARGET rooflab)
  set(_witness_rooflab $<TARGET_FILE:rooflab>)
endif()
add_test(NAME sinkhorn_mpi_witness_table
         COMMAND ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/witness/test_witness.py ${PROJECT_SOURCE_DIR}
                 ${_witness_rooflab} ${CMAKE_CURRENT_BINARY_DIR}/witness_tmp)
set_tests_properties(sinkhorn_mpi_witness_table PROPERTIES LABELS unit SKIP_RETURN_CODE 77 TIMEOUT 60)
