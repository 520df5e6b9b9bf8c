// graphsieve-gen's churn (gen/generator.h, "Churn"; docs/DATA.md "Churn"):
// users and items that arrive during the log and items whose exposure fades
// with age, so a later part of the log holds nodes the earlier part never saw.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gen/generator.h"
#include "gtest/gtest.h"
#include "tests/io/test_files.h"

namespace graphsieve {
namespace {

using testing_io::ReadFile;
using testing_io::TempFiles;

constexpr int kDays = 10;

GeneratorOptions Churned(Exposure exposure, double users_per_day, double items_per_day,
                         double half_life_days) {
  GeneratorOptions o = *GeneratorPreset("small", 1.0);
  o.exposure = exposure;
  o.seed = 5;
  o.churn_days = kDays;
  o.new_users_per_day = users_per_day;
  o.new_items_per_day = items_per_day;
  o.item_half_life_days = half_life_days;
  return o;
}

struct Halves {
  double unseen_item_share = 0;  // later-half instances whose item the earlier half never shows
  double unseen_user_share = 0;  // likewise for users
  double later_share = 0;        // instances in the later half
};

Halves Split(const ImpressionLog& log, const std::vector<int64_t>& times) {
  const int64_t cut = int64_t{kDays} * 86400 / 2;
  absl::flat_hash_set<uint64_t> users, items;
  for (size_t i = 0; i < log.size(); ++i) {
    if (times[i] >= cut) continue;
    users.insert(log.user_ids[i]);
    items.insert(log.item_ids[i]);
  }
  Halves h;
  uint64_t later = 0, new_item = 0, new_user = 0;
  for (size_t i = 0; i < log.size(); ++i) {
    if (times[i] < cut) continue;
    ++later;
    new_item += !items.contains(log.item_ids[i]);
    new_user += !users.contains(log.user_ids[i]);
  }
  h.unseen_item_share = static_cast<double>(new_item) / static_cast<double>(later);
  h.unseen_user_share = static_cast<double>(new_user) / static_cast<double>(later);
  h.later_share = static_cast<double>(later) / static_cast<double>(log.size());
  return h;
}

TEST(GeneratorChurnTest, OptionsAreValidated) {
  GeneratorOptions o = *GeneratorPreset("small", 1.0);
  o.new_items_per_day = 5;
  EXPECT_NE(o.Validate().message().find("churn_days"), std::string_view::npos);
  o.churn_days = 10;
  EXPECT_TRUE(o.Validate().ok());
  o.new_items_per_day = 1000;  // 10,000 new items of 1,068
  EXPECT_NE(o.Validate().message().find("new_items_per_day * churn_days"), std::string_view::npos);
  o.new_items_per_day = 0;
  o.item_half_life_days = -1;
  EXPECT_NE(o.Validate().message().find("item_half_life_days"), std::string_view::npos);
}

TEST(GeneratorChurnTest, TimestampsSpanTheDaysWithoutChurnedNodes) {
  std::vector<int64_t> times;
  GeneratorStats stats;
  const GeneratorOptions o = Churned(Exposure::kPopularity, 0, 0, 0);
  absl::StatusOr<ImpressionLog> log = GenerateImpressionLog(o, &stats, nullptr, &times);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_EQ(times.size(), log->size());
  EXPECT_NEAR(static_cast<double>(log->size()), static_cast<double>(o.num_instances),
              0.05 * static_cast<double>(o.num_instances));
  for (int64_t t : times) {
    ASSERT_GE(t, 0);
    ASSERT_LT(t, int64_t{kDays} * 86400);
  }
  const Halves h = Split(*log, times);
  EXPECT_NEAR(h.later_share, 0.5, 0.02);
  // Every node exists from the start: the later half's nodes are nearly all
  // seen earlier (only rare pairs of rare nodes fall in one half).
  EXPECT_LT(h.unseen_item_share, 0.01);
  EXPECT_LT(h.unseen_user_share, 0.01);
}

TEST(GeneratorChurnTest, NewUsersAndItemsAreUnseenEarlier) {
  for (Exposure exposure : {Exposure::kPopularity, Exposure::kPreference}) {
    SCOPED_TRACE(ExposureName(exposure));
    std::vector<int64_t> times;
    // 40% of the items and 30% of the users arrive during the log.
    const GeneratorOptions o = Churned(exposure, 17.3, 42.7, 0);
    absl::StatusOr<ImpressionLog> log = GenerateImpressionLog(o, nullptr, nullptr, &times);
    ASSERT_TRUE(log.ok()) << log.status();
    const Halves h = Split(*log, times);
    // Half of the new nodes arrive in the later half (20% of the items, 15%
    // of the users), and they are shown only from their arrival on.
    EXPECT_GT(h.unseen_item_share, 0.05);
    EXPECT_GT(h.unseen_user_share, 0.05);
    EXPECT_LT(h.unseen_item_share, 0.5);
    EXPECT_LT(h.unseen_user_share, 0.5);
  }
}

TEST(GeneratorChurnTest, AgingMovesExposureToNewItems) {
  std::vector<int64_t> times_flat, times_aging;
  absl::StatusOr<ImpressionLog> flat = GenerateImpressionLog(
      Churned(Exposure::kPopularity, 0, 42.7, 0), nullptr, nullptr, &times_flat);
  absl::StatusOr<ImpressionLog> aging = GenerateImpressionLog(
      Churned(Exposure::kPopularity, 0, 42.7, 1.0), nullptr, nullptr, &times_aging);
  ASSERT_TRUE(flat.ok() && aging.ok());
  // With a one-day half-life old items fade out, so the later half's
  // impressions go to the items published in it far more often.
  EXPECT_GT(Split(*aging, times_aging).unseen_item_share,
            2.0 * Split(*flat, times_flat).unseen_item_share);
}

TEST(GeneratorChurnTest, FileHasTheTimestampColumnAndIsDeterministic) {
  TempFiles files;
  const std::string a = files.Path("a.csv"), b = files.Path("b.csv");
  GeneratorOptions o = Churned(Exposure::kPreference, 2, 5, 3);
  o.num_instances = 20000;
  o.threads = 1;
  ASSERT_TRUE(WriteGeneratedLog(o, a).ok());
  o.threads = 3;
  ASSERT_TRUE(WriteGeneratedLog(o, b).ok());
  const std::string text = ReadFile(a);
  EXPECT_EQ(text, ReadFile(b));
  EXPECT_EQ(text.substr(0, text.find('\n')), "user_id,item_id,label,timestamp");
  std::vector<int64_t> times;
  o.threads = 1;
  absl::StatusOr<ImpressionLog> log = GenerateImpressionLog(o, nullptr, nullptr, &times);
  ASSERT_TRUE(log.ok());
  // The first row's timestamp is the in-memory one.
  const std::string first =
      text.substr(text.find('\n') + 1, text.find('\n', text.find('\n') + 1) - text.find('\n') - 1);
  EXPECT_EQ(first.substr(first.rfind(',') + 1), std::to_string(times[0]));
}

}  // namespace
}  // namespace graphsieve
