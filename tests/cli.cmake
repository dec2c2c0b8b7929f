# The CLI's bad-input behaviour: one clear message, a non-zero exit, never a crash.
set(RL $<TARGET_FILE:rooflab>)
set(EXPECT ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect.sh)
set(TMPD ${CMAKE_CURRENT_BINARY_DIR}/cli_tmp)
function(rooflab_cli_test name code regex)
  add_test(NAME cli_${name} COMMAND ${EXPECT} ${code} ${regex} -- ${ARGN})
  set_tests_properties(cli_${name} PROPERTIES LABELS integration)
endfunction()

rooflab_cli_test(no_args 2 "usage: rooflab" ${RL})
rooflab_cli_test(help 0 "commands:" ${RL} help)
rooflab_cli_test(unknown_command 2 "unknown command 'frobnicate'" ${RL} frobnicate)
rooflab_cli_test(unknown_option 2 "unknown option '--bogus'" ${RL} list --bogus)
rooflab_cli_test(unknown_profile 2 "unknown profile 'huge'" ${RL} list --profile huge)
rooflab_cli_test(list_filter_nomatch 1 "0 benchmarks" ${RL} list --filter no-such-thing)
rooflab_cli_test(list_ok 0 "sinkhorn/c2r/f64/4096x4096/part:col/threads:1" ${RL} list)
rooflab_cli_test(bad_regex 1 "bad filter regex" ${RL} list --filter "(unclosed")
rooflab_cli_test(bench_nomatch 1 "matches no benchmark" ${RL} bench --filter no-such-thing --out ${TMPD})
# Bad input to the registry, end to end: a pattern that makes a backtracking regex engine
# exponential (RE2 is linear: done at once), sizes whose product overflows 64 bits, thread
# counts that would wrap, knobs whose products would overflow.
rooflab_cli_test(catastrophic_filter 0 "benchmarks in profile quick matching" ${RL} list --filter "(.*)*(.*)*(.*)*x")
set_tests_properties(cli_catastrophic_filter PROPERTIES TIMEOUT 30)
rooflab_cli_test(bench_nomatch_google 1 "Failed to match any benchmarks" ${RL} bench --filter "(x+x+)+y" --out ${TMPD})
rooflab_cli_test(bench_size_overflow 1 "overflows 64 bits"
                 ${RL} bench --case gemm/ijk/f64/4294967296x4294967296x4294967296/threads:1 --out ${TMPD})
rooflab_cli_test(bench_threads_wrap 1 "threads:4294967297 is out of range"
                 ${RL} bench --case sinkhorn/c2r/f64/64x64/part:iter/threads:4294967297 --out ${TMPD})
rooflab_cli_test(bench_threads_limit 1 "threads must be in 1..64, got 100 .this process may not create more"
                 bash -c "ulimit -u 64 && exec ${RL} bench --case sinkhorn/c2r/f64/64x64/part:iter/threads:100 --out ${TMPD}")
rooflab_cli_test(bench_knob_overflow 1 "packed panels below"
                 ${RL} bench --case gemm/blocked/scalar/f64/64x64x64/mc:4611686018427387904/kc:4/threads:1 --out ${TMPD})
rooflab_cli_test(bench_bad_name 1 "bad benchmark name" ${RL} bench --case sinkhorn/c2r --out ${TMPD})
rooflab_cli_test(bench_unwritable_out 1 "cannot create output directory|not writable"
                 ${RL} bench --filter c2r --out /proc/rooflab-no)
rooflab_cli_test(bench_negative_size 1 "sizes must be positive"
                 ${RL} bench --case sinkhorn/c2r/f64/-5x4/part:iter/threads:1 --out ${TMPD})
rooflab_cli_test(bench_too_big 1 "memory"
                 ${RL} bench --case sinkhorn/c2r/f64/3000000x3000000/part:iter/threads:1 --out ${TMPD})
rooflab_cli_test(model_missing_bench 1 "not found. run .rooflab bench" ${RL} model --bench ${TMPD}/none.json)
rooflab_cli_test(model_missing_machine 1 "run `rooflab characterize`"
                 ${RL} model --bench ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/run_small/bench.json
                 --machine ${TMPD}/none.json --out ${TMPD}/m.json)
rooflab_cli_test(threads_not_int 2 "must be an integer" ${RL} characterize --threads two --out ${TMPD})
rooflab_cli_test(report_missing_dir 1 "does not exist" ${RL} report --run ${TMPD}/nope)
# compare runs plots/compare.py (its own tests are tests/plots/test_compare.py).
rooflab_cli_test(compare_missing 1 "not found .produce it with `rooflab bench"
                 ${RL} compare ${TMPD}/none.json ${TMPD}/none.json)
rooflab_cli_test(claims_missing_run 1 "does not exist" ${RL} claims --run ${TMPD}/nope)

# End to end on a tiny case: bench (verified, timed) -> model against the fixture machine.
add_test(NAME cli_bench_model_small COMMAND sh -c
  "${RL} bench --case sinkhorn/c2r/f64/37x53/part:iter/threads:1 --out ${TMPD}/e2e --benchmark_repetitions=2 --benchmark_min_time=0.01 && ${RL} model --bench ${TMPD}/e2e/bench.json --machine ${CMAKE_CURRENT_SOURCE_DIR}/core/fixture_machine.json --out ${TMPD}/e2e/model.json && grep -q '\"status\": \"ok\"' ${TMPD}/e2e/model.json && grep -q '\"efficiency\"' ${TMPD}/e2e/model.json")
set_tests_properties(cli_bench_model_small PROPERTIES LABELS integration)

# The smoke profile: listed like the others, and the rtamm commands take it (bad values are
# usage errors before any timing).
rooflab_cli_test(list_smoke 0 "sinkhorn/c2r/f64/131x77/part:iter/threads:1" ${RL} list --profile smoke)
rooflab_cli_test(list_smoke_gemm 0 "gemm/blocked/[a-z0-9]+/f64/131x97x67/threads:1" ${RL} list --profile smoke --filter ^gemm/)
rooflab_cli_test(unknown_profile_lists_smoke 2 "known: smoke, quick, paper" ${RL} list --profile huge)
rooflab_cli_test(rtamm_units_bad_profile 2 "--profile must be quick or full \\(or smoke"
                 ${RL} rtamm units --machine ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/rtamm/machine.json --profile huge)
rooflab_cli_test(rtamm_bad_quiet_budget 2 "--quiet-budget must be seconds"
                 ${RL} rtamm evaluate --machine ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/rtamm/machine.json
                 --profile smoke --quiet-budget -1)
