// graphsieve-eval --mode=deployed --refresh_every (eval/deployed.h
// AssignChunks, DeployedSnapshot::BuildDelta; docs/FRESHNESS.md): the later
// period replayed in time order, each chunk rated by the base plus a delta
// built by the real delta builder from the chunks before it.
#include <cstdint>
#include <vector>

#include "eval/deployed.h"
#include "eval/experiment.h"
#include "eval/experiment_internal.h"
#include "gen/generator.h"
#include "gtest/gtest.h"
#include "tests/io/test_files.h"

namespace graphsieve::eval {
namespace {

using testing_io::TempFiles;

TEST(AssignChunksTest, TimedByTimeUntimedLikeTheirUser) {
  ImpressionLog log;
  log.user_ids = {1, 1, 2, 2, 1, 3};
  log.item_ids = {10, 11, 10, 12, 13, 14};
  log.labels = {1, 0, 1, 0, 0, 0};
  // Instances 0..3 timed, 4 (user 1) and 5 (user 3, no timed instance) untimed.
  const std::vector<int64_t> times = {100, 259, 160, 420, -1, -1};
  const std::vector<size_t> later = {0, 1, 2, 3, 4, 5};
  absl::StatusOr<std::vector<uint32_t>> c = AssignChunks(log, times, later, 60, 1);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)[0], 0u);  // t0 = 100
  EXPECT_EQ((*c)[1], 2u);  // 159 / 60
  EXPECT_EQ((*c)[2], 1u);
  EXPECT_EQ((*c)[3], 5u);
  EXPECT_TRUE((*c)[4] == 0u || (*c)[4] == 2u);  // one of user 1's chunks
  EXPECT_EQ((*c)[5], 0u);
  EXPECT_NE(AssignChunks(log, times, later, 0, 1).status().message().find("refresh_every"),
            std::string_view::npos);
  EXPECT_FALSE(AssignChunks(log, {}, later, 60, 1).ok());
}

class RefreshTest : public ::testing::Test {
 protected:
  void SetUp() override {
    GeneratorOptions g = *GeneratorPreset("small", 0.3);
    g.exposure = Exposure::kPreference;
    g.seed = 3;
    g.churn_days = 8;
    g.new_users_per_day = 20;
    g.new_items_per_day = 40;
    g.item_half_life_days = 2;
    absl::StatusOr<ImpressionLog> log = GenerateImpressionLog(g, nullptr, nullptr, &times_);
    ASSERT_TRUE(log.ok()) << log.status();
    log_ = *std::move(log);
    o_.mode = EvalMode::kDeployed;
    o_.methods = {"maec"};
    o_.floors = {0.05};
    o_.models = {ModelKind::kLogistic};
    o_.seeds = 1;
    o_.model.max_epochs = 2;
    o_.pipeline.threads = 1;
    o_.include_full = false;
    o_.work_dir = files_.Path("");
  }

  // Per training pair rates and sources of `maec` with refresh_every.
  void Rates(int64_t refresh_every, internal::SeedData* s, std::vector<float>* rates,
             std::vector<uint8_t>* sources) {
    ExperimentOptions o = o_;
    o.refresh_every = refresh_every;
    const internal::DenseLog dense = internal::Densify(log_);
    std::string pilot;
    absl::StatusOr<internal::SeedData> seed =
        internal::PrepareDeployedSeed(log_, dense, times_, o, 1, false, &pilot);
    ASSERT_TRUE(seed.ok()) << seed.status();
    *s = *std::move(seed);
    internal::Config c;
    c.spec = *ParseMethodSpec("maec");
    c.alpha = 0.2;
    c.floor = 0.05;
    bool refused = false;
    absl::StatusOr<std::vector<float>> r =
        internal::ComputeDeployedRates(c, *s, o, 1, &refused, sources);
    ASSERT_TRUE(r.ok()) << r.status();
    *rates = *std::move(r);
  }

  TempFiles files_;
  ImpressionLog log_;
  std::vector<int64_t> times_;
  ExperimentOptions o_;
};

TEST_F(RefreshTest, FirstChunkAsWithoutRefreshLaterChunksFresher) {
  internal::SeedData plain, fresh;
  std::vector<float> plain_rates, fresh_rates;
  std::vector<uint8_t> plain_src, fresh_src;
  ASSERT_NO_FATAL_FAILURE(Rates(0, &plain, &plain_rates, &plain_src));
  ASSERT_NO_FATAL_FAILURE(Rates(86400, &fresh, &fresh_rates, &fresh_src));  // daily
  ASSERT_EQ(plain.pairs.num_pairs(), fresh.pairs.num_pairs());
  ASSERT_TRUE(plain.chunk_logs.empty());
  ASSERT_GE(fresh.chunk_logs.size(), 3u);  // 4 days in the later half
  uint64_t first = 0, plain_default = 0, fresh_default = 0, fresher = 0;
  for (size_t q = 0; q < fresh.pairs.num_pairs(); ++q) {
    plain_default += plain_src[q] == DeployedSnapshot::kDefault;
    fresh_default += fresh_src[q] == DeployedSnapshot::kDefault;
    if (fresh.pair_chunk[q] == 0) {  // rated by the base alone in both runs
      ++first;
      ASSERT_EQ(fresh_rates[q], plain_rates[q]) << "pair " << q;
      ASSERT_EQ(fresh_src[q], plain_src[q]) << "pair " << q;
    } else {
      fresher +=
          plain_src[q] == DeployedSnapshot::kDefault && fresh_src[q] != DeployedSnapshot::kDefault;
    }
  }
  EXPECT_GT(first, 0u);
  EXPECT_GT(fresher, 0u);  // the deltas know nodes the base never saw
  EXPECT_LT(fresh_default, plain_default);
  for (float r : fresh_rates) ASSERT_TRUE(r > 0.0f && r <= 1.0f);
}

TEST_F(RefreshTest, ExperimentReportsALowerDefaultShare) {
  ExperimentOptions refreshed = o_;
  refreshed.refresh_every = 86400;
  absl::StatusOr<ExperimentResult> plain = RunExperiment(log_, o_, times_);
  absl::StatusOr<ExperimentResult> fresh = RunExperiment(log_, refreshed, times_);
  ASSERT_TRUE(plain.ok()) << plain.status();
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_EQ(plain->runs.size(), 1u);
  ASSERT_EQ(fresh->runs.size(), 1u);
  EXPECT_EQ(fresh->period_split, "time");
  EXPECT_LT(fresh->runs[0].source_default, plain->runs[0].source_default);
  EXPECT_NEAR(
      fresh->runs[0].source_exact + fresh->runs[0].source_inferred + fresh->runs[0].source_default,
      1.0, 1e-9);
}

TEST_F(RefreshTest, PilotMethodsAreRefused) {
  ExperimentOptions o = o_;
  o.refresh_every = 86400;
  o.methods = {"opt"};
  absl::StatusOr<ExperimentResult> r = RunExperiment(log_, o, times_);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--refresh_every"), std::string_view::npos);
}

}  // namespace
}  // namespace graphsieve::eval
