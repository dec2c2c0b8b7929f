# RTAMM: plans exact at odd shapes, movement counts and cost formulas on hand-checked cases,
# the blocking pool's constraints, unit costs' JSON and bad input (units); the `rooflab rtamm`
# subcommand's bad input and a tiny end to end units -> evaluate run (CLI).
rooflab_unit_test(test_rtamm
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/rtamm/test_rtamm.cpp
  LIBS rooflab_apps)

set(_RL $<TARGET_FILE:rooflab>)
set(_EXPECT ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect.sh)
set(_FIX ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/rtamm)
set(_TMP ${CMAKE_CURRENT_BINARY_DIR}/rtamm_tmp)
function(rtamm_cli_test name code regex)
  add_test(NAME rtamm_cli_${name} COMMAND ${_EXPECT} ${code} ${regex} -- ${ARGN})
  set_tests_properties(rtamm_cli_${name} PROPERTIES LABELS integration)
endfunction()

rtamm_cli_test(help 0 "units +measure the unit costs" ${_RL} rtamm help)
rtamm_cli_test(no_machine 2 "needs --machine FILE" ${_RL} rtamm evaluate --shapes 6)
rtamm_cli_test(unknown_sub 2 "rooflab rtamm: unknown command 'frob'" ${_RL} rtamm frob)
rtamm_cli_test(bad_profile 2 "--profile must be smoke, quick or paper, got 'huge'" ${_RL} rtamm evaluate --machine ${_FIX}/machine.json --profile huge)
rtamm_cli_test(missing_units 1 "no .rtamm. unit costs: run .rooflab rtamm units --machine"
               ${_RL} rtamm evaluate --machine ${_FIX}/machine.json --shapes 6 --out ${_TMP})
rtamm_cli_test(calibrate_needs_units 1 "no .rtamm. unit costs: run .rooflab rtamm units --machine"
               ${_RL} rtamm calibrate --machine ${_FIX}/machine.json --shapes 6)
rtamm_cli_test(calibrate_bad_seed 2 "--seed must be an integer in .2, " ${_RL} rtamm calibrate --machine ${_FIX}/machine.json --seed 1)
rtamm_cli_test(empty_pool 1 "blocking pool is empty" ${_RL} rtamm pool --machine ${_FIX}/tiny_caches.json)
rtamm_cli_test(inconsistent_pool 1 "pool entry 7x16x64 is inconsistent.*multiple of MR"
               ${_RL} rtamm units --machine ${_FIX}/machine.json --pool 7x16x64)
rtamm_cli_test(bad_pool_syntax 2 "--pool entries must be MxNxK" ${_RL} rtamm units --machine ${_FIX}/machine.json --pool 12x16)
rtamm_cli_test(pool_ok 0 "static plan: mnk/" ${_RL} rtamm pool --machine ${_FIX}/machine.json)
# Blocking factors must be multiples of the micro-kernel's MR x NR, which depend on the CPU's
# best ISA (4x12 AVX2, 12x16 AVX-512, 4x4 scalar for f64): the tests read them from this build
# on this CPU (rtamm/ukernel.sh) and block with small multiples (2 MR x 2 NR: several blocks of
# 37x53x29 in every dimension).
set(_UK ${CMAKE_CURRENT_SOURCE_DIR}/rtamm/ukernel.sh)
add_test(NAME rtamm_cli_bench_plan COMMAND sh -c
  "t=$(${_UK} ${_RL} ${_FIX}/machine.json) && set -- $t && mb=$((2 * $1)) && nb=$((2 * $2)) && exec ${_EXPECT} 0 rtamm/mkn/f64/37x53x29/mcg:$mb/ncg:$nb/kcg:16 -- ${_RL} bench --case rtamm/mkn/f64/37x53x29/mcg:$mb/ncg:$nb/kcg:16/ahead:ab/ld:+1/threads:2 --out ${_TMP}/bench --benchmark_min_time=0.01")
set_tests_properties(rtamm_cli_bench_plan PROPERTIES LABELS integration)

# End to end: measure units for a two-triple pool (2 MR x 2 NR x 64, 4 MR x 4 NR x 32 of this
# CPU's micro-kernel) into a copy of the fixture, calibrate on 6
# tiny training shapes, fit again from its training sweep (--training-in, no timing), evaluate 6 tiny shapes (every plan verified and timed), check the
# document (calibrated, none of its shapes in the training set), rescore it (no timing).
add_test(NAME rtamm_cli_units_evaluate COMMAND sh -c
  "t=$(${_UK} ${_RL} ${_FIX}/machine.json) && set -- $t && rm -rf ${_TMP}/e2e && mkdir -p ${_TMP}/e2e && cp ${_FIX}/machine.json ${_TMP}/e2e/machine.json && ${_RL} rtamm units --machine ${_TMP}/e2e/machine.json --threads 1 --pool $((2 * $1))x$((2 * $2))x64,$((4 * $1))x$((4 * $2))x32 && ${_RL} rtamm calibrate --machine ${_TMP}/e2e/machine.json --threads 1 --shapes 6 --samples 1 --base 8,16,24 --out ${_TMP}/e2e && grep -q '\"training_seed\"' ${_TMP}/e2e/machine.rtamm_calibration.json && cmp -s ${_FIX}/machine.json ${_TMP}/e2e/machine.json && grep -q '\"rooflab.rtamm_training/1\"' ${_TMP}/e2e/rtamm_training.json && ${_RL} rtamm calibrate --machine ${_TMP}/e2e/machine.json --threads 1 --training-in ${_TMP}/e2e/rtamm_training.json && grep -q '\"training_from\"' ${_TMP}/e2e/machine.rtamm_calibration.json && ${_RL} rtamm evaluate --machine ${_TMP}/e2e/machine.json --threads 1 --shapes 6 --base 8,16,24 --out ${_TMP}/e2e && grep -q '\"schema\": \"rooflab.rtamm/1\"' ${_TMP}/e2e/rtamm.json && grep -q '\"decision_accuracy\"' ${_TMP}/e2e/rtamm.json && grep -q '\"decision_accuracy_noise_aware\"' ${_TMP}/e2e/rtamm.json && grep -q '\"decision_accuracy_remeasured\": [0-9]' ${_TMP}/e2e/rtamm.json && grep -q '\"miss_class\"' ${_TMP}/e2e/rtamm.json && grep -q '\"calibrated\": true' ${_TMP}/e2e/rtamm.json && grep -q '\"shapes_in_calibration_training_set\": 0' ${_TMP}/e2e/rtamm.json && grep -q '\"op_kernel_ns_per_flop\"' ${_TMP}/e2e/machine.rtamm.json && ${_RL} rtamm rescore --machine ${_TMP}/e2e/machine.json --in ${_TMP}/e2e/rtamm.json --out ${_TMP}/e2e && grep -q '\"rescored\"' ${_TMP}/e2e/rtamm_rescored.json && grep -q '\"decision_accuracy_remeasured\": null' ${_TMP}/e2e/rtamm_rescored.json")
set_tests_properties(rtamm_cli_units_evaluate PROPERTIES LABELS integration TIMEOUT 300)

# The one parser (harness/args) on every rtamm subcommand: --help, the profile vocabulary
# (smoke|quick|paper, as every command), reals that are inf / NaN, counts that overflow.
foreach(sub pool units evaluate calibrate rescore)
  rtamm_cli_test(${sub}_help 0 "usage: rooflab rtamm ${sub}" ${_RL} rtamm ${sub} --help)
endforeach()
rtamm_cli_test(profile_full_refused 2 "--profile must be smoke, quick or paper, got 'full'"
               ${_RL} rtamm units --machine ${_FIX}/machine.json --profile full)
rtamm_cli_test(quiet_budget_inf 2 "--quiet-budget must be a finite number in \\[0, 86400\\], got 'inf'"
               ${_RL} rtamm evaluate --machine ${_FIX}/machine.json --quiet-budget inf)
rtamm_cli_test(quiet_budget_nan 2 "--quiet-budget must be a finite number in \\[0, 86400\\], got 'nan'"
               ${_RL} rtamm evaluate --machine ${_FIX}/machine.json --quiet-budget nan)
rtamm_cli_test(shapes_overflow 2 "--shapes must be an integer in \\[1, 1000000\\], got '18446744073709551616'"
               ${_RL} rtamm evaluate --machine ${_FIX}/machine.json --shapes 18446744073709551616)
rtamm_cli_test(threads_negative 2 "--threads must be an integer in \\[1, 1024\\], got '-1'"
               ${_RL} rtamm units --machine ${_FIX}/machine.json --threads -1)
rtamm_cli_test(machine_missing 1 "--machine .*none.json not found. run `rooflab characterize`"
               ${_RL} rtamm pool --machine ${_TMP}/none.json)
rtamm_cli_test(training_in_wrong_schema 1 "expected .*rooflab.rtamm_training"
               ${_RL} rtamm calibrate --machine ${_FIX}/machine.json --training-in ${_FIX}/machine.json)
rtamm_cli_test(rescore_needs_out 2 "needs --out DIR" ${_RL} rtamm rescore --machine ${_FIX}/machine.json --in ${_FIX}/machine.json)

# The calibration is its own section tied to the units it was fitted on (rtamm/calibration_stale.sh).
add_test(NAME rtamm_cli_calibration_stale
         COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/rtamm/calibration_stale.sh ${_RL} ${_FIX}/machine.json ${_TMP}/stale)
set_tests_properties(rtamm_cli_calibration_stale PROPERTIES LABELS integration TIMEOUT 300)
