# scripts/perf_gate.sh's usage errors (exit 2, one line naming the option) and a missing binary
# (exit 1), all before any timing. Its gating itself is rooflab compare's (tests/plots/test_compare.py).
function(perf_gate_usage_test name code regex)
  add_test(NAME perf_gate.${name}
           COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect.sh ${code} ${regex} -- ${PROJECT_SOURCE_DIR}/scripts/perf_gate.sh ${ARGN})
  set_tests_properties(perf_gate.${name} PROPERTIES LABELS integration)
endfunction()
perf_gate_usage_test(bogus_option 2 "unknown option '--bogus'" --bogus)
perf_gate_usage_test(baseline_no_value 2 "--baseline needs a value" --baseline)
perf_gate_usage_test(threshold_no_value 2 "--threshold needs a value" --threshold)
perf_gate_usage_test(runs_not_a_number 2 "--runs must be 1..99, got 'x'" --runs x)
perf_gate_usage_test(confirm_out_of_range 2 "--confirm must be 0..5, got '9'" --confirm 9)
perf_gate_usage_test(confirm_pause_not_a_number 2 "--confirm-pause must be 0..999 seconds, got '1s'" --confirm-pause 1s)
perf_gate_usage_test(runs_without_update 2 "--runs applies to --update-baseline only" --runs 3)
perf_gate_usage_test(missing_binary 1 "/nonexistent/rooflab not built" --rooflab /nonexistent/rooflab)
# Against a baseline from another CPU (cpu_of: name, ISAs, L1 / L2) a regression fails the gate only
# for a kernel of its cross_cpu list, against this CPU's for any; the rooflab it drives is a
# stand-in that times nothing.
add_test(NAME perf_gate.cross_cpu_baseline COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/perf_gate/cross_cpu.sh)
set_tests_properties(perf_gate.cross_cpu_baseline PROPERTIES LABELS integration)
