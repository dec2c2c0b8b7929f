# sfc_ca knob selection (kernels/gemm/knobs.hpp): grid, cache file, nearest neighbour, the
# analytic model on hand-checkable cases, knobs:<method> cases, bad input; CLI errors.
rooflab_unit_test(test_gemm_knobs
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/gemm/test_knobs.cpp
  LIBS rooflab_apps)

# `rooflab gemm-knobs`: bad input gives one clear message and the exit code; a tiny end to end
# (build-nn over 2^3 shapes, evaluate 3 random shapes against it, scalar ISA, 1 repetition).
set(_gk_rl $<TARGET_FILE:rooflab>)
set(_gk_tmp ${CMAKE_CURRENT_BINARY_DIR}/gemm_knobs_tmp)
set(_gk_machine ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/run_small/machine.json)
function(gemm_knobs_cli_test name code regex)
  add_test(NAME cli_gemm_knobs_${name} COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect.sh ${code} ${regex} -- ${ARGN})
  set_tests_properties(cli_gemm_knobs_${name} PROPERTIES LABELS integration)
endfunction()
gemm_knobs_cli_test(no_args 2 "usage: rooflab gemm-knobs" ${_gk_rl} gemm-knobs)
gemm_knobs_cli_test(unknown 2 "unknown command 'frob'" ${_gk_rl} gemm-knobs frob)
gemm_knobs_cli_test(tune_no_shape 2 "needs --shape" ${_gk_rl} gemm-knobs tune)
gemm_knobs_cli_test(bad_grid 1 "must be an integer in .1, 4096., got '0'"
                    ${_gk_rl} gemm-knobs tune --shape 64x64x64 --grid kbf:0 --cache ${_gk_tmp}/c.json)
gemm_knobs_cli_test(bad_shape 1 "shape must be MxNxK" ${_gk_rl} gemm-knobs predict --shape 64x64)
gemm_knobs_cli_test(missing_machine 1 "run `rooflab characterize"
                    ${_gk_rl} gemm-knobs evaluate --shapes 3 --out ${_gk_tmp} --machine ${_gk_tmp}/none.json)
gemm_knobs_cli_test(missing_nn 1 "not found .made by `rooflab gemm-knobs"
                    ${_gk_rl} gemm-knobs evaluate --shapes 3 --out ${_gk_tmp} --machine ${_gk_machine}
                    --nn ${_gk_tmp}/none.json)
# predict at this CPU's widest ISA, with the committed NN set (autotuned at 2 threads, on an AVX2
# CPU): the analytic choice, and the nn choice also where the set has no entry of that ISA
# (AVX-512: the nearest avx2 entry, with a note).
gemm_knobs_cli_test(predict 0 "analytic: k_layers:[0-9]+/kbf:[0-9]+"
                    ${_gk_rl} gemm-knobs predict --shape 1000x777x513 --threads 2 --machine ${_gk_machine})
gemm_knobs_cli_test(predict_nn 0 "nn: +k_layers:[0-9]+/kbf:[0-9]+/bk:[0-9]+ +.neighbour [0-9]+x[0-9]+x[0-9]+ f64 [a-z0-9]+ threads:2"
                    ${_gk_rl} gemm-knobs predict --shape 1000x777x513 --threads 2 --machine ${_gk_machine})
# ... and at a thread count the set was not autotuned at: the nearest one's knobs, said so.
gemm_knobs_cli_test(predict_nn_threads 0 "no ([a-z0-9]+ )?threads:3 entry"
                    ${_gk_rl} gemm-knobs predict --shape 1000x777x513 --threads 3 --machine ${_gk_machine})
add_test(NAME cli_gemm_knobs_end_to_end COMMAND sh -c
  "rm -rf ${_gk_tmp}/e2e && ${_gk_rl} gemm-knobs build-nn --sizes 64,160 --isa scalar --threads 1 --reps 1 --wait-quiet 0 --out ${_gk_tmp}/e2e && ${_gk_rl} gemm-knobs evaluate --shapes 3 --min 64 --max 200 --isa scalar --threads 1 --reps 1 --wait-quiet 0 --out ${_gk_tmp}/e2e --machine ${_gk_machine} --nn ${_gk_tmp}/e2e/knobs_nn.json && grep -q within_3pct ${_gk_tmp}/e2e/gemm_knobs.json && grep -q rooflab.gemm_knobs/1 ${_gk_tmp}/e2e/knobs_nn.json")
set_tests_properties(cli_gemm_knobs_end_to_end PROPERTIES LABELS integration)

# The tight roofline is made by `rooflab model` (model.json's predictions.tight), no longer by a
# gemm-knobs subcommand; its numbers and their use by the plots: pytest, with the project's
# Python as the plots tests use.
gemm_knobs_cli_test(roofline_is_gone 2 "unknown command 'roofline'" ${_gk_rl} gemm-knobs roofline --run .)
# Deferred to the end of tests/: ROOFLAB_PYTHON is set by plots.cmake, which comes later.
function(_gemm_roofline_pytest)
  if(NOT ROOFLAB_PYTHON)
    return()
  endif()
  add_test(NAME plots.gemm_roofline
           COMMAND ${ROOFLAB_PYTHON} ${CMAKE_CURRENT_SOURCE_DIR}/plots/run_pytest.py
                   ${CMAKE_CURRENT_SOURCE_DIR}/gemm/test_gemm_roofline.py -q -p no:cacheprovider
           WORKING_DIRECTORY ${PROJECT_SOURCE_DIR})
  set_tests_properties(plots.gemm_roofline PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 300
                       ENVIRONMENT "MPLBACKEND=Agg;PYTHONDONTWRITEBYTECODE=1;ROOFLAB_BIN=$<TARGET_FILE:rooflab>")
endfunction()
cmake_language(DEFER CALL _gemm_roofline_pytest)

# build-nn keeps exactly the --sizes grid: a smaller grid over an existing set drops the rest.
# (Output to a file, not `| grep -q`: grep exiting early would SIGPIPE build-nn before it writes.)
add_test(NAME cli_gemm_knobs_build_nn_drops_other_sizes COMMAND sh -c
  "rm -rf ${_gk_tmp}/drop && ${_gk_rl} gemm-knobs build-nn --sizes 64,65 --isa scalar --threads 1 --reps 1 --wait-quiet 0 --out ${_gk_tmp}/drop && ${_gk_rl} gemm-knobs build-nn --sizes 64 --isa scalar --threads 1 --reps 1 --wait-quiet 0 --out ${_gk_tmp}/drop >${_gk_tmp}/drop/log 2>&1 && grep -q 'dropped 7 entries' ${_gk_tmp}/drop/log && test $(grep -c '\"timings\"' ${_gk_tmp}/drop/knobs_nn.json) -eq 1")
set_tests_properties(cli_gemm_knobs_build_nn_drops_other_sizes PROPERTIES LABELS integration)

# The one parser (harness/args) on every gemm-knobs subcommand: --help, bad numbers (inf / NaN
# reals, overflowing and negative integers), unknown options, output paths.
foreach(sub tune predict build-nn evaluate)
  gemm_knobs_cli_test(${sub}_help 0 "usage: rooflab gemm-knobs ${sub}" ${_gk_rl} gemm-knobs ${sub} --help)
endforeach()
gemm_knobs_cli_test(wait_quiet_nan 2 "--wait-quiet must be a finite number in \\[0, 3600\\], got 'nan'"
                    ${_gk_rl} gemm-knobs tune --shape 64x64x64 --wait-quiet nan)
gemm_knobs_cli_test(quiet_budget_inf 2 "--quiet-budget must be a finite number in \\[0, 86400\\], got 'inf'"
                    ${_gk_rl} gemm-knobs tune --shape 64x64x64 --quiet-budget inf)
gemm_knobs_cli_test(reps_negative 2 "--reps must be an integer in \\[1, 1000\\], got '-3'"
                    ${_gk_rl} gemm-knobs tune --shape 64x64x64 --reps -3)
gemm_knobs_cli_test(threads_2_63 2 "--threads must be an integer in \\[1, 1024\\], got '9223372036854775808'"
                    ${_gk_rl} gemm-knobs tune --shape 64x64x64 --threads 9223372036854775808)
gemm_knobs_cli_test(shapes_junk 2 "--shapes must be an integer in \\[1, 100000\\], got '3x'"
                    ${_gk_rl} gemm-knobs evaluate --shapes 3x --out ${_gk_tmp})
gemm_knobs_cli_test(unknown_option 2 "rooflab gemm-knobs predict: unknown option '--bogus'"
                    ${_gk_rl} gemm-knobs predict --shape 64x64x64 --bogus)
gemm_knobs_cli_test(out_under_file 1 "--out .*expect.sh/x: cannot create output directory"
                    ${_gk_rl} gemm-knobs build-nn --out ${CMAKE_CURRENT_SOURCE_DIR}/cli/expect.sh/x)
gemm_knobs_cli_test(evaluate_needs_out 2 "needs --out DIR" ${_gk_rl} gemm-knobs evaluate --shapes 3)
