# Optional dependencies: configure succeeds with each one hidden or broken, and reports it off
# with the reason (tests/deps/optional_deps.sh). Building and testing with all of them off is
# .ci/run's host step.
add_test(NAME deps_optional_hidden_or_broken
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/deps/optional_deps.sh ${PROJECT_SOURCE_DIR}
                 ${PROJECT_BINARY_DIR} ${CMAKE_CURRENT_BINARY_DIR}/deps_tmp)
set_tests_properties(deps_optional_hidden_or_broken PROPERTIES LABELS integration TIMEOUT 600)
