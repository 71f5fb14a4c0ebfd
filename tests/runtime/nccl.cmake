# The NCCL communicator (docs/multi-device.md, NCCL). Included by
# CMakeLists.txt after cuda.cmake (the fake libcuda.so.1).
#
# runtime_nccl_communicator_mpi_2: two ranks against a fake libnccl
# (fake_libnccl.cpp: NCCL's entry points over host memory, MPI underneath),
# named by SCHEDLAB_NCCL_LIBRARY, with the fake driver found through the
# rpath as runtime_cuda_fake_driver_test finds it.
set(SCHEDLAB_FAKE_NCCL_DIR ${CMAKE_CURRENT_BINARY_DIR}/fake_nccl)
add_library(schedlab_fake_nccl SHARED ${CMAKE_CURRENT_LIST_DIR}/fake_libnccl.cpp)
set_target_properties(schedlab_fake_nccl PROPERTIES
  OUTPUT_NAME nccl PREFIX lib SUFFIX .so.2
  LIBRARY_OUTPUT_DIRECTORY ${SCHEDLAB_FAKE_NCCL_DIR})
target_include_directories(schedlab_fake_nccl PRIVATE ${PROJECT_SOURCE_DIR}/core/runtime)
target_compile_definitions(schedlab_fake_nccl PRIVATE OMPI_SKIP_MPICXX MPICH_SKIP_MPICXX)
target_link_libraries(schedlab_fake_nccl PRIVATE MPI::MPI_C)
schedlab_warnings(schedlab_fake_nccl)

add_executable(runtime_nccl_communicator_mpi_test
               ${CMAKE_CURRENT_LIST_DIR}/nccl_communicator_mpi_test.cpp)
target_link_libraries(runtime_nccl_communicator_mpi_test PRIVATE schedlab::schedlab GTest::gtest
                                                                 GTest::gmock ${CMAKE_DL_LIBS})
target_include_directories(runtime_nccl_communicator_mpi_test PRIVATE
                           ${PROJECT_SOURCE_DIR}/tests/support)
target_compile_definitions(runtime_nccl_communicator_mpi_test PRIVATE
  SCHEDLAB_SOURCE_DIR="${PROJECT_SOURCE_DIR}" SCHEDLAB_BINARY_DIR="${PROJECT_BINARY_DIR}"
  SCHEDLAB_FAKE_CUDA="${CMAKE_CURRENT_BINARY_DIR}/fake_cuda/libcuda.so.1")
target_compile_options(runtime_nccl_communicator_mpi_test PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O0>)
schedlab_warnings(runtime_nccl_communicator_mpi_test)
add_dependencies(runtime_nccl_communicator_mpi_test schedlab_fake_cuda schedlab_fake_nccl)
target_link_options(runtime_nccl_communicator_mpi_test PRIVATE -Wl,--disable-new-dtags)
set_target_properties(runtime_nccl_communicator_mpi_test PROPERTIES
  BUILD_RPATH ${CMAKE_CURRENT_BINARY_DIR}/fake_cuda)
add_mpi_test(NAME runtime_nccl_communicator_mpi_2 RANKS 2
             COMMAND $<TARGET_FILE:runtime_nccl_communicator_mpi_test>)
set_property(TEST runtime_nccl_communicator_mpi_2 APPEND PROPERTY
             ENVIRONMENT "SCHEDLAB_NCCL_LIBRARY=${SCHEDLAB_FAKE_NCCL_DIR}/libnccl.so.2")

# nccl_api.h's values against NCCL's nccl.h, where it is installed.
find_path(SCHEDLAB_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
if(SCHEDLAB_NCCL_INCLUDE_DIR)
  schedlab_test(runtime_nccl_api_test ${CMAKE_CURRENT_LIST_DIR}/nccl_api_test.cpp)
  target_include_directories(runtime_nccl_api_test PRIVATE ${PROJECT_SOURCE_DIR}/core/runtime
                             ${SCHEDLAB_NCCL_INCLUDE_DIR} ${CUDAToolkit_INCLUDE_DIRS})
endif()

# runtime_nccl_gpu_1/_2 (label gpu): the real libnccl.so.2 on a real device,
# compared with MPI; skips without either. Two ranks on a one-GPU machine are
# refused by NCCL alike on both ranks (the test checks that, and skips).
add_executable(runtime_nccl_gpu_test ${CMAKE_CURRENT_LIST_DIR}/nccl_gpu_test.cpp)
target_link_libraries(runtime_nccl_gpu_test PRIVATE schedlab::schedlab GTest::gtest GTest::gmock)
target_compile_options(runtime_nccl_gpu_test PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O0>)
target_include_directories(runtime_nccl_gpu_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
schedlab_warnings(runtime_nccl_gpu_test)
foreach(ranks 1 2)
  add_mpi_test(NAME runtime_nccl_gpu_${ranks} RANKS ${ranks}
               COMMAND $<TARGET_FILE:runtime_nccl_gpu_test> LABELS gpu)
endforeach()

# exec --mesh 2 on the CUDA backend over the fake driver (LD_LIBRARY_PATH:
# the CLI's RUNPATH comes after it): with the fake libnccl the collectives
# are NCCL's; with a library that is not there, MPI's, after one note. The
# fake runs no kernel, so the outputs are wrong (exit 1): these tests check
# the communicator only.
set(SCHEDLAB_NCCL_EXEC ${CMAKE_CURRENT_BINARY_DIR}/nccl_exec_cache)
add_test(NAME runtime_nccl_exec_mesh_fake
         COMMAND $<TARGET_FILE:schedlab_cli> exec sum_sharded --mesh 2 --backend cuda
                 --cache-dir ${SCHEDLAB_NCCL_EXEC})
add_test(NAME runtime_nccl_exec_mesh_fallback
         COMMAND $<TARGET_FILE:schedlab_cli> exec sum_sharded --mesh 2 --backend cuda
                 --cache-dir ${SCHEDLAB_NCCL_EXEC})
set_tests_properties(runtime_nccl_exec_mesh_fake PROPERTIES
  ENVIRONMENT "LD_LIBRARY_PATH=${CMAKE_CURRENT_BINARY_DIR}/fake_cuda;SCHEDLAB_NCCL_LIBRARY=${SCHEDLAB_FAKE_NCCL_DIR}/libnccl.so.2;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  PASS_REGULAR_EXPRESSION "mesh \\[0, 1\\] \\(2 ranks, nccl\\)")
set_tests_properties(runtime_nccl_exec_mesh_fallback PROPERTIES
  ENVIRONMENT "LD_LIBRARY_PATH=${CMAKE_CURRENT_BINARY_DIR}/fake_cuda;SCHEDLAB_NCCL_LIBRARY=/nonexistent/libnccl.so.2;OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1"
  # stderr's note and stdout's first line in either order (CMake's . matches a newline)
  PASS_REGULAR_EXPRESSION "(not NCCL: rank 0: /nonexistent/libnccl\\.so\\.2 not found.*\\(2 ranks, mpi\\)|\\(2 ranks, mpi\\).*not NCCL: rank 0: /nonexistent/libnccl\\.so\\.2 not found)")
set_tests_properties(runtime_nccl_exec_mesh_fake runtime_nccl_exec_mesh_fallback PROPERTIES
  PROCESSORS 2 RESOURCE_LOCK mpi TIMEOUT 300 LABELS mpi)
