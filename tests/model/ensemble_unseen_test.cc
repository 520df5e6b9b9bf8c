// The ensembles' INFERRED pairs (core/model/unseen.h, docs/METHOD.md "Per
// ensemble member"): max / mean / product store each member's fit and the
// combination's; the stored fits reproduce the builder's per-pair member
// rates; with the built-in pilot's rows an unseen pair of known nodes is
// scored from the rows as a reference in double computes it
// (tests/model/ensemble_reference.h); without pilot rows, or from a model
// written before the member fits, the nodes' mean rates.
#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/maec/pipeline.h"
#include "core/model/unseen.h"
#include "core/offline/build_job.h"
#include "core/snapshot/format.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/maec/toy_graphs.h"
#include "tests/model/ensemble_reference.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using testing::ReferenceCombine;
using testing::ReferenceEnsembleRate;
using testing::ReferenceRuleRate;

constexpr const char* kEnsembles[] = {"max", "mean", "product"};

double Relative(double got, double want) {
  return std::abs(got - want) / std::max(std::abs(want), 1e-3);
}

// The pair table's n_i: the instances of every pair of item i.
std::vector<double> ItemImpressions(const PairTable& t) {
  std::vector<double> n(t.num_items(), 0.0);
  for (size_t p = 0; p < t.num_pairs(); ++p) n[t.pair_item[p]] += t.instances[p];
  return n;
}

// For every negative pair the builder's combined score and rate follow from
// its MA-EC score (propagated_score, then s^β / n_i^η), its pilot score and
// the stored member fits; the members' rules are the options'. Without pilot
// rows (a user's pilot column) an unseen pair gets the nodes' mean rates.
TEST(EnsembleMembers, StoredFitsReproduceTheBuildersPerPairRates) {
  ImpressionLog log = testing::PowerLawLog(50, 40, 14.0, 0.25, 5);
  for (size_t k = 0; k < log.size(); ++k) {
    log.pilot_scores.push_back(0.02f + float((k * 37) % 97) / 100.0f);
  }
  const PairTable t = *BuildPairTable(log, 2);
  const std::vector<double> n = ItemImpressions(t);
  for (const char* name : kEnsembles) {
    for (RateRule rule : {RateRule::kFloor, RateRule::kMixture}) {
      SCOPED_TRACE(std::string(name) + (rule == RateRule::kFloor ? " floor" : " mixture"));
      PipelineOptions o;
      o.method = *ParseMethod(name);
      o.rate_rule = rule;
      o.alpha = 0.3;
      o.floor = 0.02;
      o.pilot_floor = 0.03;
      o.kappa = 1.0;
      o.pilot_kappa = 0.5;
      o.score_power = 0.75;
      o.exposure_power = 0.5;
      o.resistance = ResistanceMethod::kExact;
      absl::StatusOr<PipelineResult> r = RunPipeline(t, o);
      ASSERT_TRUE(r.ok()) << r.status();
      const UnseenModel& m = r->model;
      ASSERT_TRUE(m.has_members);
      EXPECT_EQ(m.exposure_power, 0.5);
      EXPECT_EQ(m.maec_member.rule, static_cast<int>(rule));
      EXPECT_EQ(m.pilot_member.rule, static_cast<int>(rule));
      if (rule == RateRule::kFloor) {
        EXPECT_EQ(m.maec_member.floor, 0.02);
        EXPECT_EQ(m.pilot_member.floor, 0.03);
      } else {
        EXPECT_EQ(m.maec_member.kappa, 1.0);
        EXPECT_EQ(m.pilot_member.kappa, 0.5);
        EXPECT_GT(m.maec_member.score_mean, 0.0);
        EXPECT_GT(m.pilot_member.score_mean, 0.0);
      }
      EXPECT_GT(m.maec_member.rho, 0.0);
      EXPECT_GT(m.pilot_member.rho, 0.0);
      if (o.method == Method::kMean) {
        EXPECT_EQ(m.combined.rule, 0);  // no refit: the identity
        EXPECT_EQ(m.combined.rho, 1.0);
        EXPECT_EQ(m.combined.floor, 0.0);
      } else {
        EXPECT_EQ(m.combined.rho, m.rho);  // the refit the top-level fields hold
      }
      size_t checked = 0;
      std::set<float> distinct;
      for (size_t p = 0; p < t.num_pairs(); ++p) {
        if (t.label[p]) continue;  // positives: counterfactual scores
        const double s = std::pow(double(r->propagated_score[p]), o.score_power) /
                         std::pow(n[t.pair_item[p]], o.exposure_power);
        const double c = ReferenceCombine(m.method, ReferenceRuleRate(m.maec_member, s),
                                          ReferenceRuleRate(m.pilot_member, t.pilot_mean[p]));
        ASSERT_LE(Relative(r->score[p], c), 1e-5) << "pair " << p << ": " << r->score[p];
        const double rate = ReferenceRuleRate(m.combined, c);
        ASSERT_LE(Relative(r->rate[p], rate), 1e-5) << "pair " << p << ": " << r->rate[p];
        distinct.insert(r->rate[p]);
        ++checked;
      }
      EXPECT_GT(checked, 200u);
      EXPECT_GT(distinct.size(), 50u);

      // No pilot rows: the mean of the two nodes' mean rates.
      ASSERT_EQ(m.pilot_dim, 0);
      const NodeTable& nt = r->nodes;
      const size_t users = t.num_users();
      for (size_t u = 0; u < 5; ++u) {
        for (size_t i = users; i < users + 5; ++i) {
          const NodeView uv{nt.records[u], nt.SketchRow(u)};
          const NodeView iv{nt.records[i], nt.SketchRow(i)};
          const double mean = 0.5 * (double(nt.records[u].mean_rate) + nt.records[i].mean_rate);
          EXPECT_FLOAT_EQ(ScoreUnseenPair(uv, iv, m),
                          std::min(std::max(mean, rule == RateRule::kFloor ? m.floor : 0.0), 1.0));
        }
      }
    }
  }
}

// Two kinds of users and two groups of items (as tests/server/
// pilot_serving_test.cc): each user is shown 12 of the 40 items; every
// other (user, item) is an unseen pair of known nodes.
constexpr int kItems = 40, kUsers = 80;
bool Shown(uint64_t user, int item) { return (item * 7 + user * 3) % kItems < 12; }
void WriteLog(const std::string& path) {
  std::ofstream out(path);
  out << "user_id,item_id,label\n";
  for (uint64_t u = 1; u <= kUsers; ++u) {
    int shown = 0;
    for (int i = 0; i < kItems; ++i) {
      if (!Shown(u, i)) continue;
      const bool same_group = (u % 2) == static_cast<uint64_t>(i % 2);
      out << u << "," << i << "," << (same_group && (shown++ % 2 == 0)) << "\n";
    }
  }
}

class EnsembleServingTest : public ::testing::TestWithParam<const char*> {};

// With the built-in pilot's rows: every unseen pair of known nodes gets the
// reference's rate; a model without the member fits (as written before them)
// still decodes and gives the nodes' mean rates instead.
TEST_P(EnsembleServingTest, UnseenPairsOfKnownNodesGetTheMembersCombined) {
  const std::string dir = testing::NewTempDir("ensemble_unseen");
  const std::string root = dir + "/root", log = dir + "/log.csv";
  WriteLog(log);
  BuildOptions o;
  o.inputs = {log};
  o.snapshot_root = root;
  o.pipeline.method = *ParseMethod(GetParam());  // no reader.pilot_column: the built-in pilot
  o.pipeline.sketch_dim = 8;
  o.pipeline.threads = 2;
  o.pipeline.pilot_kappa = 0.5;
  o.pipeline.exposure_power = 0.5;
  o.pilot.dim = 4;
  o.pilot.epochs = 10;
  auto built = RunBuild(o, BuildObserver());
  ASSERT_TRUE(built.ok()) << built.status();
  ASSERT_TRUE(built->built_in_pilot);
  auto snap = VersionOpener().Open(root, built->version, SnapshotReaderOptions());
  ASSERT_TRUE(snap.ok()) << snap.status();
  const UnseenModel& m = (*snap)->model();
  ASSERT_TRUE(m.has_members);
  ASSERT_EQ(m.pilot_dim, 4);
  EXPECT_EQ(m.exposure_power, 0.5);

  // The same model as an older builder wrote it: no member fits.
  nlohmann::json j = nlohmann::json::parse(snapshot::EncodeUnseenModel(m));
  ASSERT_EQ(j.erase("members"), 1u);
  absl::StatusOr<UnseenModel> old = snapshot::DecodeUnseenModel(j.dump());
  ASSERT_TRUE(old.ok()) << old.status();
  ASSERT_FALSE(old->has_members);

  size_t pairs = 0, unlike_fallback = 0;
  std::set<float> distinct;
  double worst = 0;
  for (uint64_t user = 1; user <= kUsers; ++user) {
    NodeView u;
    ASSERT_TRUE((*snap)->FindNode(false, user, &u)) << user;
    for (int item = 0; item < kItems; ++item) {
      if (Shown(user, item)) continue;
      NodeView i;
      ASSERT_TRUE((*snap)->FindNode(true, item, &i)) << item;
      const double want = ReferenceEnsembleRate(u, i, m);
      const float got = ScoreUnseenPair(u, i, m);
      worst = std::max(worst, Relative(got, want));
      ASSERT_LE(Relative(got, want), 1e-6) << user << "," << item << ": " << got << " vs " << want;
      distinct.insert(got);
      const double mean = 0.5 * (double(u.record.mean_rate) + i.record.mean_rate);
      const float fallback = ScoreUnseenPair(u, i, *old);
      ASSERT_FLOAT_EQ(fallback, static_cast<float>(std::min(mean, 1.0))) << user << "," << item;
      unlike_fallback += std::abs(got - fallback) > 1e-3 * fallback;
      ++pairs;
    }
  }
  EXPECT_GT(pairs, 2000u);
  EXPECT_GT(distinct.size(), pairs / 4) << "per-pair rates, not a per-node default";
  EXPECT_GT(unlike_fallback, pairs / 2) << "the members' rate, not the nodes' mean rates";
  std::printf("%s: %zu unseen pairs, max relative difference to the reference %.3g\n", GetParam(),
              pairs, worst);
}

INSTANTIATE_TEST_SUITE_P(Methods, EnsembleServingTest, ::testing::ValuesIn(kEnsembles));

}  // namespace
}  // namespace graphsieve
