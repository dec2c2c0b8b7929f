# Dependency discovery. Required: OpenMP, hwloc, Google Benchmark, nlohmann_json, RE2.
# Optional back ends: each has an option ROOFLAB_WITH_<NAME> (ON by default) and sets
# ROOFLAB_HAVE_<NAME> (CMake var + compile definition on rooflab_deps) only when it was found
# AND a test program using it compiles and links. A package that is missing, disabled, or
# present but broken (a config file that fails, a library that does not link) is reported
# off with its reason and never stops the configure: the families and back ends that need it
# are left out, the rest builds.
include(FindPkgConfig)
find_package(OpenMP REQUIRED)
find_package(benchmark REQUIRED)
find_package(nlohmann_json 3.9 REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)
# RE2: the --filter regexes (linear time: no pattern can hang the registry).
pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET re2)

add_library(rooflab_deps INTERFACE)
target_link_libraries(rooflab_deps INTERFACE OpenMP::OpenMP_CXX PkgConfig::HWLOC
                      nlohmann_json::nlohmann_json)

set(ROOFLAB_OPTIONAL_DEPS PAPI LIKWID VALGRIND MPI SIMGRID OPENBLAS BLIS DNNL LIBXSMM CUDA)
set(ROOFLAB_DEP_SUMMARY "")
foreach(_d ${ROOFLAB_OPTIONAL_DEPS})
  option(ROOFLAB_WITH_${_d} "Use ${_d} when found" ON)
endforeach()

# rooflab_dep_on(NAME "detail"): NAME is usable.
macro(rooflab_dep_on name detail)
  set(ROOFLAB_HAVE_${name} ON)
  target_compile_definitions(rooflab_deps INTERFACE ROOFLAB_HAVE_${name}=1)
  string(APPEND ROOFLAB_DEP_SUMMARY "  ${name}: found ${detail}\n")
endmacro()
# rooflab_dep_off(NAME "reason"): NAME is left out, with the reason in the summary.
macro(rooflab_dep_off name reason)
  set(ROOFLAB_HAVE_${name} OFF)
  string(APPEND ROOFLAB_DEP_SUMMARY "  ${name}: off (${reason})\n")
endmacro()

# rooflab_try_link(RESULT_VAR REASON_VAR CODE LIBS...): compiles and links CODE against LIBS
# (targets or files) in a throw-away project; on failure REASON_VAR holds the first error.
function(rooflab_try_link result_var reason_var code)
  try_compile(_ok SOURCE_FROM_CONTENT probe.cpp "${code}"
              LINK_LIBRARIES ${ARGN}
              CXX_STANDARD 20
              NO_CACHE
              OUTPUT_VARIABLE _out)
  set(${result_var} ${_ok} PARENT_SCOPE)
  set(_why "")
  if(NOT _ok)
    string(REGEX MATCH "[^\n]*(error|undefined reference)[^\n]*" _why "${_out}")
    string(STRIP "${_why}" _why)
    if(_why STREQUAL "")
      set(_why "the test program did not build")
    endif()
  endif()
  set(${reason_var} "${_why}" PARENT_SCOPE)
endfunction()

# rooflab_link_dep(NAME WHAT CODE LIBS...): NAME (found as WHAT) is on when CODE links against LIBS.
macro(rooflab_link_dep name what code)
  rooflab_try_link(_ok _why "${code}" ${ARGN})
  if(_ok)
    rooflab_dep_on(${name} "${what}")
  else()
    rooflab_dep_off(${name} "found ${what} but it does not link: ${_why}")
  endif()
endmacro()

# rooflab_pkg_dep(NAME MODULE HINT CODE [LIBS...]): a pkg-config package, on when the module
# is found and CODE links against PkgConfig::NAME (and LIBS).
macro(rooflab_pkg_dep name module hint code)
  if(NOT ROOFLAB_WITH_${name})
    rooflab_dep_off(${name} "disabled by -DROOFLAB_WITH_${name}=OFF")
  else()
    pkg_check_modules(${name} QUIET IMPORTED_TARGET ${module})
    if(NOT ${name}_FOUND)
      rooflab_dep_off(${name} "not found; Debian: ${hint}")
    else()
      rooflab_link_dep(${name} "${${name}_VERSION}" "${code}" PkgConfig::${name} ${ARGN})
    endif()
  endif()
endmacro()

# rooflab_probe_config(PKG RESULT_VAR REASON_VAR): find_package(PKG CONFIG) in a separate cmake
# process first, so a package config file that fails (Debian's dnnl-config.cmake calls
# find_package(OpenCL) and stops the configure when OpenCL's headers are absent) cannot fail
# ours.
function(rooflab_probe_config pkg result_var reason_var)
  if(CMAKE_DISABLE_FIND_PACKAGE_${pkg})
    set(${result_var} OFF PARENT_SCOPE)
    set(${reason_var} "hidden by CMAKE_DISABLE_FIND_PACKAGE_${pkg}" PARENT_SCOPE)
    return()
  endif()
  set(_dir ${CMAKE_BINARY_DIR}/rooflab-probe/${pkg})
  file(MAKE_DIRECTORY ${_dir}/src)
  file(WRITE ${_dir}/src/CMakeLists.txt
       "cmake_minimum_required(VERSION 3.25)\nproject(probe LANGUAGES C CXX)\n"
       "set(CMAKE_PREFIX_PATH [[${CMAKE_PREFIX_PATH}]])\n"
       "find_package(${pkg} CONFIG REQUIRED)\n")
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${_dir}/src -B ${_dir}/build
                          -DCMAKE_C_COMPILER=${CMAKE_C_COMPILER} -DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
  if(_rc EQUAL 0)
    set(${result_var} ON PARENT_SCOPE)
    set(${reason_var} "" PARENT_SCOPE)
    return()
  endif()
  set(${result_var} OFF PARENT_SCOPE)
  # The first line of the config's own error, else "not found".
  string(REGEX MATCH "CMake Error at [^\n]*\n+[ \t]*[^\n]+" _why "${_err}")
  string(REGEX REPLACE "\n[ \t]*" " " _why "${_why}")
  if(_why STREQUAL "" OR _err MATCHES "Could not find a package configuration file")
    set(_why "not found")
  else()
    set(_why "present but its config fails: ${_why}")
  endif()
  set(${reason_var} "${_why}" PARENT_SCOPE)
endfunction()

# --- PAPI ---------------------------------------------------------------------------------
rooflab_pkg_dep(PAPI papi libpapi-dev "#include <papi.h>\nint main() { return PAPI_is_initialized(); }\n")
if(ROOFLAB_HAVE_PAPI)
  target_link_libraries(rooflab_deps INTERFACE PkgConfig::PAPI)
endif()

# --- likwid (marker API) ------------------------------------------------------------------
if(NOT ROOFLAB_WITH_LIKWID)
  rooflab_dep_off(LIKWID "disabled by -DROOFLAB_WITH_LIKWID=OFF")
else()
  find_path(LIKWID_INCLUDE_DIR likwid-marker.h)
  find_library(LIKWID_LIBRARY likwid)
  if(NOT (LIKWID_INCLUDE_DIR AND LIKWID_LIBRARY))
    rooflab_dep_off(LIKWID "not found; Debian: likwid")
  else()
    add_library(rooflab_likwid INTERFACE IMPORTED)
    target_include_directories(rooflab_likwid INTERFACE ${LIKWID_INCLUDE_DIR})
    target_link_libraries(rooflab_likwid INTERFACE ${LIKWID_LIBRARY})
    target_compile_definitions(rooflab_likwid INTERFACE LIKWID_PERFMON)
    rooflab_try_link(_ok _why
      "#define LIKWID_PERFMON\n#include <likwid-marker.h>\n#include <likwid.h>\nint main() { void (*f)() = likwid_markerInit; return f == nullptr; }\n"
      rooflab_likwid)
    if(_ok)
      rooflab_dep_on(LIKWID "${LIKWID_LIBRARY}")
    else()
      rooflab_dep_off(LIKWID "found ${LIKWID_LIBRARY} but it does not link: ${_why}")
    endif()
  endif()
endif()
find_program(LIKWID_BENCH_EXECUTABLE likwid-bench)

# --- valgrind (cache simulation by a child process; the header makes the client requests) --
if(NOT ROOFLAB_WITH_VALGRIND)
  rooflab_dep_off(VALGRIND "disabled by -DROOFLAB_WITH_VALGRIND=OFF")
  set(VALGRIND_INCLUDE_DIR "")
else()
  find_program(VALGRIND_EXECUTABLE valgrind)
  find_path(VALGRIND_INCLUDE_DIR valgrind/callgrind.h)
  if(VALGRIND_EXECUTABLE)
    rooflab_dep_on(VALGRIND "${VALGRIND_EXECUTABLE}")
  else()
    rooflab_dep_off(VALGRIND "not found; Debian: valgrind")
  endif()
endif()

# --- MPI (FindMPI compiles a test program itself) -----------------------------------------
if(NOT ROOFLAB_WITH_MPI)
  rooflab_dep_off(MPI "disabled by -DROOFLAB_WITH_MPI=OFF")
else()
  find_package(MPI QUIET COMPONENTS CXX)
  if(MPI_CXX_FOUND)
    rooflab_dep_on(MPI "${MPI_CXX_VERSION}")
  else()
    rooflab_dep_off(MPI "not found or its compiler wrapper does not work; Debian: mpich libmpich-dev")
  endif()
endif()

# --- SimGrid SMPI: rooflab_smpi, the rooflab_mpi sources built against SMPI's mpi.h and
# run by smpirun on a simulated platform (`rooflab mpi --simulate`). Independent of MPICH.
if(NOT ROOFLAB_WITH_SIMGRID)
  rooflab_dep_off(SIMGRID "disabled by -DROOFLAB_WITH_SIMGRID=OFF")
elseif(ROOFLAB_SANITIZE)
  # smpirun dlopens the program into SimGrid's own process, which has no sanitizer runtime.
  rooflab_dep_off(SIMGRID "not with ROOFLAB_SANITIZE (smpirun loads the program into SimGrid's process)")
else()
  find_path(SIMGRID_SMPI_INCLUDE_DIR smpi/mpi.h)
  find_library(SIMGRID_LIBRARY simgrid)
  find_program(SMPIRUN_EXECUTABLE smpirun)
  if(NOT (SIMGRID_SMPI_INCLUDE_DIR AND SIMGRID_LIBRARY AND SMPIRUN_EXECUTABLE))
    rooflab_dep_off(SIMGRID "not found (smpi/mpi.h, libsimgrid, smpirun); Debian: libsimgrid-dev")
  else()
    add_library(rooflab_simgrid INTERFACE IMPORTED)
    # SMPI's mpi.h must win over MPICH's: its directory comes first.
    target_include_directories(rooflab_simgrid INTERFACE ${SIMGRID_SMPI_INCLUDE_DIR}/smpi ${SIMGRID_SMPI_INCLUDE_DIR})
    target_link_libraries(rooflab_simgrid INTERFACE ${SIMGRID_LIBRARY})
    rooflab_link_dep(SIMGRID "${SIMGRID_LIBRARY}"
      "#include <mpi.h>\n#include <simgrid/host.h>\nint main(int c, char** v) { MPI_Init(&c, &v); smpi_execute(0); return sg_host_core_count(sg_host_self()) < 0; }\n"
      rooflab_simgrid)
  endif()
endif()

# --- OpenBLAS -----------------------------------------------------------------------------
rooflab_pkg_dep(OPENBLAS openblas libopenblas-dev
  "#include <cblas.h>\nint main() { double a = 1, b = 1, c = 0; cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0, &a, 1, &b, 1, 0.0, &c, 1); return c != 1; }\n")

# --- BLIS: Debian's libblis-dev ships no pkg-config file, found by header + library. Its
# blis.h and cblas.h must only be seen by the BLIS baseline (its cblas.h would shadow
# OpenBLAS's).
if(NOT ROOFLAB_WITH_BLIS)
  rooflab_dep_off(BLIS "disabled by -DROOFLAB_WITH_BLIS=OFF")
else()
  find_path(ROOFLAB_BLIS_INCLUDE_DIR blis.h PATH_SUFFIXES blis-openmp blis blis-pthread
            PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
  find_library(ROOFLAB_BLIS_LIBRARY blis PATH_SUFFIXES blis-openmp blis-pthread)
  if(NOT (ROOFLAB_BLIS_INCLUDE_DIR AND ROOFLAB_BLIS_LIBRARY))
    rooflab_dep_off(BLIS "not found; Debian: libblis-dev")
  else()
    add_library(rooflab_blis_probe INTERFACE IMPORTED)
    target_include_directories(rooflab_blis_probe SYSTEM INTERFACE ${ROOFLAB_BLIS_INCLUDE_DIR})
    target_link_libraries(rooflab_blis_probe INTERFACE ${ROOFLAB_BLIS_LIBRARY})
    rooflab_link_dep(BLIS "${ROOFLAB_BLIS_LIBRARY}"
      "#include <blis.h>\nint main() { return bli_info_get_version_str() == nullptr; }\n"
      rooflab_blis_probe)
  endif()
endif()

# --- oneDNN -------------------------------------------------------------------------------
if(NOT ROOFLAB_WITH_DNNL)
  rooflab_dep_off(DNNL "disabled by -DROOFLAB_WITH_DNNL=OFF")
else()
  rooflab_probe_config(dnnl _cfg_ok _why)
  if(NOT _cfg_ok)
    rooflab_dep_off(DNNL "${_why}; Debian: libdnnl-dev ocl-icd-opencl-dev")
  else()
    find_package(dnnl QUIET CONFIG)
    rooflab_try_link(_ok _why "#include <dnnl.hpp>\nint main() { return dnnl_version() == nullptr; }\n"
                     DNNL::dnnl)
    if(_ok)
      rooflab_dep_on(DNNL "${dnnl_VERSION}")
    else()
      rooflab_dep_off(DNNL "found ${dnnl_VERSION} but it does not link: ${_why}")
    endif()
  endif()
endif()

# --- LIBXSMM: its BLAS wrappers (__real_dgemm_ ...) need a BLAS library at link time: OpenBLAS
# (rooflab_gemm links both).
if(ROOFLAB_WITH_LIBXSMM AND NOT ROOFLAB_HAVE_OPENBLAS)
  rooflab_dep_off(LIBXSMM "it needs a BLAS to link and OpenBLAS is off")
else()
  rooflab_pkg_dep(LIBXSMM libxsmm libxsmm-dev "#include <libxsmm.h>\nint main() { libxsmm_init(); return 0; }\n"
                  PkgConfig::OPENBLAS)
endif()

# --- CUDA (compiles the kernels; running them needs a device, checked at run time) --------
if(NOT ROOFLAB_WITH_CUDA)
  rooflab_dep_off(CUDA "disabled by -DROOFLAB_WITH_CUDA=OFF")
else()
  include(CheckLanguage)
  check_language(CUDA)  # compiles a CUDA program in a separate project: cannot fail ours
  if(NOT CMAKE_CUDA_COMPILER)
    rooflab_dep_off(CUDA "no working nvcc found; the CUDA toolkit")
  else()
    find_package(CUDAToolkit QUIET)
    if(CUDAToolkit_FOUND)
      rooflab_dep_on(CUDA "${CMAKE_CUDA_COMPILER}")
    else()
      rooflab_dep_off(CUDA "nvcc at ${CMAKE_CUDA_COMPILER} but no CUDA toolkit libraries")
    endif()
  endif()
endif()

message(STATUS "rooflab dependencies:\n${ROOFLAB_DEP_SUMMARY}")
# Machine-readable for tests and run_all.sh (one "NAME: found ..." / "NAME: off (...)" line each).
file(WRITE ${CMAKE_BINARY_DIR}/rooflab-deps.txt "${ROOFLAB_DEP_SUMMARY}")
