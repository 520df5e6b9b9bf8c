// graphsieve-eval's deployed mode (eval/deployed.h): the period split, and
// that the rates it trains with are exactly what a real graphsieve-server
// answers for the same pairs (the server binary on a loopback port, queried
// through the C++ client, as in tests/client).
#include "eval/deployed.h"

#include <cstdint>
#include <set>
#include <vector>

#include "client/sampling_rate_client.h"
#include "eval/experiment.h"
#include "eval/report.h"
#include "gtest/gtest.h"
#include "tests/client/cluster.h"
#include "tests/eval/synthetic_log.h"
#include "tests/temp_dir.h"

namespace graphsieve::eval {
namespace {

using ::graphsieve::testing::NewTempDir;
using ::graphsieve::testing::ServerProcess;

// Users 1..4, items 10..19; user 1 rated everything early, user 4 only late,
// users 2 and 3 half and half; unrated pairs have timestamp -1.
TEST(AssignPeriodsTest, TimeSplitSpreadsUnratedPairsLikeTheUsersRatings) {
  ImpressionLog log;
  std::vector<int64_t> t;
  for (uint64_t u = 1; u <= 4; ++u) {
    for (uint64_t v = 10; v < 20; ++v) {
      log.user_ids.push_back(u);
      log.item_ids.push_back(v);
      log.labels.push_back(0);
      const bool rated = v < 14;
      int64_t time = -1;
      if (rated) time = u == 1 ? 100 : u == 4 ? 900 : (v < 12 ? 200 : 800);
      t.push_back(time);
    }
  }
  PeriodOptions o;
  o.later_fraction = 0.5;
  std::vector<Period> p = *AssignPeriods(log, t, o);
  int later_unrated[5] = {0, 0, 0, 0, 0};
  for (size_t i = 0; i < log.size(); ++i) {
    if (t[i] >= 0) {
      EXPECT_EQ(p[i] == Period::kLater, t[i] >= 800) << "rated instance " << i;
    } else {
      later_unrated[log.user_ids[i]] += p[i] == Period::kLater;
    }
  }
  EXPECT_EQ(later_unrated[1], 0);           // all of user 1's ratings are early
  EXPECT_EQ(later_unrated[4], 6);           // all of user 4's are late
  EXPECT_EQ(*AssignPeriods(log, t, o), p);  // deterministic
  EXPECT_FALSE(AssignPeriods(log, std::vector<int64_t>(3, 1), o).ok());
  EXPECT_FALSE(AssignPeriods(log, std::vector<int64_t>(log.size(), -1), o).ok());
  o.later_fraction = 1.0;
  EXPECT_FALSE(AssignPeriods(log, t, o).ok());
}

TEST(AssignPeriodsTest, SeededSplitWithoutTimestamps) {
  const ImpressionLog log = testing::SyntheticLog(50, 40, 3);
  PeriodOptions o;
  o.later_fraction = 0.3;
  o.seed = 5;
  const std::vector<Period> a = *AssignPeriods(log, {}, o);
  size_t later = 0;
  for (Period x : a) later += x == Period::kLater;
  EXPECT_NEAR(static_cast<double>(later) / log.size(), 0.3, 0.03);
  EXPECT_EQ(*AssignPeriods(log, {}, o), a);
  o.seed = 6;
  EXPECT_NE(*AssignPeriods(log, {}, o), a);
}

// The deployed rates equal a real server's answers, pair by pair, for
// stored pairs (EXACT), unseen pairs of known nodes (INFERRED) and unknown
// nodes (DEFAULT), with and without propagation.
TEST(DeployedSnapshotTest, RatesAreWhatTheServerAnswers) {
  const ImpressionLog log = testing::SyntheticLog(90, 70, 21);
  PeriodOptions po;
  po.seed = 2;
  const std::vector<Period> periods = *AssignPeriods(log, {}, po);
  ImpressionLog earlier;
  std::vector<uint64_t> users, items;
  for (size_t i = 0; i < log.size(); ++i) {
    if (periods[i] == Period::kEarlier) {
      earlier.user_ids.push_back(log.user_ids[i]);
      earlier.item_ids.push_back(log.item_ids[i]);
      earlier.labels.push_back(log.labels[i]);
    } else {
      users.push_back(log.user_ids[i]);
      items.push_back(log.item_ids[i]);
    }
  }
  // Also every earlier pair (EXACT) and unknown users/items (DEFAULT).
  for (size_t i = 0; i < earlier.size(); i += 7) {
    users.push_back(earlier.user_ids[i]);
    items.push_back(earlier.item_ids[i]);
  }
  for (uint64_t k = 0; k < 20; ++k) {
    users.push_back(k % 2 ? 999999 + k : log.user_ids[k]);
    items.push_back(k % 2 ? log.item_ids[k] : 888888 + k);
  }
  for (bool propagation : {false, true}) {
    SCOPED_TRACE(propagation ? "with propagation" : "without propagation");
    PipelineOptions p;
    p.method = Method::kMaec;
    p.alpha = 0.2;
    p.floor = 0.05;
    p.uncertainty_propagation = propagation;
    p.score_propagation = propagation;
    p.resistance = ResistanceMethod::kExact;
    p.threads = 1;
    const std::string dir = NewTempDir(propagation ? "deployed-prop" : "deployed");
    absl::StatusOr<std::unique_ptr<DeployedSnapshot>> snap =
        DeployedSnapshot::Build(earlier, p, dir);
    ASSERT_TRUE(snap.ok()) << snap.status();
    // The server's default policy and the one that scores unknown nodes with the
    // snapshot's rate rule (graphsieve-eval --default_policy).
    for (const char* policy_name : {"node-mean", "model"}) {
      SCOPED_TRACE(policy_name);
      const DefaultPolicy policy = *DefaultPolicy::Parse(policy_name);
      std::vector<float> rates(users.size());
      std::vector<uint8_t> sources(users.size());
      SourceShares counts;
      ASSERT_TRUE(
          (*snap)
              ->Score(users, items, absl::MakeSpan(rates), absl::MakeSpan(sources), &counts, policy)
              .ok());
      EXPECT_GT(counts.exact, 0u);
      EXPECT_GT(counts.inferred, 0u);
      EXPECT_EQ(counts.by_default, 20u);

      ServerProcess server;
      ASSERT_TRUE(
          server
              .Start((*snap)->snapshot_root(), 0, {std::string("--default-policy=") + policy_name})
              .ok())
          << server.stderr_text();
      SamplingRateClientOptions co;
      co.target = server.target();
      auto client = SamplingRateClient::Create(co);
      ASSERT_TRUE(client.ok()) << client.status();
      absl::StatusOr<RateBatch> answer = (*client)->GetRates(users, items);
      ASSERT_TRUE(answer.ok()) << answer.status();
      ASSERT_EQ(answer->size(), users.size());
      ASSERT_EQ(answer->snapshot_versions, std::vector<std::string>{(*snap)->version()});
      size_t mismatches = 0;
      for (size_t i = 0; i < users.size(); ++i) {
        const uint8_t server_source =
            answer->sources[i] == v1::RATE_SOURCE_EXACT      ? DeployedSnapshot::kExact
            : answer->sources[i] == v1::RATE_SOURCE_INFERRED ? DeployedSnapshot::kInferred
                                                             : DeployedSnapshot::kDefault;
        if (answer->rates[i] != rates[i] || server_source != sources[i]) {
          if (++mismatches <= 5) {
            ADD_FAILURE() << "pair (" << users[i] << ", " << items[i] << "): eval " << rates[i]
                          << " source " << int{sources[i]} << ", server " << answer->rates[i]
                          << " source " << answer->sources[i];
          }
        }
      }
      EXPECT_EQ(mismatches, 0u) << "of " << users.size() << " pairs";
      EXPECT_EQ(server.Stop(), 0) << server.stderr_text();
    }
  }
}

// A pilot method on a log without pilot scores: the build fits graphsieve-build's
// built-in pilot, and the later period's rates, EXACT and INFERRED, are the
// server's answers from that snapshot (the pilot's model rates unseen pairs).
TEST(DeployedSnapshotTest, ThePilotMethodsFitTheBuiltInPilotAndRateAsTheServer) {
  const ImpressionLog log = testing::SyntheticLog(90, 70, 21);
  PeriodOptions po;
  po.seed = 3;
  const std::vector<Period> periods = *AssignPeriods(log, {}, po);
  ImpressionLog earlier;
  std::vector<uint64_t> users, items;
  for (size_t i = 0; i < log.size(); ++i) {
    if (periods[i] == Period::kEarlier) {
      earlier.user_ids.push_back(log.user_ids[i]);
      earlier.item_ids.push_back(log.item_ids[i]);
      earlier.labels.push_back(log.labels[i]);
    }
    users.push_back(log.user_ids[i]);  // the later pairs and some earlier ones (EXACT)
    items.push_back(log.item_ids[i]);
  }
  PipelineOptions p;
  p.method = Method::kOpt;
  p.alpha = 0.2;
  p.rate_rule = RateRule::kMixture;
  p.kappa = 1.0;
  p.threads = 1;
  const std::string dir = NewTempDir("deployed-pilot");
  absl::StatusOr<std::unique_ptr<DeployedSnapshot>> snap = DeployedSnapshot::Build(earlier, p, dir);
  ASSERT_TRUE(snap.ok()) << snap.status();
  EXPECT_TRUE((*snap)->built_in_pilot());
  std::vector<float> rates(users.size());
  std::vector<uint8_t> sources(users.size());
  SourceShares counts;
  ASSERT_TRUE(
      (*snap)->Score(users, items, absl::MakeSpan(rates), absl::MakeSpan(sources), &counts).ok());
  EXPECT_GT(counts.exact, 0u);
  EXPECT_GT(counts.inferred, 0u);
  std::set<float> inferred;
  for (size_t i = 0; i < users.size(); ++i) {
    if (sources[i] == DeployedSnapshot::kInferred) inferred.insert(rates[i]);
  }
  EXPECT_GT(inferred.size(), 10u) << "the INFERRED rates do not come from a per-pair pilot";
  ServerProcess server;
  ASSERT_TRUE(server.Start((*snap)->snapshot_root(), 0, {}).ok()) << server.stderr_text();
  SamplingRateClientOptions co;
  co.target = server.target();
  auto client = SamplingRateClient::Create(co);
  ASSERT_TRUE(client.ok()) << client.status();
  absl::StatusOr<RateBatch> answer = (*client)->GetRates(users, items);
  ASSERT_TRUE(answer.ok()) << answer.status();
  ASSERT_EQ(answer->size(), users.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < users.size(); ++i) mismatches += answer->rates[i] != rates[i];
  EXPECT_EQ(mismatches, 0u) << "of " << users.size() << " pairs";
  EXPECT_EQ(server.Stop(), 0) << server.stderr_text();
}

// --pilot=builtin: the experiment's pilot methods are rated by snapshots with
// the built-in pilot; it needs the deployed mode.
TEST(DeployedExperimentTest, TheBuiltInPilotRatesThePilotMethods) {
  const ImpressionLog log = testing::SyntheticLog(80, 60, 4);
  ExperimentOptions o;
  o.mode = EvalMode::kDeployed;
  o.methods = {"uniform", "opt-mix"};
  o.kappas = {1.0};
  o.pilot = PilotSource::kBuiltIn;
  o.models = {ModelKind::kLogistic};
  o.seeds = 1;
  o.model.max_epochs = 3;
  o.pipeline.threads = 1;
  o.include_full = false;
  o.work_dir = NewTempDir("deployed-experiment-pilot");
  absl::StatusOr<ExperimentResult> r = RunExperiment(log, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->pilot.rfind("built-in", 0), 0u) << r->pilot;
  ASSERT_EQ(r->runs.size(), 2u);
  for (const RunResult& run : r->runs) {
    if (run.method == "opt-mix") {
      EXPECT_GT(run.source_inferred, 0.5);
    }
  }
  o.mode = EvalMode::kRandom;
  absl::StatusOr<ExperimentResult> random = RunExperiment(log, o);
  ASSERT_FALSE(random.ok());
  EXPECT_NE(random.status().message().find("--pilot=builtin"), std::string::npos)
      << random.status();
}

// The experiment in deployed mode reports the source mix of the graph
// methods and none for uniform.
TEST(DeployedExperimentTest, ReportsTheSourceMix) {
  const ImpressionLog log = testing::SyntheticLog(80, 60, 4);
  ExperimentOptions o;
  o.mode = EvalMode::kDeployed;
  o.methods = {"uniform", "maec"};
  o.floors = {0.05};
  o.models = {ModelKind::kLogistic};
  o.seeds = 1;
  o.model.max_epochs = 3;
  o.pipeline.threads = 1;
  o.include_full = false;
  o.work_dir = NewTempDir("deployed-experiment");
  absl::StatusOr<ExperimentResult> r = RunExperiment(log, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->period_split, "seeded");
  EXPECT_EQ(r->earlier_instances + r->later_instances, log.size());
  EXPECT_EQ(r->train_instances + r->validation_instances + r->test_instances, r->later_instances);
  ASSERT_EQ(r->runs.size(), 2u);
  for (const RunResult& run : r->runs) {
    if (run.method == "uniform") {
      EXPECT_LT(run.source_exact, 0.0);
      continue;
    }
    EXPECT_NEAR(run.source_exact + run.source_inferred + run.source_default, 1.0, 1e-9);
    EXPECT_GT(run.source_inferred, 0.5);  // most later pairs are unseen pairs of known nodes
  }
  const std::string md = FormatMarkdown(*r, SummariseRuns(r->runs), {"t", "", 10});
  EXPECT_NE(md.find("source EXACT / INFERRED / DEFAULT"), std::string::npos) << md;
}

}  // namespace
}  // namespace graphsieve::eval
