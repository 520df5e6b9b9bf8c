// The exit status of a gtest program whose tests share a world set up once by
// a gtest Environment (cmake/world_test.cmake): RUN_ALL_TESTS()'s, except 77
// (CTest's SKIP_RETURN_CODE: "Skipped") when the run passed and at least one
// test skipped. A failed Environment SetUp leaves every test "skipped" but
// the run failed: that stays 1, "Failed" in CTest.
//
//   int main(int argc, char** argv) {
//     ::testing::InitGoogleTest(&argc, argv);
//     ::testing::AddGlobalTestEnvironment(new MyWorld());
//     return graphsieve::testing::WorldExitCode(RUN_ALL_TESTS());
//   }
#ifndef GRAPHSIEVE_TESTS_WORLD_MAIN_H_
#define GRAPHSIEVE_TESTS_WORLD_MAIN_H_

#include "gtest/gtest.h"

namespace graphsieve::testing {

inline constexpr int kSkippedExitCode = 77;

inline int WorldExitCode(int run_all_tests_status) {
  const ::testing::UnitTest* run = ::testing::UnitTest::GetInstance();
  if (run_all_tests_status != 0 || !run->Passed() || run->ad_hoc_test_result().Failed()) {
    return run_all_tests_status != 0 ? run_all_tests_status : 1;
  }
  return run->skipped_test_count() > 0 ? kSkippedExitCode : 0;
}

}  // namespace graphsieve::testing

#endif  // GRAPHSIEVE_TESTS_WORLD_MAIN_H_
