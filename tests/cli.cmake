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
rooflab_cli_test(unknown_profile 2 "--profile must be smoke, quick or paper, got 'huge'" ${RL} list --profile huge)
rooflab_cli_test(list_filter_nomatch 1 "0 benchmarks" ${RL} list --filter no-such-thing)
rooflab_cli_test(list_ok 0 "sinkhorn/c2r/f64/4096x4096/part:col/threads:1" ${RL} list)
# A filter that is not a regex is a usage error (exit 2) naming it.
rooflab_cli_test(bad_regex 2 "bad filter regex .\\(unclosed.: missing \\)" ${RL} list --filter "(unclosed")
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
rooflab_cli_test(bench_knob_overflow 1 "mc, kc, nc must be in 1..2.28"
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
                 --machine ${TMPD}/none.json --out ${TMPD}/m)
rooflab_cli_test(threads_not_int 2 "must be an integer" ${RL} characterize --threads two --out ${TMPD})
rooflab_cli_test(report_missing_dir 1 "does not exist" ${RL} report ${TMPD}/nope)
# compare runs plots/compare.py (its own tests are tests/plots/test_compare.py).
rooflab_cli_test(compare_missing 1 "not found .produce it with `rooflab bench"
                 ${RL} compare ${TMPD}/none.json ${TMPD}/none.json)
rooflab_cli_test(claims_missing_run 1 "does not exist" ${RL} claims ${TMPD}/nope)

# End to end on a tiny case: bench (verified, timed) -> model against the fixture machine.
# bench.json holds measurements only, even with --machine (whose roofline efficiency goes to
# the console); the prediction is in model.json, the one prediction file.
add_test(NAME cli_bench_json_has_no_prediction COMMAND sh -c
  "${RL} bench --case sinkhorn/c2r/f64/37x53/part:iter/threads:1 --machine ${CMAKE_CURRENT_SOURCE_DIR}/core/fixture_machine.json --out ${TMPD}/measured --benchmark_repetitions=2 --benchmark_min_time=0.01 > ${TMPD}/measured.txt && grep -q roofline_eff ${TMPD}/measured.txt && grep -q real_time ${TMPD}/measured/bench.json && ! grep -qE '\"predict|roofline_eff' ${TMPD}/measured/bench.json && ${RL} model --bench ${TMPD}/measured/bench.json --machine ${CMAKE_CURRENT_SOURCE_DIR}/core/fixture_machine.json --out ${TMPD}/measured > /dev/null && grep -q '\"predicted_s\": [0-9]' ${TMPD}/measured/model.json && grep -q '\"bandwidth_kernels\": \\[' ${TMPD}/measured/model.json && grep -q '\"status\": \"ok\"' ${TMPD}/measured/model.json && grep -q '\"efficiency\"' ${TMPD}/measured/model.json")
set_tests_properties(cli_bench_json_has_no_prediction PROPERTIES LABELS integration)

# The in-core calibration end to end: --calibration on adds the case's 4 Sinkhorn shapes, marked
# in bench.json; model keeps them apart (calibration_rows, not in rows or accuracy) and prices the
# case from them; a bad --calibration value is a usage error.
add_test(NAME cli_bench_calibration COMMAND sh -c
  "rm -rf ${TMPD}/calib && ${RL} bench --case sinkhorn/c2r/f64/37x53/part:iter/threads:1 --calibration on --out ${TMPD}/calib --benchmark_repetitions=1 --benchmark_min_time=0.001 > /dev/null 2>&1 && ${RL} model --bench ${TMPD}/calib/bench.json --machine ${CMAKE_CURRENT_SOURCE_DIR}/roofline/ecm_zen3_avx2.json --out ${TMPD}/calib > /dev/null && python3 -c \"import json; b=json.load(open('${TMPD}/calib/bench.json')); cal={x['rooflab']['name'] for x in b['benchmarks'] if x['rooflab']['calibration']}; assert len(cal) == 4 and b['calibration']['cases'] == 4, cal; m=json.load(open('${TMPD}/calib/model.json')); assert [r['name'] for r in m['rows']] == ['sinkhorn/c2r/f64/37x53/part:iter/threads:1'], m['rows']; assert {r['name'] for r in m['calibration_rows']} == cal; assert m['accuracy']['all']['cases'] == 1; e=m['rows'][0]['ecm']; assert e['in_core'] == 'calibration' and set(e['calibration']['cases']) == cal, e; print(e['in_core_source'])\"")
set_tests_properties(cli_bench_calibration PROPERTIES LABELS integration)
# The overlap probe end to end: gemm/blocked adds its calibration shape and a 768 x 768 probe
# (calibration_probe), which model never fits and reports as the fit's overlap source.
add_test(NAME cli_bench_overlap_probe COMMAND sh -c
  "rm -rf ${TMPD}/probe && ${RL} bench --case gemm/blocked/avx2/f64/520x520x256/threads:1 --calibration on --out ${TMPD}/probe --benchmark_repetitions=1 --benchmark_min_time=0.001 > /dev/null 2>&1 && ${RL} model --bench ${TMPD}/probe/bench.json --machine ${CMAKE_CURRENT_SOURCE_DIR}/roofline/ecm_zen3_avx2.json --out ${TMPD}/probe > /dev/null && python3 -c \"import json; b=json.load(open('${TMPD}/probe/bench.json')); p=[x['rooflab']['name'] for x in b['benchmarks'] if x['rooflab'].get('calibration_probe')]; assert p == ['gemm/blocked/avx2/f64/768x768x256/threads:1'], p; m=json.load(open('${TMPD}/probe/model.json')); c=m['rows'][0]['ecm']['calibration']; assert c['cases'] == ['gemm/blocked/avx2/f64/384x384x256/threads:1'], c; assert 0 <= c['overlap'] <= 1 and 'overlap_probe' in c, c; assert len(m['calibration_rows']) == 2\"")
set_tests_properties(cli_bench_overlap_probe PROPERTIES LABELS integration)
rooflab_cli_test(bench_calibration_bad 2 "calibration" ${RL} bench --case sinkhorn/c2r/f64/8x8/part:iter/threads:1 --calibration maybe --out ${TMPD})

# The smoke profile: listed like the others, and the rtamm commands take it (bad values are
# usage errors before any timing).
rooflab_cli_test(list_smoke 0 "sinkhorn/c2r/f64/131x77/part:iter/threads:1" ${RL} list --profile smoke)
rooflab_cli_test(list_smoke_gemm 0 "gemm/blocked/[a-z0-9]+/f64/131x97x67/threads:1" ${RL} list --profile smoke --filter ^gemm/)
rooflab_cli_test(unknown_profile_lists_smoke 2 "must be smoke, quick or paper" ${RL} list --profile huge)
rooflab_cli_test(rtamm_units_bad_profile 2 "--profile must be smoke, quick or paper"
                 ${RL} rtamm units --machine ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/rtamm/machine.json --profile huge)
rooflab_cli_test(rtamm_bad_quiet_budget 2 "--quiet-budget must be a finite number in \\[0, 86400\\], got '-1'"
                 ${RL} rtamm evaluate --machine ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/rtamm/machine.json
                 --profile smoke --quiet-budget -1)

# The one parser (harness/args) on every command: each class of bad input gives exit 2 (usage)
# or 1 (a path), one message naming the option and the value, and nothing is run.
# Numbers: junk, overflow, negative, zero, 2^31, 2^63, a fraction, out of range.
foreach(bad two 4x 1.5 -1 0 2147483648 4294967297 9223372036854775808 99999999999999999999 1025 "")
  string(MAKE_C_IDENTIFIER "threads_${bad}" _id)
  rooflab_cli_test(${_id} 2 "--threads must be an integer in \\[1, 1024\\], got '${bad}'"
                   ${RL} characterize --threads=${bad} --out ${TMPD})
endforeach()
# Unknown options and commands, missing values, stray arguments.
foreach(cmd list characterize bench model info)
  rooflab_cli_test(${cmd}_unknown_option 2 "rooflab ${cmd}: unknown option '--bogus'" ${RL} ${cmd} --bogus)
  rooflab_cli_test(${cmd}_help 0 "usage: rooflab ${cmd}" ${RL} ${cmd} --help)
endforeach()
rooflab_cli_test(missing_value 2 "--out needs a value \\(DIR\\)" ${RL} bench --out)
rooflab_cli_test(missing_value_option 2 "--filter needs a value \\(REGEX\\), got option '--verbose'"
                 ${RL} list --filter --verbose)
rooflab_cli_test(stray_argument 2 "unexpected argument 'extra'" ${RL} info extra)
# The CPUs of the process (what characterize measures on): a one-CPU mask shows as that CPU.
add_test(NAME cli_info_cpus COMMAND sh -c
  "c=$(awk '/^Cpus_allowed_list/ {split($2, a, /[-,]/); print a[1]}' /proc/self/status) && \
   taskset -c $c ${RL} info | grep -qx \"cpus of this process: $c ([0-9]* online)\"")
set_tests_properties(cli_info_cpus PROPERTIES LABELS integration)
rooflab_cli_test(flag_with_value 2 "--verbose is a flag" ${RL} list --verbose=yes)
rooflab_cli_test(model_needs_input 2 "needs --run DIR or --bench FILE" ${RL} model)
rooflab_cli_test(help_lists_table 0 "gpu-characterize +CUDA device" ${RL} --help)
# Output paths: under a regular file, a regular file, unwritable; a missing parent is created.
rooflab_cli_test(out_under_file 1 "--out .*expect.sh/sub: cannot create output directory.*is not a directory"
                 ${RL} bench --case sinkhorn/c2r/f64/8x8/part:iter/threads:1 --out ${EXPECT}/sub)
rooflab_cli_test(out_is_file 1 "--out .*expect.sh is a file, not a directory" ${RL} characterize --out ${EXPECT})
rooflab_cli_test(out_unwritable 1 "cannot create output directory|not writable"
                 ${RL} characterize --out /proc/rooflab-no/x)
rooflab_cli_test(model_out_is_file 1 "--out .*expect.sh is a file, not a directory"
                 ${RL} model --bench ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/run_small/bench.json --out ${EXPECT})
rooflab_cli_test(bench_machine_missing 1 "--machine .*none.json not found. run `rooflab characterize`"
                 ${RL} bench --case sinkhorn/c2r/f64/8x8/part:iter/threads:1 --machine ${TMPD}/none.json --out ${TMPD})
add_test(NAME cli_out_parent_created COMMAND sh -c
  "rm -rf ${TMPD}/created && ${RL} bench --case sinkhorn/c2r/f64/8x8/part:iter/threads:1 --out ${TMPD}/created/a/b --benchmark_repetitions=1 --benchmark_min_time=0.001 >/dev/null 2>&1 && test -s ${TMPD}/created/a/b/bench.json")
set_tests_properties(cli_out_parent_created PROPERTIES LABELS integration)
# `list --json`: every case with the facts a figure needs, no prediction (no machine).
rooflab_cli_test(list_json 0 "\"traffic\": \\[" ${RL} list --json --profile smoke --filter ^sinkhorn/c2r/)
# A case moves no bytes exactly when it declares no traffic (the peak family's register loops).
add_test(NAME cli_list_json_fields COMMAND sh -c
  "${RL} list --json --profile smoke 2>/dev/null | python3 -c \"import json,sys; d=json.load(sys.stdin); assert d['schema']=='rooflab.list/1' and d['cases']; need={'name','family','variant','isa','dtype','dims','params','threads','flops','bytes','traffic','working_set','compute_ceiling','model_note'}; bad=[c['name'] for c in d['cases'] if not need <= set(c) or c['flops'] < 0 or c['bytes'] < 0 or (c['bytes'] == 0) != (c['traffic'] == [])]; assert not bad, bad; print(len(d['cases']), 'cases')\"")
set_tests_properties(cli_list_json_fields PROPERTIES LABELS integration)
# list --json's families block: variants in table order, own kernel or library baseline, ISAs.
add_test(NAME cli_list_json_families COMMAND sh -c
  "${RL} list --json --profile smoke --filter ^gemm/ 2>/dev/null | python3 -c \"import json,sys; d=json.load(sys.stdin); o=d['isa_order']; g=[f for f in d['families'] if f['name']=='gemm'][0]; v={x['name']: x for x in g['variants']}; assert v['sfc_ca']['kind']=='own' and v['sfc_ca']['library'] is None and v['sfc_ca']['isas']==o; b=[x['library'] for x in g['variants'] if x['kind']=='baseline']; assert all(b) and set(b) <= {'openblas','blis','onednn'}, b; print(sorted(b))\"")
set_tests_properties(cli_list_json_families PROPERTIES LABELS integration)
rooflab_cli_test(list_json_nomatch 1 "0 benchmarks" ${RL} list --json --filter no-such-thing)
# `rooflab sinkhorn` reports the DRAM bytes of one iteration from the family model (part:iter):
# c2r 1 read + 2 updates of the M x N matrix + r, c; fused_uv one read of K + its vectors.
add_test(NAME cli_sinkhorn_bytes_per_iteration COMMAND sh -c
  "${RL} sinkhorn --grid 48x40 --reg 0.5 --variant c2r --max-iter 2 | python3 -c \"import json,sys; d=json.load(sys.stdin); assert d['bytes_per_iteration'] == (5*48*40 + 48 + 40)*8, d\" && ${RL} sinkhorn --grid 48x40 --reg 0.5 --variant fused_uv --dtype f32 --max-iter 2 | python3 -c \"import json,sys; d=json.load(sys.stdin); assert d['bytes_per_iteration'] == (48*40 + 2*48 + 3*40)*4, d\"")
set_tests_properties(cli_sinkhorn_bytes_per_iteration PROPERTIES LABELS integration)
# `rooflab sinkhorn`: inf / NaN are refused before any iteration (`--tol inf` must not
# "converge"), sizes that overflow or exceed the memory are refused before allocating.
foreach(bad inf -inf nan NaN 1e999 -1 x "")
  string(MAKE_C_IDENTIFIER "sinkhorn_tol_${bad}" _id)
  rooflab_cli_test(${_id} 2 "--tol must be a finite number >= 0, got '${bad}'" ${RL} sinkhorn --grid 4x4 --reg 1 --tol=${bad})
endforeach()
rooflab_cli_test(sinkhorn_reg_nan 2 "--reg must be a finite number, got 'nan'" ${RL} sinkhorn --grid 4x4 --reg nan)
rooflab_cli_test(sinkhorn_reg_m_zero 2 "--reg-m must be a finite number > 0, got '0'" ${RL} sinkhorn --grid 4x4 --reg 1 --reg-m 0)
rooflab_cli_test(sinkhorn_max_iter_overflow 2 "--max-iter must be an integer in .*got '99999999999999999999'"
                 ${RL} sinkhorn --grid 4x4 --reg 1 --max-iter 99999999999999999999)
rooflab_cli_test(sinkhorn_grid_overflow 1 "--grid 9223372036854775807x3 needs .* GB of memory, this machine has"
                 ${RL} sinkhorn --grid 9223372036854775807x3 --reg 1)
rooflab_cli_test(sinkhorn_grid_too_big 1 "--grid 3000000x3000000 needs .* GB of memory" ${RL} sinkhorn --grid 3000000x3000000 --reg 1)
rooflab_cli_test(sinkhorn_grid_junk 2 "--grid N must be an integer in .*got '4y'" ${RL} sinkhorn --grid 4x4y --reg 1)
rooflab_cli_test(sinkhorn_grid_negative 2 "--grid M must be an integer in .*got '-4'" ${RL} sinkhorn --grid -4x4 --reg 1)
rooflab_cli_test(sinkhorn_threads_wrap 2 "--threads must be an integer in \\[1, 1024\\], got '4294967297'"
                 ${RL} sinkhorn --grid 4x4 --reg 1 --threads 4294967297)
rooflab_cli_test(sinkhorn_missing_cost 1 "--cost .*none.txt not found" ${RL} sinkhorn --cost ${TMPD}/none.txt --reg 1)
rooflab_cli_test(sinkhorn_plan_under_file 1 "--plan .*expect.sh/p.txt: .*expect.sh is not a directory"
                 ${RL} sinkhorn --grid 4x4 --reg 1 --plan ${EXPECT}/p.txt)
rooflab_cli_test(sinkhorn_help 0 "--reg-m R" ${RL} sinkhorn --help)
rooflab_cli_test(sinkhorn_bad_variant 2 "--variant must be typical, c2r, blocked, microkernel, mapuot or fused_uv, got 'x'"
                 ${RL} sinkhorn --grid 4x4 --reg 1 --variant x)
# The Python commands' --help (argparse) through the table.
foreach(cmd report claims compare)
  rooflab_cli_test(${cmd}_help 0 "usage: rooflab ${cmd}" ${RL} ${cmd} --help)
endforeach()
rooflab_cli_test(version 0 "^rooflab [0-9]" ${RL} --version)
# Every class of bad input on every command at once (tests/cli/bad_inputs.sh prints the count
# of cases per class): each answers with exit 1 or 2 and one message, nothing else.
if(TARGET rooflab_mpi)
  set(_cli_mpi $<TARGET_FILE:rooflab_mpi>)
else()
  set(_cli_mpi none)
endif()
add_test(NAME cli_bad_inputs COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/bad_inputs.sh ${RL} ${_cli_mpi}
         ${PROJECT_SOURCE_DIR} ${TMPD}/bad_inputs ${MPIEXEC_EXECUTABLE})
set_tests_properties(cli_bad_inputs PROPERTIES LABELS integration TIMEOUT 600)
# Google Benchmark flags are checked where bench hands them over: a bad value is a usage error
# before anything is created or run (the output directory is not even made).
set(TINY sinkhorn/c2r/f64/37x53/part:iter/threads:1)
rooflab_cli_test(bench_gb_reps_negative 2 "--benchmark_repetitions=-1: must be an integer"
                 ${RL} bench --case ${TINY} --out ${TMPD}/gb --benchmark_repetitions=-1)
rooflab_cli_test(bench_gb_reps_text 2 "--benchmark_repetitions=abc: must be an integer"
                 ${RL} bench --case ${TINY} --out ${TMPD}/gb --benchmark_repetitions=abc)
rooflab_cli_test(bench_gb_min_time_negative 2 "--benchmark_min_time=-1: must be a number of seconds > 0"
                 ${RL} bench --case ${TINY} --out ${TMPD}/gb --benchmark_min_time=-1)
rooflab_cli_test(bench_gb_min_time_nan 2 "--benchmark_min_time=nan: must be a number of seconds > 0"
                 ${RL} bench --case ${TINY} --out ${TMPD}/gb --benchmark_min_time=nan)
rooflab_cli_test(bench_gb_unknown_flag 2 "--benchmark_frobnicate: unknown Google Benchmark flag"
                 ${RL} bench --case ${TINY} --out ${TMPD}/gb --benchmark_frobnicate)
rooflab_cli_test(bench_gb_bool_value 2 "--benchmark_list_tests=maybe: must be true or false"
                 ${RL} bench --case ${TINY} --out ${TMPD}/gb --benchmark_list_tests=maybe)
rooflab_cli_test(bench_gb_filter_nomatch 1 "--benchmark_filter=nothing-matches matches none"
                 ${RL} bench --case ${TINY} --out ${TMPD}/gb --benchmark_filter=nothing-matches)
add_test(NAME cli_bench_gb_bad_flag_creates_nothing COMMAND sh -c
  "rm -rf ${TMPD}/gb_none; ${RL} bench --case ${TINY} --out ${TMPD}/gb_none --benchmark_repetitions=-1 >${TMPD}/gb_none.out 2>${TMPD}/gb_none.err; rc=$?; test $rc = 2 && test ! -e ${TMPD}/gb_none && test ! -s ${TMPD}/gb_none.out")
set_tests_properties(cli_bench_gb_bad_flag_creates_nothing PROPERTIES LABELS integration)
# An interrupted bench keeps the finished cases: bench.json valid and marked, no temp file left.
add_test(NAME cli_bench_interrupt_sigint COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/bench_interrupt.sh ${RL} ${TMPD}/int_sigint INT)
add_test(NAME cli_bench_interrupt_sigterm COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/bench_interrupt.sh ${RL} ${TMPD}/int_sigterm TERM)
set_tests_properties(cli_bench_interrupt_sigint cli_bench_interrupt_sigterm PROPERTIES LABELS integration)
# Disturbed measurements (a test hook instead of real load): re-measured, marked, carried into
# model.json; the OpenMP wait policy of timed regions recorded in bench.json.
add_test(NAME cli_bench_disturbed COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/bench_disturbed.sh ${RL} ${TMPD}/disturbed
         ${CMAKE_CURRENT_SOURCE_DIR}/core/fixture_machine.json)
set_tests_properties(cli_bench_disturbed PROPERTIES LABELS integration)
# OMP_PROC_BIND through rooflab's re-execution, and a case with more threads than CPUs.
add_test(NAME cli_bench_omp_bind COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/bench_omp_bind.sh ${RL} ${TMPD}/omp_bind)
set_tests_properties(cli_bench_omp_bind PROPERTIES LABELS integration SKIP_RETURN_CODE 77)
# --rounds: every round's median recorded, the best round kept, a changed host speed reported
# (a test hook slows one round).
add_test(NAME cli_bench_rounds COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/bench_rounds.sh ${RL} ${TMPD}/rounds)
set_tests_properties(cli_bench_rounds PROPERTIES LABELS integration)
# A 2-thread case the OpenMP runtime caps at one thread: low CPU utilization, "threads idle".
add_test(NAME cli_bench_threads_idle COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/bench_threads_idle.sh ${RL} ${TMPD}/threads_idle)
set_tests_properties(cli_bench_threads_idle PROPERTIES LABELS integration)

# README.md: <= 12 KB, and its command table names every command of `rooflab --help`.
add_test(NAME cli_readme_commands COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli/readme_commands.sh
         $<TARGET_FILE:rooflab> ${PROJECT_SOURCE_DIR}/README.md)
set_tests_properties(cli_readme_commands PROPERTIES LABELS integration)

# The default ISA by measurement: `rooflab isa-calibrate` (bad input, then end to end).
rooflab_cli_test(isa_calibrate_no_machine 2 "--machine FILE is required" ${RL} isa-calibrate)
rooflab_cli_test(isa_calibrate_nomatch 2 "matches no ISA calibration case"
                 ${RL} isa-calibrate --machine ${CMAKE_CURRENT_SOURCE_DIR}/core/fixture_machine.json --filter no-such)
rooflab_cli_test(isa_calibrate_list 0 "floyd_warshall/simd/f32/512x512" ${RL} isa-calibrate --list)
add_test(NAME cli_isa_calibrate COMMAND ${CMAKE_CURRENT_LIST_DIR}/cli/isa_calibrate.sh
         ${RL} ${CMAKE_CURRENT_SOURCE_DIR}/core/fixture_machine.json ${TMPD}/isa_calibrate)
set_tests_properties(cli_isa_calibrate PROPERTIES LABELS integration)
