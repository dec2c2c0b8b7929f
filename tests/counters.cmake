# Counter back ends: unit tests, and CLI tests of `rooflab counters` / `rooflab run-case`.
rooflab_unit_test(test_counters SOURCES counters/test_counters.cpp LIBS rooflab_counters)
target_compile_definitions(test_counters PRIVATE
  ROOFLAB_COUNTERS_FIXTURES="${CMAKE_CURRENT_SOURCE_DIR}/counters")
if(VALGRIND_INCLUDE_DIR)  # as rooflab_counters: the expected reasons follow the build
  target_compile_definitions(test_counters PRIVATE ROOFLAB_HAVE_CALLGRIND_H=1)
endif()
# Which case valgrind simulates for an avx512 case (its avx2 / scalar sibling).
rooflab_unit_test(test_counters_sibling SOURCES counters/test_sibling.cpp LIBS rooflab_counters)

if(TARGET rooflab)
  set(_cnt_dir ${CMAKE_CURRENT_BINARY_DIR}/counters_out)
  set(_cnt_check ${CMAKE_CURRENT_SOURCE_DIR}/counters/check_counters.py)
  find_package(Python3 REQUIRED COMPONENTS Interpreter)

  # run-case: verify + count; bad names are errors, not crashes.
  add_test(NAME counters.run_case_ok
           COMMAND rooflab run-case sinkhorn/c2r/f64/64x48/part:col/threads:1 --runs 1)
  add_test(NAME counters.run_case_bad_name COMMAND rooflab run-case sinkhorn/nope/f64/8x8/threads:1)
  set_tests_properties(counters.run_case_bad_name PROPERTIES
                       PASS_REGULAR_EXPRESSION "unknown variant 'nope'")
  add_test(NAME counters.run_case_bad_backend
           COMMAND rooflab run-case sinkhorn/c2r/f64/64x48/part:col/threads:1 --backend cachegrind)
  set_tests_properties(counters.run_case_bad_backend PROPERTIES
                       PASS_REGULAR_EXPRESSION "--backend must be none, papi or likwid")

  # PAPI / likwid: either they count (rows with events) or it is listed unavailable with a reason.
  add_test(NAME counters.inprocess_reports
           COMMAND ${Python3_EXECUTABLE} ${_cnt_check} inprocess $<TARGET_FILE:rooflab> ${_cnt_dir}/inprocess)
  set_tests_properties(counters.inprocess_reports PROPERTIES
                       ENVIRONMENT "ROOFLAB_TEST_HAVE_LIKWID=${ROOFLAB_HAVE_LIKWID}")

  # cachegrind end to end (valgrind, a few seconds; not in sanitizer builds, whose runtimes
  # refuse to run under valgrind): two runs into one directory (merging), then
  # the simulator's deterministic answer: column-wise access of a 1024-row matrix (typical)
  # misses L1 far more often than the row-wise c2r column pass.
  if(ROOFLAB_HAVE_VALGRIND AND VALGRIND_INCLUDE_DIR AND NOT ROOFLAB_SANITIZE)
    add_test(NAME counters.cachegrind_e2e
             COMMAND ${Python3_EXECUTABLE} ${_cnt_check} cachegrind $<TARGET_FILE:rooflab>
                     ${_cnt_dir}/cachegrind ${CMAKE_CURRENT_SOURCE_DIR}/counters/machine.json)
    set_tests_properties(counters.cachegrind_e2e PROPERTIES TIMEOUT 900)
  endif()
  set_tests_properties(counters.run_case_ok counters.run_case_bad_name
                       counters.run_case_bad_backend counters.inprocess_reports
                       PROPERTIES LABELS integration)
  if(TEST counters.cachegrind_e2e)
    set_tests_properties(counters.cachegrind_e2e PROPERTIES LABELS integration)
  endif()
endif()

# The one parser (harness/args): --help, bad numbers and choices are usage errors (exit 2).
if(TARGET rooflab)
  set(_cnt_expect ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect.sh)
  foreach(_cmd counters run-case)
    add_test(NAME counters.${_cmd}_help COMMAND ${_cnt_expect} 0 "usage: rooflab ${_cmd}" -- $<TARGET_FILE:rooflab> ${_cmd} --help)
    set_tests_properties(counters.${_cmd}_help PROPERTIES LABELS integration)
  endforeach()
  add_test(NAME counters.bad_runs COMMAND ${_cnt_expect} 2 "--runs must be an integer in \\[1, 10000\\], got '-1'"
           -- $<TARGET_FILE:rooflab> counters --runs -1)
  add_test(NAME counters.bad_timeout COMMAND ${_cnt_expect} 2 "--timeout must be an integer in \\[1, 86400\\], got '1e9'"
           -- $<TARGET_FILE:rooflab> counters --timeout 1e9)
  add_test(NAME counters.bad_ll_level COMMAND ${_cnt_expect} 2 "--ll-level must be L2 or L3, got 'L4'"
           -- $<TARGET_FILE:rooflab> counters --ll-level L4)
  add_test(NAME counters.run_case_needs_name COMMAND ${_cnt_expect} 2 "rooflab run-case: needs NAME"
           -- $<TARGET_FILE:rooflab> run-case --runs 1)
  add_test(NAME counters.run_case_runs_overflow COMMAND ${_cnt_expect} 2 "--runs must be an integer in \\[1, 1000000\\], got '4294967297'"
           -- $<TARGET_FILE:rooflab> run-case sinkhorn/c2r/f64/8x8/part:col/threads:1 --runs 4294967297)
  add_test(NAME counters.out_under_file COMMAND ${_cnt_expect} 1 "--out .*expect.sh/x: cannot create output directory"
           -- $<TARGET_FILE:rooflab> counters --out ${_cnt_expect}/x)
  set_tests_properties(counters.bad_runs counters.bad_timeout counters.bad_ll_level counters.run_case_needs_name
                       counters.run_case_runs_overflow counters.out_under_file PROPERTIES LABELS integration)
endif()
