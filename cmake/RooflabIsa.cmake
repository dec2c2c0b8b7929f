# Per-ISA translation units: one binary runs on any x86-64 machine, and the harness picks
# the widest ISA the CPU has at run time (harness/isa.hpp). A file named *_avx2.cpp is built
# with AVX2+FMA, *_avx512.cpp with AVX-512 (F/VL/BW/DQ); everything else with the baseline.
function(rooflab_isa_flags)
  foreach(src ${ARGN})
    if(src MATCHES "_avx512\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS
        "-mavx512f;-mavx512vl;-mavx512bw;-mavx512dq;-mfma;-mavx2")
    elseif(src MATCHES "_avx2\\.cpp$")
      set_source_files_properties(${src} PROPERTIES COMPILE_OPTIONS "-mavx2;-mfma")
    endif()
  endforeach()
endfunction()
