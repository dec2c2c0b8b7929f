# Emulated hosts (scripts/hosts.sh): network namespaces joined by tc-shaped veth links, and
# real MPICH across them. The tests need root and iproute2 and make namespaces of their own
# (prefixes rlt and rlm, never a user's rl-*); without root or `ip netns`, or in a chroot (CI's
# fresh root), they skip (exit 77) saying why. Included from sinkhorn_mpi.cmake; the round
# trip needs no MPI.
add_test(NAME sinkhorn_mpi_hosts_roundtrip COMMAND ${CMAKE_CURRENT_LIST_DIR}/hosts/roundtrip.sh)
set_tests_properties(sinkhorn_mpi_hosts_roundtrip PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 60)
if(ROOFLAB_HAVE_MPI AND TARGET rooflab_mpi AND TARGET rooflab)
  add_test(NAME sinkhorn_mpi_hosts_run
           COMMAND ${CMAKE_CURRENT_LIST_DIR}/hosts/mpi.sh $<TARGET_FILE:rooflab> $<TARGET_FILE:rooflab_mpi>
                   ${CMAKE_CURRENT_BINARY_DIR}/hosts_mpi_tmp)
  set_tests_properties(sinkhorn_mpi_hosts_run PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 180)
endif()
