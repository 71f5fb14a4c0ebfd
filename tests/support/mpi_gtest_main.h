// main() of a GoogleTest program whose tests run on every rank of a mesh
// (add_mpi_test, cmake/MpiTest.cmake): the communicator, one report, one verdict.
#pragma once

#include <gtest/gtest.h>

#include <memory>

#include "schedlab/runtime/communicator.h"

namespace schedlab::test {

/// Runs every test on this rank with `comm` set for the tests to use (`global`
/// holds it while they run). Rank 0 prints the report; the others print only
/// their failures (GoogleTest's failure lines on stderr). Exit code 0 only
/// when every rank passed, the same on every rank.
inline int run_tests_on_ranks(int argc, char** argv,
                              std::unique_ptr<runtime::Communicator> comm,
                              runtime::Communicator*& global) {
  ::testing::InitGoogleTest(&argc, argv);
  global = comm.get();
  if (comm->rank() != 0) {
    auto& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
  }
  const int failed = RUN_ALL_TESTS();
  return comm->all(failed == 0) ? 0 : 1;
}

}  // namespace schedlab::test
