# runtime: the access trace of CPU-emulated kernels, the sanitizer and the
# collectives between ranks (the backends themselves are listed in
# core/CMakeLists.txt).
target_sources(schedlab PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/access_trace.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cpu_trace.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sanitizer.cpp
  ${CMAKE_CURRENT_LIST_DIR}/work_estimate.cpp
  ${CMAKE_CURRENT_LIST_DIR}/communicator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/mpi_communicator.cpp
  ${CMAKE_CURRENT_LIST_DIR}/nccl_communicator.cpp
)
# MPI is a private dependency (no public header includes mpi.h); the static
# library passes it on to whatever links libschedlab. The launcher starts
# ranks with the mpirun of the MPI found here (PATH's when it is gone).
target_link_libraries(schedlab PRIVATE MPI::MPI_C)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/communicator.cpp PROPERTIES
  COMPILE_DEFINITIONS "SCHEDLAB_MPIEXEC=\"${MPIEXEC_EXECUTABLE}\"")
# mpi.h from C++ without the C++ bindings (libmpi_cxx).
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/mpi_communicator.cpp PROPERTIES
  COMPILE_DEFINITIONS "OMPI_SKIP_MPICXX;MPICH_SKIP_MPICXX")
# The shim's tracing half is device code: kept in a .cuh, embedded at build time.
set(SCHEDLAB_CPU_TRACE_TEXT ${CMAKE_CURRENT_BINARY_DIR}/generated/cpu_trace_text.cpp)
add_custom_command(
  OUTPUT ${SCHEDLAB_CPU_TRACE_TEXT}
  COMMAND ${CMAKE_COMMAND} -DIN=${CMAKE_CURRENT_LIST_DIR}/cpu_trace.cuh
          -DOUT=${SCHEDLAB_CPU_TRACE_TEXT} -DSYMBOL=kCpuTraceText
          -P ${CMAKE_CURRENT_LIST_DIR}/embed_text.cmake
  DEPENDS ${CMAKE_CURRENT_LIST_DIR}/cpu_trace.cuh ${CMAKE_CURRENT_LIST_DIR}/embed_text.cmake
  COMMENT "Embedding cpu_trace.cuh"
  VERBATIM)
target_sources(schedlab PRIVATE ${SCHEDLAB_CPU_TRACE_TEXT})
