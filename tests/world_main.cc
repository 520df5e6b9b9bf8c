// main() of a gtest program registered with graphsieve_world_test
// (cmake/world_test.cmake) that has no world of its own: skips read
// "Skipped" in CTest through the exit status, not a regex.
#include "tests/world_main.h"
#include "gtest/gtest.h"

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return graphsieve::testing::WorldExitCode(RUN_ALL_TESTS());
}
