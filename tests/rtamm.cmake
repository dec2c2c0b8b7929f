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
rtamm_cli_test(unknown_sub 2 "unknown rtamm command 'frob'" ${_RL} rtamm frob)
rtamm_cli_test(bad_profile 2 "--profile must be quick or full" ${_RL} rtamm evaluate --machine ${_FIX}/machine.json --profile huge)
rtamm_cli_test(missing_units 1 "no .rtamm. unit costs: run .rooflab rtamm units --machine"
               ${_RL} rtamm evaluate --machine ${_FIX}/machine.json --shapes 6 --out ${_TMP})
rtamm_cli_test(calibrate_needs_units 1 "no .rtamm. unit costs: run .rooflab rtamm units --machine"
               ${_RL} rtamm calibrate --machine ${_FIX}/machine.json --shapes 6)
rtamm_cli_test(calibrate_bad_seed 2 "--seed must be in .2, " ${_RL} rtamm calibrate --machine ${_FIX}/machine.json --seed 1)
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
# tiny training shapes, evaluate 6 tiny shapes (every plan verified and timed), check the
# document (calibrated, none of its shapes in the training set), rescore it (no timing).
add_test(NAME rtamm_cli_units_evaluate COMMAND sh -c
  "t=$(${_UK} ${_RL} ${_FIX}/machine.json) && set -- $t && rm -rf ${_TMP}/e2e && mkdir -p ${_TMP}/e2e && cp ${_FIX}/machine.json ${_TMP}/e2e/machine.json && ${_RL} rtamm units --machine ${_TMP}/e2e/machine.json --threads 1 --pool $((2 * $1))x$((2 * $2))x64,$((4 * $1))x$((4 * $2))x32 && ${_RL} rtamm calibrate --machine ${_TMP}/e2e/machine.json --threads 1 --shapes 6 --samples 1 --base 8,16,24 --out ${_TMP}/e2e/train.json && grep -q '\"training_seed\"' ${_TMP}/e2e/machine.rtamm.json && cmp -s ${_FIX}/machine.json ${_TMP}/e2e/machine.json && grep -q '\"rooflab.rtamm_training/1\"' ${_TMP}/e2e/train.json && ${_RL} rtamm evaluate --machine ${_TMP}/e2e/machine.json --threads 1 --shapes 6 --base 8,16,24 --out ${_TMP}/e2e && grep -q '\"schema\": \"rooflab.rtamm/1\"' ${_TMP}/e2e/rtamm.json && grep -q '\"decision_accuracy\"' ${_TMP}/e2e/rtamm.json && grep -q '\"decision_accuracy_noise_aware\"' ${_TMP}/e2e/rtamm.json && grep -q '\"calibrated\": true' ${_TMP}/e2e/rtamm.json && grep -q '\"shapes_in_calibration_training_set\": 0' ${_TMP}/e2e/rtamm.json && grep -q '\"op_kernel_ns_per_flop\"' ${_TMP}/e2e/machine.rtamm.json && ${_RL} rtamm rescore --machine ${_TMP}/e2e/machine.json --in ${_TMP}/e2e/rtamm.json --out ${_TMP}/e2e/rescored.json && grep -q '\"rescored\"' ${_TMP}/e2e/rescored.json")
set_tests_properties(rtamm_cli_units_evaluate PROPERTIES LABELS integration TIMEOUT 300)
