# Code alignment of the hot code (kernel families, bandwidth / compute microbenchmarks): GCC
# aligns loop heads and jump targets to 16 bytes at most, so where a hot loop lies within the
# 64-byte fetch / op-cache windows depended on everything linked before it: on Zen 4 the same
# c2r object code ran a column pass in 5.1 or 7.3 us by the link alone (docs/measuring.md,
# "Code alignment"). With 64 the objects' code sections are 64-byte aligned, so every loop
# keeps its offset mod 64 from the compile, and the hot ones start a window. Jump targets too:
# a vectorized loop laid out after the return and entered by a jump is a jump target to GCC,
# not a loop head (that padding follows a ret or jmp: never executed).
set(ROOFLAB_CODE_ALIGN 64 CACHE STRING "Align the kernels' and microbenchmarks' loop heads and jump targets to this many bytes (0: compiler default)")
if(ROOFLAB_CODE_ALIGN AND NOT ROOFLAB_CODE_ALIGN MATCHES "^(16|32|64)$")
  message(FATAL_ERROR "ROOFLAB_CODE_ALIGN must be 0, 16, 32 or 64, got '${ROOFLAB_CODE_ALIGN}'")
endif()

# rooflab_code_align(<target>): the target's C++ sources get the alignment (none when 0).
function(rooflab_code_align target)
  if(ROOFLAB_CODE_ALIGN)
    target_compile_options(${target} PRIVATE
      $<$<COMPILE_LANGUAGE:CXX>:-falign-loops=${ROOFLAB_CODE_ALIGN};-falign-jumps=${ROOFLAB_CODE_ALIGN}>)
  endif()
endfunction()
