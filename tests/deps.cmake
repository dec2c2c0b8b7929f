# Optional dependencies: configure succeeds with each one hidden or broken, and reports it off
# with the reason (tests/deps/optional_deps.sh). Building and testing with all of them off is
# .ci/run's host step.
# The build's own switches are passed on, so "the others unchanged" compares like with like.
set(_with "")
foreach(_d ${ROOFLAB_OPTIONAL_DEPS})
  if(NOT _d STREQUAL "CUDA")
    list(APPEND _with -DROOFLAB_WITH_${_d}=${ROOFLAB_WITH_${_d}})
  endif()
endforeach()
add_test(NAME deps_optional_hidden_or_broken
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/deps/optional_deps.sh ${PROJECT_SOURCE_DIR}
                 ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/deps_tmp ${_with})
set_tests_properties(deps_optional_hidden_or_broken PROPERTIES LABELS integration TIMEOUT 600)
rooflab_test_cost(70 deps_optional_hidden_or_broken)
