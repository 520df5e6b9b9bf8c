// A gtest program shaped like tests/client's integration tests (a world set up
// by a gtest Environment, main() from tests/world_main.h), for
// tests/ci/skip_check_test.sh. GRAPHSIEVE_WORLD_FIXTURE picks its run:
//   broken  the world's SetUp fails (gtest then lists every test as skipped)
//   skip    one test skips with the reason in GRAPHSIEVE_WORLD_FIXTURE_REASON
//   (unset) every test passes
// Not a test itself: skip_check_test.sh registers it in a CTest project of its own.
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "tests/world_main.h"

namespace {

std::string Mode() {
  const char* mode = std::getenv("GRAPHSIEVE_WORLD_FIXTURE");
  return mode != nullptr ? mode : "";
}

class FixtureWorld : public ::testing::Environment {
 public:
  void SetUp() override { ASSERT_NE(Mode(), "broken") << "the fixture's world failed to start"; }
};

TEST(Fixture, Passes) { EXPECT_EQ(1 + 1, 2); }

TEST(Fixture, SkipsWhenAsked) {
  if (Mode() == "skip") {
    const char* reason = std::getenv("GRAPHSIEVE_WORLD_FIXTURE_REASON");
    GTEST_SKIP() << (reason != nullptr ? reason : "no reason given");
  }
}

}  // namespace

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new FixtureWorld());
  return graphsieve::testing::WorldExitCode(RUN_ALL_TESTS());
}
