# Emulated hosts (scripts/hosts.sh): network namespaces joined by tc-shaped veth links, and
# real MPICH across them. The tests need root and iproute2 and make namespaces of their own
# (prefixes rlt and rlm, never a user's rl-*); without root or `ip netns`, or in a chroot (CI's
# fresh root), they skip (exit 77) saying why. Included from sinkhorn_mpi.cmake; the round
# trip needs no MPI.
add_test(NAME sinkhorn_mpi_hosts_roundtrip COMMAND ${CMAKE_CURRENT_LIST_DIR}/hosts/roundtrip.sh)
set_tests_properties(sinkhorn_mpi_hosts_roundtrip PROPERTIES LABELS integration SKIP_RETURN_CODE 77 TIMEOUT 60)
