# Distributed Sinkhorn (kernels/sinkhorn/mpi): every design against the single-node
# long-double reference over P = 1..8 ranks and emulated nodes of R = 1..4 ranks, M not
# divisible by P, N not divisible by the chunk count, f64 and f32; edge shapes; bad input.
# Oversubscribed on small machines (MPICH's hydra allows it); sizes are tiny, so the whole
# set takes well under two minutes on two cores. Every test has a TIMEOUT: a hang fails.
include(${CMAKE_CURRENT_LIST_DIR}/hosts.cmake)  # emulated hosts: the round trip runs without MPI too
if(NOT ROOFLAB_HAVE_MPI OR NOT TARGET rooflab_mpi)
  return()
endif()

# The alpha-beta-gamma model's formulas (no MPI calls; links MPI for the header's types).
rooflab_unit_test(test_sinkhorn_mpi_model
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/sinkhorn_mpi/test_model.cpp
  LIBS rooflab_core rooflab_sinkhorn_mpi)

set(_mpi_bin $<TARGET_FILE:rooflab_mpi>)
set(_mpi_expect ${CMAKE_CURRENT_LIST_DIR}/cli/expect.sh)  # CODE REGEX -- command (exit code + output)
set(_mpi_tmp ${CMAKE_CURRENT_BINARY_DIR}/sinkhorn_mpi_tmp)
file(MAKE_DIRECTORY ${_mpi_tmp})

# rooflab_mpi_test(name NP code regex args...): mpiexec -n NP rooflab_mpi args.
function(rooflab_mpi_test name np code regex)
  add_test(NAME sinkhorn_mpi_${name}
           COMMAND ${_mpi_expect} ${code} ${regex} -- ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${np}
                   ${_mpi_bin} ${ARGN})
  set_tests_properties(sinkhorn_mpi_${name} PROPERTIES LABELS integration TIMEOUT 60)
endfunction()

# A correct run: exit 0 and rank 0's JSON says the gathered matrix matches the reference.
set(_ok "\"ok\": true")
foreach(P RANGE 1 8)
  foreach(dtype f64 f32)
    # f64: 37x53 with 3 chunks; f32: 37x29 with 4 chunks (37 and 53, 29 are prime).
    if(dtype STREQUAL f64)
      set(size 37x53)
      set(C 3)
    else()
      set(size 37x29)
      set(C 4)
    endif()
    # mpich and ring do not look at nodes: one run each.
    foreach(design mpich ring)
      rooflab_mpi_test(${design}_p${P}_${dtype} ${P} 0 "${_ok}"
                       --design ${design} --size ${size} --dtype ${dtype} --iters 1 --verify)
    endforeach()
    foreach(R RANGE 1 4)
      math(EXPR rem "${P} % ${R}")
      if(rem EQUAL 0)
        foreach(design salar coffee)
          rooflab_mpi_test(${design}_p${P}_r${R}_${dtype} ${P} 0 "${_ok}"
                           --design ${design} --size ${size} --dtype ${dtype} --ranks-per-node ${R}
                           --chunks ${C} --iters 1 --verify)
        endforeach()
      endif()
    endforeach()
  endforeach()
endforeach()

# Edge shapes: N < P (empty ring segments); chunks of one column split into 4 node parts
# (empty parts); nodes from MPI_COMM_TYPE_SHARED (no --ranks-per-node); unbalanced fi;
# another single-node kernel; the scalar microkernel.
rooflab_mpi_test(ring_n_lt_p 8 0 "${_ok}" --design ring --size 37x3 --iters 1 --verify)
rooflab_mpi_test(coffee_empty_parts 8 0 "${_ok}" --design coffee --size 37x5 --ranks-per-node 4 --chunks 5 --iters 1 --verify)
rooflab_mpi_test(salar_empty_parts 8 0 "${_ok}" --design salar --size 37x5 --ranks-per-node 4 --chunks 5 --iters 1 --verify)
rooflab_mpi_test(coffee_shared_nodes 5 0 "${_ok}" --design coffee --size 37x53 --chunks 2 --iters 1 --verify)
rooflab_mpi_test(coffee_fi 4 0 "${_ok}" --design coffee --size 37x53 --ranks-per-node 2 --chunks 3 --fi 0.5 --iters 1 --verify)
rooflab_mpi_test(salar_c2r 3 0 "${_ok}" --design salar --size 37x53 --ranks-per-node 3 --chunks 2 --variant c2r --iters 1 --verify)
rooflab_mpi_test(coffee_scalar_isa 6 0 "${_ok}" --design coffee --size 37x53 --ranks-per-node 3 --chunks 4 --isa scalar --dtype f32 --iters 1 --verify)

# COFFEE's ablation switches (Fig. 16): the binomial MPI_Reduce in place of the balanced
# reduce-scatter, the column modify after the allreduce instead of overlapped.
rooflab_mpi_test(coffee_reduce_mpi 6 0 "${_ok}" --design coffee --size 37x53 --ranks-per-node 3 --chunks 3 --node-reduce mpi --iters 1 --verify)
rooflab_mpi_test(coffee_no_overlap 4 0 "${_ok}" --design coffee --size 37x29 --dtype f32 --ranks-per-node 4 --chunks 4 --no-overlap --iters 1 --verify)
rooflab_mpi_test(coffee_ablation_name 4 0 "coffee/f64/37x53/ranks:4/rpn:2/chunks:2/reduce:mpi/overlap:off/threads:1"
                 --design coffee --size 37x53 --ranks-per-node 2 --chunks 2 --node-reduce mpi --no-overlap --iters 1 --verify)

# --wait yield: every call of the designs posted non-blocking and completed by MPI_Test +
# sched_yield (the mpich design through MPI_Iallreduce), so the results must not change.
foreach(design mpich ring)
  rooflab_mpi_test(${design}_yield 5 0 "${_ok}" --design ${design} --size 37x53 --iters 1 --verify --wait yield)
endforeach()
foreach(design salar coffee)
  rooflab_mpi_test(${design}_yield 6 0 "${_ok}" --design ${design} --size 37x53 --ranks-per-node 3 --chunks 3
                   --iters 1 --verify --wait yield)
endforeach()
rooflab_mpi_test(coffee_reduce_mpi_yield 4 0 "${_ok}" --design coffee --size 37x29 --dtype f32 --ranks-per-node 4
                 --chunks 2 --node-reduce mpi --no-overlap --iters 1 --verify --wait yield)
rooflab_mpi_test(yield_name 2 0 "ring/f64/37x53/ranks:2/rpn:2/chunks:1/wait:yield/threads:1"
                 --design ring --size 37x53 --iters 1 --wait yield)

# The leaders' allreduce blocking (MPI_Allreduce instead of MPI_Iallreduce): same results.
foreach(design salar coffee)
  rooflab_mpi_test(${design}_blocking_leaders 6 0 "${_ok}" --design ${design} --size 37x53 --ranks-per-node 2 --chunks 3
                   --iters 1 --verify --leaders allreduce)
endforeach()

# Verification can fail: rank 0's local column sums corrupted before the allreduce.
rooflab_mpi_test(fault_detected 4 3 "verification failed: worst relative error"
                 --design coffee --size 37x53 --ranks-per-node 2 --chunks 3 --iters 1 --verify --fault)

# Bad input: one message from rank 0, exit 2 on every rank (mpiexec returns it), no hang.
rooflab_mpi_test(bad_ranks_gt_rows 4 2 "more ranks \\(4\\) than rows" --design mpich --size 3x8)
rooflab_mpi_test(bad_chunks_gt_n 2 2 "--chunks 9 is larger than N = 8" --design salar --size 30x8 --chunks 9)
rooflab_mpi_test(bad_rpn 3 2 "--ranks-per-node 2 does not divide the 3 ranks" --design coffee --size 30x8 --ranks-per-node 2)
rooflab_mpi_test(bad_design 2 2 "--design must be mpich, ring, salar or coffee, got 'foo'" --design foo --size 30x8)
rooflab_mpi_test(bad_size 2 2 "--size must be MxN, got '30'" --design ring --size 30)
rooflab_mpi_test(bad_pingpong_one_rank 1 2 "--pingpong needs at least 2 ranks" --pingpong)
rooflab_mpi_test(bad_overlap_switch 2 2 "--no-overlap and --node-reduce apply to coffee, not salar" --design salar --size 30x8 --no-overlap)
rooflab_mpi_test(bad_node_reduce 2 2 "--node-reduce must be balanced or mpi, got 'tree'" --design coffee --size 30x8 --node-reduce tree)
rooflab_mpi_test(bad_wait 2 2 "--wait must be spin or yield, got 'sleep'" --design ring --size 30x8 --wait sleep)
rooflab_mpi_test(bad_compute_injected 2 2 "--compute injected applies to rooflab_smpi" --design ring --size 30x8 --compute injected)
rooflab_mpi_test(bad_leaders_ring 2 2 "--leaders applies to salar and coffee, not ring" --design ring --size 30x8 --leaders allreduce)
rooflab_mpi_test(bad_inject_s 2 2 "--inject-s must be two positive seconds ROW,COL, got '1e-6,x'" --design ring --size 30x8 --inject-s 1e-6,x)
rooflab_mpi_test(bad_timeslice_one_rank 1 2 "--timeslice needs more ranks than CPUs \\(1 ranks" --timeslice)
rooflab_mpi_test(bad_timeslice_and_pingpong 2 2 "--pingpong and --timeslice are separate runs" --pingpong --timeslice)
rooflab_mpi_test(bad_pingpong_machine 2 2 "cannot read .*no-such.json .*rooflab characterize" --pingpong --machine ${_mpi_tmp}/no-such.json)

# The one parser (harness/args): inf / NaN, overflowing sizes, unknown options, --help (exit 0).
rooflab_mpi_test(bad_fi_nan 2 2 "--fi must be a finite number in \\(0, 1\\], got 'nan'" --design ring --size 30x8 --fi nan)
rooflab_mpi_test(bad_fi_inf 2 2 "--fi must be a finite number in \\(0, 1\\], got 'inf'" --design ring --size 30x8 --fi inf)
rooflab_mpi_test(bad_size_overflow 2 2 "--size M must be an integer in \\[1, 2147483647\\], got '2147483648'"
                 --design ring --size 2147483648x8)
rooflab_mpi_test(bad_iters_negative 2 2 "--iters must be an integer in \\[1, 1000000\\], got '-1'" --design ring --size 30x8 --iters -1)
rooflab_mpi_test(bad_chunks_junk 2 2 "--chunks must be an integer in .*got '2x'" --design salar --size 30x8 --chunks 2x)
rooflab_mpi_test(bad_unknown_option 2 2 "rooflab_mpi: unknown option '--bogus'" --design ring --size 30x8 --bogus)
rooflab_mpi_test(bad_missing_value 2 2 "--size needs a value" --design ring --size)
rooflab_mpi_test(bad_out_under_file 2 2 "--out .*expect.sh/x.json: .*expect.sh is not a directory"
                 --design ring --size 30x8 --out ${_mpi_expect}/x.json)
rooflab_mpi_test(bad_out_is_file 2 2 "--out .*expect.sh is a file, not a directory" --design ring --size 30x8 --out ${_mpi_expect})
rooflab_mpi_test(bad_pingpong_out_is_file 2 2 "--out .*expect.sh is a file, not a directory" --pingpong --out ${_mpi_expect})
rooflab_mpi_test(bad_model_missing 2 2 "--model .*none.json not found" --design ring --size 30x8 --model ${_mpi_tmp}/none.json)
rooflab_mpi_test(help 2 0 "usage: rooflab_mpi" --help)
# JSON output (written atomically by rank 0 into --out DIR, created if missing): the name
# grammar and the run's fields; then the ping-pong fit feeding the communication model of a run.
rooflab_mpi_test(json_out 4 0 "\"name\": \"sinkhorn_mpi/coffee/f32/37x53/ranks:4/rpn:2/chunks:3/threads:1\""
                 --design coffee --size 37x53 --dtype f32 --ranks-per-node 2 --chunks 3 --iters 2
                 --out ${_mpi_tmp}/coffee)
add_test(NAME sinkhorn_mpi_json_out_file COMMAND sh -c
  "rm -rf ${_mpi_tmp}/out_dir && \
   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${_mpi_bin} --design ring --size 37x53 --iters 1 --out ${_mpi_tmp}/out_dir/new >/dev/null && \
   grep -q '\"name\": \"sinkhorn_mpi/ring/f64/37x53/ranks:2/' ${_mpi_tmp}/out_dir/new/sinkhorn_mpi.json && \
   test \"$(ls -A ${_mpi_tmp}/out_dir/new)\" = sinkhorn_mpi.json")
set_tests_properties(sinkhorn_mpi_json_out_file PROPERTIES LABELS integration TIMEOUT 60)
find_package(Python3 COMPONENTS Interpreter)
# Calibration into a copy of a machine.json ("mpi" section, fit quality, the allreduce
# points), then runs predicting their allreduce from it: full and --comm-only.
add_test(NAME sinkhorn_mpi_model COMMAND sh -c
  "cp ${CMAKE_CURRENT_LIST_DIR}/fixtures/run_small/machine.json ${_mpi_tmp}/machine.json && \
   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 2 ${_mpi_bin} --pingpong --machine ${_mpi_tmp}/machine.json --out ${_mpi_tmp}/pp >/dev/null && \
   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4 ${_mpi_bin} --design salar --size 37x53 --ranks-per-node 2 --chunks 2 --iters 2 --model ${_mpi_tmp}/machine.json --out ${_mpi_tmp}/salar >/dev/null && \
   ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} 4 ${_mpi_bin} --design coffee --size 37x53 --ranks-per-node 2 --chunks 2 --iters 3 --comm-only --model ${_mpi_tmp}/pp/mpi_pingpong.json --out ${_mpi_tmp}/comm >/dev/null && \
   ${Python3_EXECUTABLE} ${CMAKE_CURRENT_LIST_DIR}/sinkhorn_mpi/check_model.py ${_mpi_tmp}")
set_tests_properties(sinkhorn_mpi_model PROPERTIES LABELS integration TIMEOUT 90)

# Core-sharing calibration (2 ranks per CPU, spinning for under a second): only where that is
# a handful of processes.
cmake_host_system_information(RESULT _mpi_cores QUERY NUMBER_OF_LOGICAL_CORES)
if(_mpi_cores LESS_EQUAL 8)
  math(EXPR _mpi_np "2 * ${_mpi_cores}")
  rooflab_mpi_test(timeslice ${_mpi_np} 0 "\"schema\": \"rooflab.mpi_timeslice/1\"" --timeslice --out ${_mpi_tmp}/ts)
endif()

# `rooflab mpi`: the command it runs, a real run through it, usage errors.
if(TARGET rooflab)
  set(_rl $<TARGET_FILE:rooflab>)
  add_test(NAME sinkhorn_mpi_cli_dry_run COMMAND ${_mpi_expect} 0 "mpiexec -n 3 .*/rooflab_mpi --design ring --size 9x7$"
           -- ${_rl} mpi --np 3 --dry-run --design ring --size 9x7)
  add_test(NAME sinkhorn_mpi_cli_run COMMAND ${_mpi_expect} 0 "${_ok}"
           -- ${_rl} mpi --np 3 --design coffee --size 19x11 --ranks-per-node 3 --chunks 2 --iters 1 --verify)
  add_test(NAME sinkhorn_mpi_cli_no_np COMMAND ${_mpi_expect} 2 "rooflab mpi: needs --np P"
           -- ${_rl} mpi --design ring --size 9x7)
  add_test(NAME sinkhorn_mpi_cli_bad_np COMMAND ${_mpi_expect} 2 "--np must be an integer in \\[1, 4096\\], got '0'"
           -- ${_rl} mpi --np 0 --design ring)
  add_test(NAME sinkhorn_mpi_cli_missing_bin COMMAND ${CMAKE_COMMAND} -E env ROOFLAB_MPI_BIN=${_mpi_tmp}/nothing
           ${_mpi_expect} 1 "ROOFLAB_MPI_BIN=.*nothing is not an executable file" -- ${_rl} mpi --np 2 --design ring)
  set_tests_properties(sinkhorn_mpi_cli_dry_run sinkhorn_mpi_cli_run sinkhorn_mpi_cli_no_np sinkhorn_mpi_cli_bad_np
                       sinkhorn_mpi_cli_missing_bin PROPERTIES LABELS integration TIMEOUT 60)
endif()

# `rooflab mpi` on the one parser: its --help, an overflowing rank count, rooflab_mpi's own
# --help reached after `--`.
if(TARGET rooflab)
  add_test(NAME sinkhorn_mpi_cli_help COMMAND ${_mpi_expect} 0 "usage: rooflab mpi" -- ${_rl} mpi --help)
  add_test(NAME sinkhorn_mpi_cli_np_overflow COMMAND ${_mpi_expect} 2 "--np must be an integer in \\[1, 4096\\], got '9223372036854775808'"
           -- ${_rl} mpi --np 9223372036854775808 --design ring)
  add_test(NAME sinkhorn_mpi_cli_passes_help COMMAND ${_mpi_expect} 0 "usage: rooflab_mpi"
           -- ${_rl} mpi --np 1 -- --help)
  set_tests_properties(sinkhorn_mpi_cli_help sinkhorn_mpi_cli_np_overflow sinkhorn_mpi_cli_passes_help
                       PROPERTIES LABELS integration TIMEOUT 60)
  # --hosts: the scripts/hosts.sh command it runs (the run itself: sinkhorn_mpi_hosts_run), and
  # the combinations it refuses.
  add_test(NAME sinkhorn_mpi_cli_hosts_dry_run COMMAND ${_mpi_expect} 0
           "scripts/hosts.sh mpiexec --mpiexec .*mpiexec --hosts 3 --ranks-per-host 2 -- .*/rooflab_mpi --design ring$"
           -- ${_rl} mpi --hosts 3 --ranks-per-host 2 --dry-run --design ring)
  add_test(NAME sinkhorn_mpi_cli_hosts_np_mismatch COMMAND ${_mpi_expect} 2
           "--np 3 is not --hosts x --ranks-per-host = 4" -- ${_rl} mpi --np 3 --hosts 2 --ranks-per-host 2 --design ring)
  add_test(NAME sinkhorn_mpi_cli_rph_without_hosts COMMAND ${_mpi_expect} 2
           "--ranks-per-host applies to --hosts" -- ${_rl} mpi --np 2 --ranks-per-host 2 --design ring)
  set_tests_properties(sinkhorn_mpi_cli_hosts_dry_run sinkhorn_mpi_cli_hosts_np_mismatch
                       sinkhorn_mpi_cli_rph_without_hosts PROPERTIES LABELS integration TIMEOUT 60)
endif()
