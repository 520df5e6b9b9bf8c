#include "eval/experiment.h"

#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "eval/experiment_internal.h"
#include "eval/report.h"
#include "gtest/gtest.h"
#include "tests/eval/synthetic_log.h"

namespace graphsieve::eval {
namespace {

ExperimentOptions SmallOptions() {
  ExperimentOptions o;
  o.methods = {"uniform", "opt", "maec", "maec-prop", "max"};
  o.seeds = 2;
  o.model.dim = 4;
  o.model.max_epochs = 5;
  o.pipeline.threads = 1;
  return o;
}

TEST(ExperimentTest, RunsEveryMethodAndKeepsAlphaOfTheNegatives) {
  const ImpressionLog log = testing::SyntheticLog(120, 80, 4);
  absl::StatusOr<ExperimentResult> r = RunExperiment(log, SmallOptions());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->instances, log.size());
  EXPECT_EQ(r->train_instances + r->validation_instances + r->test_instances, log.size());
  // full + 5 methods, 2 models, 2 seeds.
  ASSERT_EQ(r->runs.size(), 6u * 2u * 2u);
  std::set<std::string> methods;
  for (const RunResult& run : r->runs) {
    methods.insert(run.method);
    EXPECT_TRUE(std::isfinite(run.auc) && std::isfinite(run.log_loss) && std::isfinite(run.ndcg));
    EXPECT_GT(run.auc, 0.5) << run.method << " " << run.model;
    if (run.method == "full") {
      EXPECT_EQ(run.kept_negative_fraction, 1.0);
    } else {
      // The mean rate over negative instances is alpha; the draw is binomial around it.
      EXPECT_NEAR(run.kept_negative_fraction, 0.2, 0.03) << run.method;
    }
  }
  EXPECT_EQ(methods, (std::set<std::string>{"full", "uniform", "opt", "maec", "maec-prop", "max"}));
  // Paired deltas: uniform against itself is exactly 0, others are measured.
  for (const Summary& s : SummariseRuns(r->runs)) {
    EXPECT_EQ(s.auc.n, 2);
    if (s.method == "uniform") {
      EXPECT_EQ(s.delta_auc_vs_uniform.mean, 0.0);
    }
    if (s.method != "full") {
      EXPECT_EQ(s.delta_auc_vs_uniform.n, 2) << s.method;
    }
  }
}

TEST(ExperimentTest, SameSeedsSameNumbers) {
  const ImpressionLog log = testing::SyntheticLog(60, 50, 9);
  ExperimentOptions o = SmallOptions();
  o.methods = {"uniform", "maec"};
  o.models = {ModelKind::kLogistic};
  o.seeds = 1;
  absl::StatusOr<ExperimentResult> a = RunExperiment(log, o);
  absl::StatusOr<ExperimentResult> b = RunExperiment(log, o);
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_EQ(a->runs.size(), b->runs.size());
  for (size_t i = 0; i < a->runs.size(); ++i) {
    EXPECT_EQ(a->runs[i].auc, b->runs[i].auc);
    EXPECT_EQ(a->runs[i].kept_instances, b->runs[i].kept_instances);
  }
}

TEST(ExperimentTest, GridSkipsFloorsAtOrAboveAlpha) {
  const ImpressionLog log = testing::SyntheticLog(60, 50, 2);
  ExperimentOptions o = SmallOptions();
  o.methods = {"maec-prop"};
  o.models = {ModelKind::kLogistic};
  o.seeds = 1;
  o.alphas = {0.05, 0.3};
  o.floors = {0.01, 0.1};
  o.gammas = {0.2, 0.5};
  absl::StatusOr<ExperimentResult> r = RunExperiment(log, o);
  ASSERT_TRUE(r.ok()) << r.status();
  // full + (alpha 0.05: floor 0.01 x 2 gammas) + (alpha 0.3: 2 floors x 2 gammas) = 1 + 2 + 4.
  EXPECT_EQ(r->runs.size(), 7u);
}

// The *-mix methods use the mixture rate rule: one row per κ (and pilot κ
// for the ensembles), α reached, no floor; κ in the report's rule column.
TEST(ExperimentTest, MixtureMethodsGridOverKappaAndReachAlpha) {
  const ImpressionLog log = testing::SyntheticLog(120, 80, 4);
  ExperimentOptions o = SmallOptions();
  o.methods = {"uniform", "maec-mix", "max-raw-mix"};
  o.models = {ModelKind::kLogistic};
  o.seeds = 1;
  o.include_full = false;
  o.kappas = {0.25, 1.0};
  o.pilot_kappas = {0.5};
  absl::StatusOr<ExperimentResult> r = RunExperiment(log, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->runs.size(), 5u);  // uniform + 2 kappas x (maec-mix, max-raw-mix)
  std::set<std::pair<std::string, double>> seen;
  for (const RunResult& run : r->runs) {
    if (run.method == "uniform") continue;
    seen.insert({run.method, run.kappa});
    EXPECT_EQ(run.floor, 0.0);
    EXPECT_EQ(run.pilot_kappa, run.method == "max-raw-mix" ? 0.5 : 0.0);
    EXPECT_NEAR(run.kept_negative_fraction, 0.2, 0.03) << run.method << " kappa " << run.kappa;
  }
  EXPECT_EQ(seen.size(), 4u);
  // A larger κ pulls the rates towards α: different rates for the same pairs.
  double positive_rate[2] = {0, 0};
  for (const RunResult& run : r->runs) {
    if (run.method == "maec-mix") positive_rate[run.kappa == 1.0] = run.mean_rate_positive_pairs;
  }
  EXPECT_GT(std::abs(positive_rate[0] - positive_rate[1]), 1e-3);
  const std::string md = FormatMarkdown(*r, SummariseRuns(r->runs), {"t", "", 10});
  EXPECT_NE(md.find("κ 0.25, pilot κ 0.5"), std::string::npos) << md;
}

TEST(ExperimentTest, RejectsBadInputsWithClearMessages) {
  const ImpressionLog log = testing::SyntheticLog(40, 30, 1);
  ExperimentOptions o = SmallOptions();
  o.methods = {"uniform", "nope"};
  absl::StatusOr<ExperimentResult> r = RunExperiment(log, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("nope"), std::string_view::npos) << r.status();

  o = SmallOptions();
  o.pilot = PilotSource::kColumn;
  ImpressionLog no_pilot = log;
  no_pilot.pilot_scores.clear();
  r = RunExperiment(no_pilot, o);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("pilot"), std::string_view::npos) << r.status();

  o = SmallOptions();
  o.alphas = {1.5};
  EXPECT_FALSE(RunExperiment(log, o).ok());

  ImpressionLog all_negative = log;
  std::fill(all_negative.labels.begin(), all_negative.labels.end(), 0);
  r = RunExperiment(all_negative, SmallOptions());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("positives"), std::string_view::npos) << r.status();

  ImpressionLog tiny;
  r = RunExperiment(tiny, SmallOptions());
  ASSERT_FALSE(r.ok());
}

// The sqrt variant refits its rates to alpha and gives a flatter rate curve:
// fewer negatives at the floor than the pipeline's proportional rates.
TEST(ExperimentTest, SqrtScoreVariantKeepsAlphaWithFewerNegativesAtTheFloor) {
  const ImpressionLog log = testing::SyntheticLog(120, 80, 6);
  ExperimentOptions o = SmallOptions();
  o.methods = {"maec-prop", "maec-prop-sqrt"};
  o.models = {ModelKind::kLogistic};
  o.seeds = 1;
  o.floors = {0.05};
  absl::StatusOr<ExperimentResult> r = RunExperiment(log, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->runs.size(), 3u);
  const RunResult& prop = r->runs[1];
  const RunResult& sqrt = r->runs[2];
  ASSERT_EQ(sqrt.method, "maec-prop-sqrt");
  EXPECT_NEAR(sqrt.kept_negative_fraction, 0.2, 0.03);
  EXPECT_LE(sqrt.negatives_at_floor, prop.negatives_at_floor);
  EXPECT_NE(sqrt.kept_instances, prop.kept_instances);
}

// The exposure discount by hand on three items: item 0 with 2 + 4 impressions,
// item 1 with 1, item 2 with 3 whose negatives score 0 (item-centred leaves it).
TEST(ExperimentTest, ExposureDiscountedScoresMatchAHandReference) {
  PairTable pairs;
  pairs.user_ids = {10, 11};
  pairs.item_ids = {20, 21, 22};
  pairs.pair_user = {0, 1, 0, 1};
  pairs.pair_item = {0, 0, 1, 2};
  pairs.label = {0, 1, 0, 0};
  pairs.instances = {2, 4, 1, 3};
  pairs.negatives = {2, 3, 1, 3};
  const std::vector<float> score = {1.0f, 4.0f, 2.0f, 0.0f};
  const std::vector<double> half = internal::ExposureDiscountedScores(pairs, score, 0.5, false);
  ASSERT_EQ(half.size(), 4u);
  EXPECT_DOUBLE_EQ(half[0], 1.0 / std::sqrt(6.0));
  EXPECT_DOUBLE_EQ(half[1], 4.0 / std::sqrt(6.0));
  EXPECT_DOUBLE_EQ(half[2], 2.0);
  EXPECT_DOUBLE_EQ(half[3], 0.0);
  const std::vector<double> one = internal::ExposureDiscountedScores(pairs, score, 1.0, false);
  EXPECT_DOUBLE_EQ(one[0], 1.0 / 6.0);
  EXPECT_DOUBLE_EQ(one[1], 4.0 / 6.0);
  // Item-centred: item 0's negative-weighted mean score is (2·1 + 3·4) / 5 = 2.8.
  const std::vector<double> centred = internal::ExposureDiscountedScores(pairs, score, 0.0, true);
  EXPECT_DOUBLE_EQ(centred[0], 1.0 / 2.8);
  EXPECT_DOUBLE_EQ(centred[1], 4.0 / 2.8);
  EXPECT_DOUBLE_EQ(centred[2], 1.0);
  EXPECT_DOUBLE_EQ(centred[3], 0.0);
}

// The discounted variants reach α and give other rates than the default rule
// on the same pairs; the exposure discount is the pipeline's (it has a
// snapshot), the item-centred variant is offline only.
TEST(ExperimentTest, ExposureDiscountVariantsKeepAlpha) {
  const ImpressionLog log = testing::SyntheticLog(120, 80, 6);
  ExperimentOptions o = SmallOptions();
  o.methods = {"maec-prop-mix", "maec-prop-mix-exp1", "maec-prop-mix-item"};
  o.models = {ModelKind::kLogistic};
  o.seeds = 1;
  o.include_full = false;
  o.kappas = {1.0};
  absl::StatusOr<ExperimentResult> r = RunExperiment(log, o);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->runs.size(), 3u);
  for (const RunResult& run : r->runs) {
    EXPECT_NEAR(run.kept_negative_fraction, 0.2, 0.03) << run.method;
    EXPECT_EQ(run.kappa, 1.0) << run.method;
  }
  EXPECT_NE(r->runs[1].mean_rate_positive_pairs, r->runs[0].mean_rate_positive_pairs);
  EXPECT_NE(r->runs[2].mean_rate_positive_pairs, r->runs[0].mean_rate_positive_pairs);
  EXPECT_NE(r->runs[1].kept_instances, r->runs[0].kept_instances);

  o.mode = EvalMode::kDeployed;
  o.methods = {"uniform", "maec-prop-mix-exp0.5"};
  EXPECT_TRUE(o.Validate().ok()) << o.Validate();  // the builder's --exposure_power
  o.methods = {"uniform", "maec-prop-mix-item"};
  const absl::Status st = o.Validate();
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.message().find("maec-prop-mix-item"), std::string_view::npos) << st;
  EXPECT_NE(st.message().find("deployed"), std::string_view::npos) << st;
}

TEST(ExperimentTest, TrainsAPilotWhenTheLogHasNone) {
  ImpressionLog log = testing::SyntheticLog(80, 60, 5);
  log.pilot_scores.clear();
  ExperimentOptions o = SmallOptions();
  o.methods = {"opt"};
  o.models = {ModelKind::kLogistic};
  o.seeds = 1;
  absl::StatusOr<ExperimentResult> r = RunExperiment(log, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_NE(r->pilot.find("lr"), std::string::npos) << r->pilot;
}

// A cross-fitted pilot scores a pair with models that never saw it: flipping
// every label of one pair leaves that pair's score bit for bit (and moves it
// when the pilot is scored in-sample).
TEST(ExperimentTest, CrossFittedPilotIgnoresThePairsOwnLabel) {
  const ImpressionLog log = testing::SyntheticLog(80, 60, 5);
  const internal::DenseLog dense = internal::Densify(log);
  Instances train, validation;
  for (size_t i = 0; i < log.size(); ++i) {
    internal::Append(dense.all, i, i % 5 == 0 ? &validation : &train);
  }
  size_t target = 0;  // the first positive training instance; its pair gets flipped
  while (train.label[target] == 0) ++target;
  Instances flipped = train;
  std::vector<size_t> of_pair;
  for (size_t i = 0; i < train.size(); ++i) {
    if (train.user[i] == train.user[target] && train.item[i] == train.item[target]) {
      flipped.label[i] = 0;
      of_pair.push_back(i);
    }
  }
  for (PilotSource kind : {PilotSource::kTrainLr, PilotSource::kTrainFm}) {
    ExperimentOptions o = SmallOptions();
    o.pilot = kind;
    o.pilot_folds = 3;
    std::string name;
    auto a = internal::TrainPilot(o, dense, 7, train, validation, "the training part", &name);
    auto b = internal::TrainPilot(o, dense, 7, flipped, validation, "the training part", &name);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    EXPECT_NE(name.find("cross-fitted over 3 folds"), std::string::npos) << name;
    for (size_t i : of_pair) EXPECT_EQ((*a)[i], (*b)[i]) << "instance " << i;
    EXPECT_NE(*a, *b);  // the other folds' models did see the flip
    o.pilot_folds = 1;
    a = internal::TrainPilot(o, dense, 7, train, validation, "the training part", &name);
    b = internal::TrainPilot(o, dense, 7, flipped, validation, "the training part", &name);
    ASSERT_TRUE(a.ok() && b.ok()) << a.status() << b.status();
    EXPECT_GT((*a)[target], (*b)[target]) << "in-sample: the positive label raised its own score";
  }
  EXPECT_TRUE(ParsePilotSource("mlp").ok());
  ExperimentOptions bad = SmallOptions();
  bad.pilot_folds = 0;
  EXPECT_NE(bad.Validate().message().find("pilot_folds"), std::string::npos);
}

// Validate covers every setting up front, naming the flag it comes from, whichever models and
// methods run: a setting only a later model or method reads must not stop the experiment
// after the earlier ones trained.
TEST(ExperimentTest, ValidateChecksEverySettingBeforeAnyRun) {
  struct Case {
    std::function<void(ExperimentOptions*)> set;
    std::string message;
  };
  for (const Case& c : std::vector<Case>{
           {[](ExperimentOptions* o) { o->model.hidden = 0; }, "--hidden must be in [1, 4096]"},
           {[](ExperimentOptions* o) { o->model.dim = 0; }, "--dim must be in [1, 1024]"},
           {[](ExperimentOptions* o) { o->pipeline.sketch_dim = 0; }, "--sketch_dim must be in"},
           {[](ExperimentOptions* o) { o->pipeline.score_power = 0; }, "--score_power must be in"},
           {[](ExperimentOptions* o) { o->pipeline.threads = 0; }, "--threads must be in [1, 256]"},
           {[](ExperimentOptions* o) {
              o->alphas = {0.2, 1.5};
            },
            "--alphas: 1.5 is not in (0, 1)"},
           {[](ExperimentOptions* o) { o->kappas = {}; }, "--kappas is empty"},
       }) {
    ExperimentOptions o = SmallOptions();
    o.models = {ModelKind::kLogistic};  // neither dim nor hidden is read by lr
    o.methods = {"uniform"};            // nor the pipeline's settings by uniform
    ASSERT_TRUE(o.Validate().ok()) << o.Validate();
    c.set(&o);
    EXPECT_NE(o.Validate().message().find(c.message), std::string::npos)
        << c.message << ": " << o.Validate();
  }
}

}  // namespace
}  // namespace graphsieve::eval

namespace graphsieve::eval {
namespace {

TEST(ExperimentTest, OracleNeedsTheTruthAndReportsItsPrediction) {
  const ImpressionLog log = testing::SyntheticLog(120, 80, 4);
  ExperimentOptions o = SmallOptions();
  o.methods = {"uniform", "oracle", "oracle-p", "oracle-mix"};
  o.models = {ModelKind::kLogistic};
  absl::StatusOr<ExperimentResult> refused = RunExperiment(log, o);
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("--truth_col"), std::string::npos) << refused.status();
  TrueProbabilities truth;
  for (size_t i = 0; i < log.size(); ++i) {
    truth.log.push_back(log.labels[i] ? 0.6f : 0.05f + 0.01f * static_cast<float>(i % 7));
  }
  absl::StatusOr<ExperimentResult> r = RunExperiment(log, o, {}, nullptr, &truth);
  ASSERT_TRUE(r.ok()) << r.status();
  int oracle_runs = 0;
  for (const RunResult& run : r->runs) {
    if (run.method.rfind("oracle", 0) == 0) {
      ++oracle_runs;
      EXPECT_NEAR(run.kept_negative_fraction, 0.2, 0.05) << run.method;
      EXPECT_GT(run.oracle_cv2, 0.0) << run.method;
      EXPECT_NEAR(run.predicted_recovery, run.oracle_cv2 / ((1 + run.oracle_cv2) * 0.8), 1e-12);
    } else {
      EXPECT_EQ(run.predicted_recovery, -1.0) << run.method;
    }
  }
  EXPECT_EQ(oracle_runs, 6);  // three methods, two seeds
  truth.log.pop_back();
  EXPECT_FALSE(RunExperiment(log, o, {}, nullptr, &truth).ok());
}

}  // namespace
}  // namespace graphsieve::eval
