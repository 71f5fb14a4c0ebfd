# The collectives (issue 38, docs/multi-device.md): the one-rank communicator
# and the launcher in a plain test, the MPI communicator as 2 and 4 ranks
# (add_mpi_test, cmake/MpiTest.cmake). Included by CMakeLists.txt.
schedlab_test(runtime_communicator_test communicator_test.cpp)

# Its own main (MPI_Init through make_mpi_communicator), and not discovered
# test by test: listing the tests would start MPI outside a launcher.
add_executable(runtime_communicator_mpi_test communicator_mpi_test.cpp)
target_link_libraries(runtime_communicator_mpi_test PRIVATE schedlab::schedlab GTest::gtest
                                                            GTest::gmock)
target_compile_options(runtime_communicator_mpi_test PRIVATE $<$<NOT:$<CONFIG:Debug>>:-O0>)
target_include_directories(runtime_communicator_mpi_test PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
schedlab_warnings(runtime_communicator_mpi_test)
foreach(ranks 2 4)
  add_mpi_test(NAME runtime_communicator_mpi_${ranks} RANKS ${ranks}
               COMMAND $<TARGET_FILE:runtime_communicator_mpi_test>)
endforeach()
