// The unbiased test draw of graphsieve-gen (gen/generator.h,
// WriteRandomExposureTest): impressions with random exposure, labelled by the
// log's click model, whose pairs do not depend on the logging policy.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
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
  o.truth = true;
  return o;
}

std::vector<std::pair<uint64_t, uint64_t>> Pairs(const ImpressionLog& log) {
  std::vector<std::pair<uint64_t, uint64_t>> out;
  for (size_t i = 0; i < log.size(); ++i) out.emplace_back(log.user_ids[i], log.item_ids[i]);
  return out;
}

TEST(RandomExposureTest, DeterministicPerSeed) {
  TempFiles files;
  GeneratorOptions o = Small(Exposure::kPreference, 5);
  o.pilot = true;
  ASSERT_TRUE(WriteRandomExposureTest(o, 5000, files.Path("a.csv")).ok());
  o.threads = 3;  // the log's thread count does not enter the draw
  ASSERT_TRUE(WriteRandomExposureTest(o, 5000, files.Path("b.csv")).ok());
  o.seed = 6;
  ASSERT_TRUE(WriteRandomExposureTest(o, 5000, files.Path("c.csv")).ok());
  const std::string a = ReadFile(files.Path("a.csv"));
  EXPECT_EQ(a.substr(0, a.find('\n')), "user_id,item_id,label,pilot_score,true_prob");
  EXPECT_EQ(a, ReadFile(files.Path("b.csv")));
  EXPECT_NE(a, ReadFile(files.Path("c.csv")));
  EXPECT_EQ(std::count(a.begin(), a.end(), '\n'), 5001);
}

// The pairs of the draw are the same whichever policy logged the log, and
// they are spread uniformly: the items the preference policy shows most get
// their uniform share of the test, not the log's share.
TEST(RandomExposureTest, ExposureIsIndependentOfTheLoggingPolicy) {
  const int64_t n = 40000;
  absl::StatusOr<ImpressionLog> pref_test =
      GenerateRandomExposureTest(Small(Exposure::kPreference, 3), n);
  absl::StatusOr<ImpressionLog> pop_test =
      GenerateRandomExposureTest(Small(Exposure::kPopularity, 3), n);
  ASSERT_TRUE(pref_test.ok()) << pref_test.status();
  ASSERT_TRUE(pop_test.ok()) << pop_test.status();
  EXPECT_EQ(Pairs(*pref_test), Pairs(*pop_test));

  const GeneratorOptions o = Small(Exposure::kPreference, 3);
  absl::StatusOr<ImpressionLog> log = GenerateImpressionLog(o);
  ASSERT_TRUE(log.ok()) << log.status();
  std::map<uint64_t, int64_t> shown;
  for (uint64_t j : log->item_ids) ++shown[j];
  std::vector<std::pair<int64_t, uint64_t>> by_count;
  for (const auto& [j, c] : shown) by_count.emplace_back(c, j);
  std::sort(by_count.rbegin(), by_count.rend());
  // The top tenth of the catalogue by the log's exposure.
  const size_t top = static_cast<size_t>(o.num_items / 10);
  std::map<uint64_t, bool> is_top;
  int64_t log_top = 0;
  for (size_t k = 0; k < top && k < by_count.size(); ++k) {
    is_top[by_count[k].second] = true;
    log_top += by_count[k].first;
  }
  int64_t test_top = 0;
  for (uint64_t j : pref_test->item_ids) test_top += is_top.count(j);
  const double log_share = static_cast<double>(log_top) / static_cast<double>(log->size());
  const double test_share = static_cast<double>(test_top) / static_cast<double>(n);
  const double uniform_share = static_cast<double>(top) / static_cast<double>(o.num_items);
  EXPECT_GT(log_share, 2 * uniform_share) << "the log's exposure is not concentrated";
  EXPECT_NEAR(test_share, uniform_share, 0.01) << "test share on the log's top items";
}

// Labels come from the log's click model: the test's click rate equals its
// mean true probability, and it is below the preference log's (the policy
// shows what users like).
TEST(RandomExposureTest, LabelsFollowTheClickModel) {
  const GeneratorOptions o = Small(Exposure::kPreference, 4);
  std::vector<float> truth, log_truth;
  absl::StatusOr<ImpressionLog> test = GenerateRandomExposureTest(o, 40000, &truth);
  ASSERT_TRUE(test.ok()) << test.status();
  absl::StatusOr<ImpressionLog> log = GenerateImpressionLog(o, nullptr, &log_truth);
  ASSERT_TRUE(log.ok()) << log.status();
  double clicks = 0, mean_p = 0, log_p = 0;
  for (size_t i = 0; i < test->size(); ++i) {
    clicks += test->labels[i];
    mean_p += truth[i];
  }
  for (float p : log_truth) log_p += p;
  clicks /= static_cast<double>(test->size());
  mean_p /= static_cast<double>(test->size());
  log_p /= static_cast<double>(log_truth.size());
  const double se = std::sqrt(mean_p * (1 - mean_p) / static_cast<double>(test->size()));
  EXPECT_NEAR(clicks, mean_p, 4 * se);
  EXPECT_LT(mean_p, 0.8 * log_p) << "test " << mean_p << " vs log " << log_p;
}

TEST(RandomExposureTest, RejectsBadInputsByName) {
  TempFiles files;
  GeneratorOptions o = Small(Exposure::kPreference, 1);
  absl::StatusOr<GeneratorStats> s = WriteRandomExposureTest(o, 0, files.Path("t.csv"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("test instances"), std::string_view::npos) << s.status();
  s = WriteRandomExposureTest(o, 10, files.Path("no/such/dir/t.csv"));
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.status().message().find("no/such/dir"), std::string_view::npos) << s.status();
}

}  // namespace
}  // namespace graphsieve
