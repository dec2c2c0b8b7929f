# Sinkhorn-Knopp kernels vs the long-double reference, verification, family table; threads,
# the fused variants, full solves; the POT comparison (integration, skipped without POT).
rooflab_unit_test(test_sinkhorn
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sinkhorn/test_sinkhorn.cpp
  LIBS rooflab_core rooflab_sinkhorn)
rooflab_unit_test(test_sinkhorn_fused
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sinkhorn/test_fused.cpp
  LIBS rooflab_core rooflab_sinkhorn)
rooflab_unit_test(test_sinkhorn_solve
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sinkhorn/test_solve.cpp
  LIBS rooflab_apps)

add_executable(sinkhorn_solve_cli ${CMAKE_CURRENT_LIST_DIR}/sinkhorn/solve_cli.cpp)
target_link_libraries(sinkhorn_solve_cli PRIVATE rooflab_apps)
# The plots venv (system site packages: Debian's python3-pot) if there is one, as plots.cmake.
if(EXISTS "${PROJECT_SOURCE_DIR}/.venv/bin/python")
  set(_sk_python "${PROJECT_SOURCE_DIR}/.venv/bin/python")
else()
  find_package(Python3 COMPONENTS Interpreter)
  set(_sk_python "${Python3_EXECUTABLE}")
endif()
if(_sk_python)
  add_test(NAME sinkhorn_pot_agreement
    COMMAND ${_sk_python} ${CMAKE_CURRENT_LIST_DIR}/sinkhorn/test_pot.py $<TARGET_FILE:sinkhorn_solve_cli>)
  set_tests_properties(sinkhorn_pot_agreement PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 300)
endif()

# The kernels' code alignment reaches their objects (ROOFLAB_CODE_ALIGN; off: nothing to check).
rooflab_code_align_test(sinkhorn_code_align LIB rooflab_sinkhorn
  OBJECTS c2r blocked typical common microkernel_avx2 microkernel_avx512)
