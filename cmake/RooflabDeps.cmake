# Dependency discovery. Required: OpenMP, hwloc, Google Benchmark, nlohmann_json.
# Optional back ends are found here and reported in one summary; each sets
# ROOFLAB_HAVE_<NAME> (CMake var + compile definition on rooflab_deps).
include(FindPkgConfig)
find_package(OpenMP REQUIRED)
find_package(benchmark REQUIRED)
find_package(nlohmann_json 3.9 REQUIRED)
pkg_check_modules(HWLOC REQUIRED IMPORTED_TARGET hwloc)

add_library(rooflab_deps INTERFACE)
target_link_libraries(rooflab_deps INTERFACE OpenMP::OpenMP_CXX PkgConfig::HWLOC
                      nlohmann_json::nlohmann_json)

set(ROOFLAB_DEP_SUMMARY "")
# rooflab_dep(NAME FOUND_VAR "detail"): FOUND_VAR is a variable *name* (true when it holds a
# non-false value such as ON or a path).
macro(rooflab_dep name found_var detail)
  set(_hint "${ARGN}")
  if(${found_var})
    set(ROOFLAB_HAVE_${name} ON)
    target_compile_definitions(rooflab_deps INTERFACE ROOFLAB_HAVE_${name}=1)
    string(APPEND ROOFLAB_DEP_SUMMARY "  ${name}: found ${detail}\n")
  else()
    set(ROOFLAB_HAVE_${name} OFF)
    string(APPEND ROOFLAB_DEP_SUMMARY "  ${name}: not found (optional; Debian: ${_hint})\n")
  endif()
endmacro()

option(ROOFLAB_WITH_PAPI "Use PAPI when found" ON)
option(ROOFLAB_WITH_LIKWID "Use the likwid marker API when found" ON)
option(ROOFLAB_WITH_MPI "Build MPI back ends when found" ON)
option(ROOFLAB_WITH_CUDA "Build CUDA back ends when nvcc is found" ON)

if(ROOFLAB_WITH_PAPI)
  pkg_check_modules(PAPI IMPORTED_TARGET papi)
endif()
rooflab_dep(PAPI PAPI_FOUND "${PAPI_VERSION}" "libpapi-dev")
if(PAPI_FOUND)
  target_link_libraries(rooflab_deps INTERFACE PkgConfig::PAPI)
endif()

if(ROOFLAB_WITH_LIKWID)
  find_path(LIKWID_INCLUDE_DIR likwid-marker.h)
  find_library(LIKWID_LIBRARY likwid)
endif()
if(LIKWID_INCLUDE_DIR AND LIKWID_LIBRARY)
  set(_likwid_found ON)
  rooflab_dep(LIKWID _likwid_found "${LIKWID_LIBRARY}")
  add_library(rooflab_likwid INTERFACE)
  target_include_directories(rooflab_likwid INTERFACE ${LIKWID_INCLUDE_DIR})
  target_link_libraries(rooflab_likwid INTERFACE ${LIKWID_LIBRARY})
  target_compile_definitions(rooflab_likwid INTERFACE LIKWID_PERFMON)
else()
  set(_likwid_found OFF)
  rooflab_dep(LIKWID _likwid_found "" "likwid")
endif()

find_program(LIKWID_BENCH_EXECUTABLE likwid-bench)
find_program(VALGRIND_EXECUTABLE valgrind)
find_path(VALGRIND_INCLUDE_DIR valgrind/callgrind.h)
rooflab_dep(VALGRIND VALGRIND_EXECUTABLE "${VALGRIND_EXECUTABLE}" "valgrind")

if(ROOFLAB_WITH_MPI)
  find_package(MPI QUIET COMPONENTS CXX)
endif()
rooflab_dep(MPI MPI_CXX_FOUND "${MPI_CXX_VERSION}" "mpich libmpich-dev")

pkg_check_modules(OPENBLAS QUIET IMPORTED_TARGET openblas)
rooflab_dep(OPENBLAS OPENBLAS_FOUND "${OPENBLAS_VERSION}" "libopenblas-dev")
# Debian's libblis-dev ships no pkg-config file: found by header + library. Its blis.h and
# cblas.h must only be seen by the BLIS baseline (its cblas.h would shadow OpenBLAS's).
find_path(ROOFLAB_BLIS_INCLUDE_DIR blis.h PATH_SUFFIXES blis-openmp blis blis-pthread
          PATHS /usr/include/${CMAKE_LIBRARY_ARCHITECTURE})
find_library(ROOFLAB_BLIS_LIBRARY blis PATH_SUFFIXES blis-openmp blis-pthread)
if(ROOFLAB_BLIS_INCLUDE_DIR AND ROOFLAB_BLIS_LIBRARY)
  set(_blis_found ON)
else()
  set(_blis_found OFF)
endif()
rooflab_dep(BLIS _blis_found "${ROOFLAB_BLIS_LIBRARY}" "libblis-dev")
find_package(dnnl QUIET CONFIG)
rooflab_dep(DNNL dnnl_FOUND "${dnnl_VERSION}" "libdnnl-dev")
pkg_check_modules(LIBXSMM QUIET IMPORTED_TARGET libxsmm)
rooflab_dep(LIBXSMM LIBXSMM_FOUND "${LIBXSMM_VERSION}" "libxsmm-dev")

if(ROOFLAB_WITH_CUDA)
  include(CheckLanguage)
  check_language(CUDA)
endif()
rooflab_dep(CUDA CMAKE_CUDA_COMPILER "${CMAKE_CUDA_COMPILER}" "nvidia-cuda-toolkit")

message(STATUS "rooflab dependencies:\n${ROOFLAB_DEP_SUMMARY}")
