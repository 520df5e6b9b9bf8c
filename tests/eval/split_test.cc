#include "eval/split.h"

#include <vector>

#include "gtest/gtest.h"

namespace graphsieve::eval {
namespace {

std::vector<size_t> Counts(const std::vector<Part>& parts) {
  std::vector<size_t> c(3, 0);
  for (Part p : parts) ++c[static_cast<int>(p)];
  return c;
}

TEST(SplitTest, ExactProportions) {
  SplitOptions o;
  o.seed = 7;
  for (size_t n : {10u, 1001u, 12345u}) {
    absl::StatusOr<std::vector<Part>> parts = SplitByInstance(n, o);
    ASSERT_TRUE(parts.ok()) << parts.status();
    ASSERT_EQ(parts->size(), n);
    const std::vector<size_t> c = Counts(*parts);
    EXPECT_EQ(c[0], static_cast<size_t>(0.8 * n)) << n;
    EXPECT_EQ(c[1], static_cast<size_t>(0.1 * n)) << n;
    EXPECT_EQ(c[0] + c[1] + c[2], n);
  }
}

TEST(SplitTest, DeterministicPerSeedAndDifferentAcrossSeeds) {
  SplitOptions a;
  a.seed = 3;
  SplitOptions b = a;
  b.seed = 4;
  const std::vector<Part> p1 = *SplitByInstance(5000, a);
  const std::vector<Part> p2 = *SplitByInstance(5000, a);
  const std::vector<Part> p3 = *SplitByInstance(5000, b);
  EXPECT_EQ(p1, p2);
  EXPECT_NE(p1, p3);
  // Not a block split: the test part is spread over the whole range.
  size_t test_in_first_half = 0;
  for (size_t i = 0; i < 2500; ++i) test_in_first_half += p1[i] == Part::kTest;
  EXPECT_GT(test_in_first_half, 150u);
  EXPECT_LT(test_in_first_half, 350u);
}

TEST(SplitTest, RejectsBadOptions) {
  SplitOptions o;
  EXPECT_FALSE(SplitByInstance(0, o).ok());
  o.train_fraction = 0.95;
  EXPECT_FALSE(SplitByInstance(10, o).ok());
  o.train_fraction = -0.1;
  EXPECT_FALSE(SplitByInstance(10, o).ok());
}

}  // namespace
}  // namespace graphsieve::eval
