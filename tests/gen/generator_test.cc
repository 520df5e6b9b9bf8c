// graphsieve-gen's library: determinism, the preset's shape, the click model's
// learnable structure, the pilot score's imperfection, and read-back through
// the log reader.
#include "gen/generator.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/io/log_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/io/test_files.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;
using testing_io::ReadFile;
using testing_io::TempFiles;

// Rank-based AUC (ties get the average rank).
double Auc(const std::vector<double>& score, const std::vector<uint8_t>& label) {
  std::vector<size_t> order(score.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] < score[b]; });
  double rank_sum = 0, positives = 0;
  for (size_t i = 0; i < order.size();) {
    size_t j = i;
    while (j < order.size() && score[order[j]] == score[order[i]]) ++j;
    const double avg_rank = 0.5 * static_cast<double>(i + j + 1);
    for (size_t k = i; k < j; ++k) {
      if (label[order[k]]) {
        rank_sum += avg_rank;
        positives += 1;
      }
    }
    i = j;
  }
  const double negatives = static_cast<double>(score.size()) - positives;
  return (rank_sum - positives * (positives + 1) / 2) / (positives * negatives);
}

GeneratorOptions Small(uint64_t seed) {
  GeneratorOptions o = *GeneratorPreset("small", 1.0);
  o.seed = seed;
  return o;
}

TEST(GeneratorTest, SameSeedSameBytesDifferentSeedDifferentBytes) {
  TempFiles files;
  GeneratorOptions o = *GeneratorPreset("tiny", 40.0);  // 380 users: several thread windows
  o.pilot = true;
  o.seed = 11;
  ASSERT_TRUE(WriteGeneratedLog(o, files.Path("a.csv")).ok());
  ASSERT_TRUE(WriteGeneratedLog(o, files.Path("b.csv")).ok());
  o.threads = 3;  // more workers, same bytes
  ASSERT_TRUE(WriteGeneratedLog(o, files.Path("threads.csv")).ok());
  o.threads = 1;
  o.seed = 12;
  ASSERT_TRUE(WriteGeneratedLog(o, files.Path("c.csv")).ok());
  const std::string a = ReadFile(files.Path("a.csv"));
  EXPECT_GT(a.size(), 1000u);
  EXPECT_EQ(a, ReadFile(files.Path("b.csv")));
  EXPECT_EQ(a, ReadFile(files.Path("threads.csv")));
  EXPECT_NE(a, ReadFile(files.Path("c.csv")));
  // gzip output is deterministic too (mtime 0 in the header).
  o.seed = 11;
  o.gzip = true;
  ASSERT_TRUE(WriteGeneratedLog(o, files.Path("a.csv.gz")).ok());
  ASSERT_TRUE(WriteGeneratedLog(o, files.Path("b.csv.gz")).ok());
  EXPECT_EQ(ReadFile(files.Path("a.csv.gz")), ReadFile(files.Path("b.csv.gz")));
  EXPECT_FALSE(std::filesystem::exists(files.Path("a.csv.tmp")));
}

TEST(GeneratorTest, PilotColumnDoesNotChangeTheLabels) {
  GeneratorOptions o = *GeneratorPreset("tiny", 2.0);
  absl::StatusOr<ImpressionLog> without = GenerateImpressionLog(o);
  o.pilot = true;
  absl::StatusOr<ImpressionLog> with = GenerateImpressionLog(o);
  ASSERT_TRUE(without.ok() && with.ok());
  EXPECT_EQ(without->user_ids, with->user_ids);
  EXPECT_EQ(without->item_ids, with->item_ids);
  EXPECT_EQ(without->labels, with->labels);
  EXPECT_EQ(with->pilot_scores.size(), with->size());
}

TEST(GeneratorTest, FileReadsBackAsTheInMemoryLog) {
  TempFiles files;
  GeneratorOptions o = Small(3);
  o.pilot = true;
  absl::StatusOr<GeneratorStats> stats = WriteGeneratedLog(o, files.Path("s.csv"));
  ASSERT_TRUE(stats.ok()) << stats.status();
  LogReaderOptions read;
  read.pilot_column = "pilot_score";
  ImpressionLog from_file;
  ASSERT_TRUE(ReadImpressionLog(files.Path("s.csv"), read, &from_file).ok());
  absl::StatusOr<ImpressionLog> memory = GenerateImpressionLog(o);
  ASSERT_TRUE(memory.ok());
  EXPECT_EQ(from_file.user_ids, memory->user_ids);
  EXPECT_EQ(from_file.item_ids, memory->item_ids);
  EXPECT_EQ(from_file.labels, memory->labels);
  ASSERT_EQ(from_file.pilot_scores.size(), memory->pilot_scores.size());
  for (size_t i = 0; i < from_file.size(); i += 97) {
    EXPECT_NEAR(from_file.pilot_scores[i], memory->pilot_scores[i],
                1e-6);  // 6 decimals in the file
  }
  EXPECT_EQ(static_cast<int64_t>(from_file.size()), stats->instances);
  EXPECT_EQ(from_file.bytes_read, stats->bytes_written);
}

// Shape of the small preset (kuairec at scale 0.01), from the log itself.
TEST(GeneratorTest, SmallPresetHasThePresetShape) {
  GeneratorStats stats;
  absl::StatusOr<ImpressionLog> log = GenerateImpressionLog(Small(5), &stats);
  ASSERT_TRUE(log.ok());
  absl::flat_hash_map<uint64_t, int64_t> user_count, item_count;
  absl::flat_hash_map<uint64_t, uint8_t> pair_label;
  int64_t positives = 0;
  for (size_t i = 0; i < log->size(); ++i) {
    ++user_count[log->user_ids[i]];
    ++item_count[log->item_ids[i]];
    uint8_t& y = pair_label[log->user_ids[i] * 1000003 + log->item_ids[i]];
    y = std::max(y, log->labels[i]);
    positives += log->labels[i];
  }
  const double n = static_cast<double>(log->size());
  EXPECT_NEAR(n, 120000, 0.03 * 120000);
  EXPECT_EQ(user_count.size(), 577u);
  EXPECT_GE(item_count.size(), 1040u);  // nearly all 1,068 items get an impression
  EXPECT_LE(item_count.size(), 1068u);
  // About 1 positive per 35 instances: the count is within 15% of n/35.
  EXPECT_NEAR(static_cast<double>(positives), n / 35, 0.15 * n / 35);
  // Repeated impressions: pairs are ~2.5% fewer than instances.
  const double pairs = static_cast<double>(pair_label.size());
  EXPECT_GT(n / pairs, 1.01);
  EXPECT_LT(n / pairs, 1.05);
  EXPECT_EQ(stats.pairs, static_cast<int64_t>(pair_label.size()));
  EXPECT_EQ(stats.positive_instances, positives);
  // Power law: the 10% most shown items take well over 10% of the impressions.
  std::vector<int64_t> counts;
  for (const auto& [item, c] : item_count) counts.push_back(c);
  std::sort(counts.rbegin(), counts.rend());
  const int64_t top =
      std::accumulate(counts.begin(), counts.begin() + counts.size() / 10, int64_t{0});
  EXPECT_GT(static_cast<double>(top) / n, 0.3);
}

TEST(GeneratorTest, ScaleMultipliesInstancesAndSqrtUsersItems) {
  GeneratorOptions k = *GeneratorPreset("kuairec", 1.0);
  EXPECT_EQ(k.num_users, 5765);
  EXPECT_EQ(k.num_items, 10679);
  EXPECT_EQ(k.num_instances, 12000000);
  GeneratorOptions q = *GeneratorPreset("kuairec", 0.25);
  EXPECT_EQ(q.num_users, 2883);
  EXPECT_EQ(q.num_items, 5340);
  EXPECT_EQ(q.num_instances, 3000000);
  EXPECT_THAT(GeneratorPreset("huge", 1).status().message(), HasSubstr("unknown preset 'huge'"));
  EXPECT_THAT(GeneratorPreset("tiny", 0).status().message(),
              HasSubstr("scale must be a positive number"));
}

TEST(GeneratorTest, UsersScaleGrowsUsersAloneItemsKeepTheSqrtRule) {
  // Users linear in the log, items as its square root.
  GeneratorOptions q = *GeneratorPreset("kuairec", 4.0, 0.0, 4.0);
  EXPECT_EQ(q.num_users, 4 * 5765);
  EXPECT_EQ(q.num_items, 2 * 10679);
  EXPECT_EQ(q.num_instances, 48000000);
  // With nodes_scale the items take its factor, the users still users_scale.
  GeneratorOptions n = *GeneratorPreset("kuairec", 4.0, 3.0, 4.0);
  EXPECT_EQ(n.num_users, 4 * 5765);
  EXPECT_EQ(n.num_items, 3 * 10679);
  EXPECT_THAT(GeneratorPreset("tiny", 1, 0, -2).status().message(),
              HasSubstr("--users_scale must be >= 0"));
}

TEST(GeneratorTest, NodesScaleGrowsUsersAndItemsWithTheInstances) {
  GeneratorOptions q = *GeneratorPreset("kuairec", 4.0, 4.0);
  EXPECT_EQ(q.num_users, 4 * 5765);
  EXPECT_EQ(q.num_items, 4 * 10679);
  EXPECT_EQ(q.num_instances, 48000000);
  // 0 is off: the sqrt(scale) rule, the same options as without the argument.
  GeneratorOptions off = *GeneratorPreset("kuairec", 4.0, 0.0);
  EXPECT_EQ(off.num_users, 2 * 5765);
  EXPECT_EQ(off.num_items, 2 * 10679);
  EXPECT_THAT(GeneratorPreset("tiny", 1, -1).status().message(),
              HasSubstr("--nodes_scale must be >= 0"));
  // Instances per node stay those of the preset: a generated log at nodes
  // scale 2 has about twice the users, items and pairs of scale 1.
  GeneratorOptions a = *GeneratorPreset("tiny", 1.0, 1.0), b = *GeneratorPreset("tiny", 2.0, 2.0);
  GeneratorStats sa, sb;
  ASSERT_TRUE(GenerateImpressionLog(a, &sa).ok());
  ASSERT_TRUE(GenerateImpressionLog(b, &sb).ok());
  EXPECT_NEAR(static_cast<double>(sb.users) / sa.users, 2.0, 0.15);
  EXPECT_NEAR(static_cast<double>(sb.items) / sa.items, 2.0, 0.3);
  EXPECT_NEAR(static_cast<double>(sb.instances) / sa.instances, 2.0, 0.1);
}

// Labels carry user/item structure: the true probabilities rank well, a
// per-user + per-item CTR estimate learnt on one half ranks the other half
// clearly better than chance, and the pilot score is useful but worse than
// the truth.
TEST(GeneratorTest, LabelsAreLearnableAndPilotIsImperfect) {
  GeneratorOptions o = Small(9);
  o.pilot = true;
  std::vector<float> truth;
  absl::StatusOr<ImpressionLog> log = GenerateImpressionLog(o, nullptr, &truth);
  ASSERT_TRUE(log.ok());
  const size_t n = log->size();
  const double base = 1.0 / 35;
  absl::flat_hash_map<uint64_t, std::pair<double, double>> user_stats,
      item_stats;  // (positives, count)
  for (size_t i = 0; i < n; i += 2) {
    auto& u = user_stats[log->user_ids[i]];
    auto& v = item_stats[log->item_ids[i]];
    u.first += log->labels[i];
    u.second += 1;
    v.first += log->labels[i];
    v.second += 1;
  }
  std::vector<double> learnt, oracle, pilot;
  std::vector<uint8_t> labels;
  constexpr double kPrior = 20;  // shrink towards the base rate
  for (size_t i = 1; i < n; i += 2) {
    const auto& u = user_stats[log->user_ids[i]];
    const auto& v = item_stats[log->item_ids[i]];
    const double pu = (u.first + kPrior * base) / (u.second + kPrior);
    const double pv = (v.first + kPrior * base) / (v.second + kPrior);
    learnt.push_back(std::log(pu) + std::log(pv));
    oracle.push_back(truth[i]);
    pilot.push_back(log->pilot_scores[i]);
    labels.push_back(log->labels[i]);
  }
  const double oracle_auc = Auc(oracle, labels);
  const double learnt_auc = Auc(learnt, labels);
  const double pilot_auc = Auc(pilot, labels);
  EXPECT_GT(oracle_auc, 0.75);
  EXPECT_GT(learnt_auc, 0.62);
  EXPECT_GT(pilot_auc, 0.6);
  EXPECT_LT(pilot_auc, oracle_auc - 0.02);
  // Miscalibrated: the pilot's mean is off the positive rate by > 20%.
  const double pilot_mean =
      std::accumulate(pilot.begin(), pilot.end(), 0.0) / static_cast<double>(pilot.size());
  EXPECT_GT(std::abs(pilot_mean - base) / base, 0.2);
  RecordProperty("oracle_auc", std::to_string(oracle_auc));
  RecordProperty("learnt_auc", std::to_string(learnt_auc));
  RecordProperty("pilot_auc", std::to_string(pilot_auc));
  std::printf(
      "AUC on held-out half: oracle %.3f, user+item CTR %.3f, pilot %.3f; pilot mean %.4f\n",
      oracle_auc, learnt_auc, pilot_auc, pilot_mean);
}

TEST(GeneratorTest, InvalidOptionsAreNamed) {
  GeneratorOptions o = *GeneratorPreset("tiny", 1.0);
  o.num_items = 0;
  EXPECT_EQ(o.Validate().message(), "the number of items (--items) must be >= 1");
  o = *GeneratorPreset("tiny", 1.0);
  o.num_instances = 100000;  // more pairs than 60 x 100 cells
  EXPECT_THAT(o.Validate().message(), HasSubstr("more than 90% of the 6000 user x item cells"));
  o = *GeneratorPreset("tiny", 1.0);
  o.positive_rate = 0.7;
  TempFiles files;
  const std::string never = files.Path("never-written.csv");
  EXPECT_THAT(WriteGeneratedLog(o, never).status().message(),
              HasSubstr("positive_rate must be in (0, 0.5)"));
  EXPECT_FALSE(std::filesystem::exists(never));
  o = *GeneratorPreset("tiny", 1.0);
  EXPECT_THAT(WriteGeneratedLog(o, "/nonexistent/dir/x.csv").status().message(),
              HasSubstr("the directory '/nonexistent/dir' does not exist"));
}

}  // namespace
}  // namespace graphsieve
