# add_mpi_test(NAME <name> RANKS <n> COMMAND <program> <args...> [LABELS <labels...>])
#
# One CTest test: <program> started as <n> ranks by the mpirun of the MPI
# that find_package(MPI) found, oversubscribed (CI has 2 cores), on the
# shared-memory transports only (no network), allowed to run as root (CI
# runs as root; the environment variables say so without the flag, so the
# same line runs as any user). The test passes when every rank exits 0.
#
# Multi-rank tests take turns: they share RESOURCE_LOCK `mpi` (as the CLI's
# --mesh tests do, tests/cli/mesh.cmake), since two oversubscribed jobs on two
# cores only slow each other into timeouts, and PROCESSORS <n> keeps
# `ctest -j` from starting other tests beside one as if it were one process.
# Label `mpi`: `ctest -L mpi` runs them all.
function(add_mpi_test)
  cmake_parse_arguments(PARSE_ARGV 0 arg "" "NAME;RANKS" "COMMAND;LABELS")
  if(NOT arg_NAME OR NOT arg_RANKS OR NOT arg_COMMAND)
    message(FATAL_ERROR "add_mpi_test: NAME, RANKS and COMMAND are required")
  endif()
  add_test(NAME ${arg_NAME}
           COMMAND ${MPIEXEC_EXECUTABLE} ${MPIEXEC_NUMPROC_FLAG} ${arg_RANKS} --oversubscribe
                   --mca btl self,vader ${arg_COMMAND})
  set_tests_properties(${arg_NAME} PROPERTIES
    ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
    PROCESSORS ${arg_RANKS}
    RESOURCE_LOCK mpi
    TIMEOUT 300
    LABELS "mpi;${arg_LABELS}")
endfunction()
