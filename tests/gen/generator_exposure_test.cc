// graphsieve-gen's preference-driven exposure (gen/generator.h, "Exposure";
// docs/DATA.md §4): the logging policy shows users what a previous model
// ranks high for them, so exposure and preference are entangled; the
// popularity mode is unchanged and stays the default.
#include <cmath>
#include <cstdint>
#include <map>
#include <set>
#include <utility>
#include <vector>

#include "gen/generator.h"
#include "gtest/gtest.h"
#include "tests/io/test_files.h"

namespace graphsieve {
namespace {

using testing_io::ReadFile;
using testing_io::TempFiles;

GeneratorOptions Small(Exposure exposure, uint64_t seed) {
  GeneratorOptions o = *GeneratorPreset("small", 1.0);
  o.exposure = exposure;
  o.seed = seed;
  return o;
}

// Distinct items shown to each user.
std::map<uint64_t, std::set<uint64_t>> PairsByUser(const ImpressionLog& log) {
  std::map<uint64_t, std::set<uint64_t>> out;
  for (size_t i = 0; i < log.size(); ++i) out[log.user_ids[i]].insert(log.item_ids[i]);
  return out;
}

// Mean over instances of the true logit without the global mu: how much the
// exposed pairs are liked, independent of the calibration.
double MeanPreference(const std::vector<float>& truth, double mu) {
  double sum = 0;
  for (float p : truth) sum += std::log(p / (1.0 - p)) - mu;
  return sum / static_cast<double>(truth.size());
}

TEST(GeneratorExposureTest, PopularityIsTheDefault) {
  EXPECT_EQ(GeneratorOptions().exposure, Exposure::kPopularity);
  EXPECT_EQ(GeneratorPreset("kuairec", 1.0)->exposure, Exposure::kPopularity);
  EXPECT_EQ(*ParseExposure("preference"), Exposure::kPreference);
  absl::StatusOr<Exposure> bad = ParseExposure("random");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("random"), std::string_view::npos);
  GeneratorOptions o = Small(Exposure::kPreference, 1);
  o.exploration = 1.5;
  EXPECT_NE(o.Validate().message().find("exploration"), std::string_view::npos);
}

TEST(GeneratorExposureTest, PreferenceIsDeterministicBySeed) {
  TempFiles files;
  GeneratorOptions o = *GeneratorPreset("tiny", 40.0);
  o.exposure = Exposure::kPreference;
  o.pilot = true;
  o.seed = 5;
  ASSERT_TRUE(WriteGeneratedLog(o, files.Path("a.csv")).ok());
  o.threads = 3;  // the thread count never changes the bytes
  ASSERT_TRUE(WriteGeneratedLog(o, files.Path("b.csv")).ok());
  o.seed = 6;
  ASSERT_TRUE(WriteGeneratedLog(o, files.Path("c.csv")).ok());
  o.seed = 5;
  o.exposure = Exposure::kPopularity;
  ASSERT_TRUE(WriteGeneratedLog(o, files.Path("d.csv")).ok());
  EXPECT_EQ(ReadFile(files.Path("a.csv")), ReadFile(files.Path("b.csv")));
  EXPECT_NE(ReadFile(files.Path("a.csv")), ReadFile(files.Path("c.csv")));
  EXPECT_NE(ReadFile(files.Path("a.csv")), ReadFile(files.Path("d.csv")));
}

// Same users, same number of distinct pairs per user and the same positive
// rate as the popularity mode, but the exposed pairs are ones the users like:
// their mean true preference is far above the popularity mode's.
TEST(GeneratorExposureTest, ExposureFollowsPreference) {
  GeneratorStats pop_stats, pref_stats;
  std::vector<float> pop_truth, pref_truth;
  absl::StatusOr<ImpressionLog> pop =
      GenerateImpressionLog(Small(Exposure::kPopularity, 9), &pop_stats, &pop_truth);
  absl::StatusOr<ImpressionLog> pref =
      GenerateImpressionLog(Small(Exposure::kPreference, 9), &pref_stats, &pref_truth);
  ASSERT_TRUE(pop.ok() && pref.ok());
  const auto pop_pairs = PairsByUser(*pop), pref_pairs = PairsByUser(*pref);
  ASSERT_EQ(pop_pairs.size(), pref_pairs.size());
  size_t shared = 0, total = 0;
  for (const auto& [user, items] : pop_pairs) {
    const auto it = pref_pairs.find(user);
    ASSERT_NE(it, pref_pairs.end()) << "user " << user;
    EXPECT_EQ(it->second.size(), items.size()) << "user " << user;
    for (uint64_t j : it->second) shared += items.count(j);
    total += items.size();
  }
  // The exploration share (0.2) plus the popularity pairs the policy also
  // ranks high are shared with the popularity mode.
  const double overlap = static_cast<double>(shared) / static_cast<double>(total);
  EXPECT_GT(overlap, 0.15);
  EXPECT_LT(overlap, 0.5);
  const double target = 1.0 / 35.0;
  for (const GeneratorStats* s : {&pop_stats, &pref_stats}) {
    const double rate =
        static_cast<double>(s->positive_instances) / static_cast<double>(s->instances);
    EXPECT_NEAR(rate, target, 0.15 * target);
  }
  const double pop_pref = MeanPreference(pop_truth, pop_stats.mu);
  const double pref_pref = MeanPreference(pref_truth, pref_stats.mu);
  EXPECT_GT(pref_pref, pop_pref + 0.5) << "mean preference of exposed pairs: preference mode "
                                       << pref_pref << ", popularity mode " << pop_pref;
  EXPECT_LT(pref_stats.mu, pop_stats.mu - 0.15);  // so mu is calibrated lower
}

// With exploration 1 the policy shows exactly the popularity draw.
TEST(GeneratorExposureTest, FullExplorationIsThePopularityDraw) {
  GeneratorOptions o = Small(Exposure::kPreference, 4);
  o.exploration = 1.0;
  absl::StatusOr<ImpressionLog> pref = GenerateImpressionLog(o);
  absl::StatusOr<ImpressionLog> pop = GenerateImpressionLog(Small(Exposure::kPopularity, 4));
  ASSERT_TRUE(pref.ok() && pop.ok());
  EXPECT_EQ(PairsByUser(*pref), PairsByUser(*pop));
}

}  // namespace
}  // namespace graphsieve
