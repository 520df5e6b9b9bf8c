// DecideKeep, the one keep rule of the server and the client's local mode,
// against its definition: positives always kept, a negative iff
// KeepNegative(key, seed, rate), every impression log(rate).
#include "core/serving/keep_rule.h"

#include <cmath>
#include <memory>
#include <vector>

#include "core/io/ids.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

TEST(KeepRuleTest, MatchesTheDefinitionForEveryImpression) {
  const size_t n = 2000;
  std::vector<float> rates(n);
  std::vector<uint64_t> keys(n);
  std::unique_ptr<bool[]> positives(new bool[n]), keep(new bool[n]);
  for (size_t i = 0; i < n; ++i) {
    rates[i] = 0.01f + 0.98f * static_cast<float>(i % 97) / 96.0f;
    keys[i] = 0x9e3779b97f4a7c15ull * (i + 1);
    positives[i] = i % 5 == 0;
  }
  std::vector<float> offsets(n, 0.0f);
  const uint64_t seed = 42;
  DecideKeep(rates, absl::MakeConstSpan(positives.get(), n), keys, seed,
             absl::MakeSpan(keep.get(), n), absl::MakeSpan(offsets));
  int kept_negatives = 0, dropped = 0;
  for (size_t i = 0; i < n; ++i) {
    if (positives[i]) {
      ASSERT_TRUE(keep[i]) << i;
    } else {
      ASSERT_EQ(keep[i], KeepNegative(keys[i], seed, rates[i])) << i;
      (keep[i] ? kept_negatives : dropped)++;
    }
    ASSERT_EQ(offsets[i], std::log(rates[i])) << "positives carry the offset too: " << i;
  }
  EXPECT_GT(kept_negatives, 0);
  EXPECT_GT(dropped, 0);
}

TEST(KeepRuleTest, SeedChangesNegativeDecisionsOnly) {
  const size_t n = 500;
  std::vector<float> rates(n, 0.5f);
  std::vector<uint64_t> keys(n);
  std::unique_ptr<bool[]> positives(new bool[n]), a(new bool[n]), b(new bool[n]);
  for (size_t i = 0; i < n; ++i) {
    keys[i] = i * 7919 + 1;
    positives[i] = i % 2 == 0;
  }
  std::vector<float> offsets(n);
  DecideKeep(rates, absl::MakeConstSpan(positives.get(), n), keys, 1, absl::MakeSpan(a.get(), n),
             absl::MakeSpan(offsets));
  DecideKeep(rates, absl::MakeConstSpan(positives.get(), n), keys, 2, absl::MakeSpan(b.get(), n),
             absl::MakeSpan(offsets));
  int differ = 0;
  for (size_t i = 0; i < n; ++i) {
    if (positives[i]) {
      EXPECT_TRUE(a[i] && b[i]) << i;
    } else {
      differ += a[i] != b[i];
    }
  }
  EXPECT_GT(differ, 0) << "another snapshot seed must give other decisions for negatives";
}

}  // namespace
}  // namespace graphsieve
