// The unbiased-test path of graphsieve-eval (eval/unbiased.h): a randomly
// exposed test file replaces every seed's test part.
#include "eval/unbiased.h"

#include <vector>

#include "eval/experiment.h"
#include "eval/experiment_internal.h"
#include "gen/generator.h"
#include "gtest/gtest.h"

namespace graphsieve::eval {
namespace {

ImpressionLog Log(std::vector<uint64_t> users, std::vector<uint64_t> items,
                  std::vector<uint8_t> labels) {
  ImpressionLog log;
  log.user_ids = std::move(users);
  log.item_ids = std::move(items);
  log.labels = std::move(labels);
  return log;
}

TEST(UnbiasedTest, MapsOntoTheExperimentsIndicesAndDropsUnknownNodes) {
  const ImpressionLog log = Log({70, 50, 70, 90}, {8, 9, 7, 8}, {1, 0, 0, 1});
  // users 70, 50, 90 -> 0, 1, 2; items 8, 9, 7 -> 0, 1, 2 (first appearance)
  const ImpressionLog test = Log({90, 50, 11, 70}, {7, 8, 8, 12}, {1, 0, 1, 0});
  absl::StatusOr<UnbiasedTest> t = MapUnbiasedTest(log, test, "t.csv");
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->test.user, (std::vector<uint32_t>{2, 1}));
  EXPECT_EQ(t->test.item, (std::vector<uint32_t>{2, 0}));
  EXPECT_EQ(t->test.label, (std::vector<uint8_t>{1, 0}));
  EXPECT_EQ(t->dropped_unknown, 2u);
  const internal::DenseLog dense = internal::Densify(log);
  EXPECT_EQ(dense.all.user[3], 2u);  // the same indices as the experiment's
  EXPECT_EQ(dense.all.item[2], 2u);
}

TEST(UnbiasedTest, RejectsATestWithOneClassByName) {
  const ImpressionLog log = Log({1, 2}, {1, 2}, {1, 0});
  absl::StatusOr<UnbiasedTest> t = MapUnbiasedTest(log, Log({1, 2}, {2, 1}, {0, 0}), "t.csv");
  ASSERT_FALSE(t.ok());
  EXPECT_NE(t.status().message().find("t.csv"), std::string_view::npos) << t.status();
}

// On a small preference log, every seed of both modes is measured on the
// given randomly exposed test, not on a part of the log.
TEST(UnbiasedTest, EveryRunIsMeasuredOnTheGivenTest) {
  GeneratorOptions g = *GeneratorPreset("small", 0.25);
  g.exposure = Exposure::kPreference;
  g.seed = 3;
  absl::StatusOr<ImpressionLog> log = GenerateImpressionLog(g);
  ASSERT_TRUE(log.ok()) << log.status();
  absl::StatusOr<ImpressionLog> test_log = GenerateRandomExposureTest(g, 20000);
  ASSERT_TRUE(test_log.ok()) << test_log.status();
  absl::StatusOr<UnbiasedTest> test = MapUnbiasedTest(*log, *test_log, "test");
  ASSERT_TRUE(test.ok()) << test.status();
  for (EvalMode mode : {EvalMode::kRandom, EvalMode::kDeployed}) {
    ExperimentOptions o;
    o.methods = {"uniform"};
    o.models = {ModelKind::kLogistic};
    o.seeds = 2;
    o.mode = mode;
    o.model.max_epochs = 3;
    o.pipeline.threads = 1;
    absl::StatusOr<ExperimentResult> own = RunExperiment(*log, o);
    absl::StatusOr<ExperimentResult> unbiased = RunExperiment(*log, o, {}, &test->test);
    ASSERT_TRUE(own.ok()) << own.status();
    ASSERT_TRUE(unbiased.ok()) << unbiased.status();
    EXPECT_EQ(unbiased->test_instances, test->test.size()) << EvalModeName(mode);
    EXPECT_NE(own->test_instances, test->test.size()) << EvalModeName(mode);
    ASSERT_EQ(own->runs.size(), unbiased->runs.size());
    for (size_t k = 0; k < own->runs.size(); ++k) {
      EXPECT_NE(own->runs[k].auc, unbiased->runs[k].auc) << EvalModeName(mode) << " run " << k;
    }
  }
}

}  // namespace
}  // namespace graphsieve::eval
