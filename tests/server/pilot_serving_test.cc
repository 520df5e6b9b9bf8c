// The built-in pilot served end to end over a real socket
// (docs/METHOD.md "The built-in pilot", docs/SNAPSHOT.md "Pilot factors"): a
// snapshot built with --method opt and no pilot column stores each node's
// pilot row; the server rates an INFERRED pair of known nodes from the two
// rows, computed here by hand from the stored factors; a delta folds in the
// rows of its new nodes, and the server rates their INFERRED pairs from them.
// The same for max / mean / product: each member's rate from the rows by its
// own stored fit, combined, then the combination's rule
// (tests/model/ensemble_reference.h).
#include <algorithm>
#include <cmath>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/offline/build_job.h"
#include "core/offline/delta_build.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "tests/model/ensemble_reference.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

// Two kinds of users and two groups of items: a user of kind k clicks half
// of the items of group k it is shown and none of the other group's. Each
// user is shown 12 of the 40 items; every (user, item) it is not shown is an
// unseen pair of known nodes.
constexpr int kItems = 40;
bool Shown(uint64_t user, int item) { return (item * 7 + user * 3) % kItems < 12; }
void WriteLog(const std::string& path, uint64_t first_user, int users) {
  std::ofstream out(path);
  out << "user_id,item_id,label\n";
  for (uint64_t u = first_user; u < first_user + users; ++u) {
    int shown = 0;
    for (int i = 0; i < kItems; ++i) {
      if (!Shown(u, i)) continue;
      const bool same_group = (u % 2) == static_cast<uint64_t>(i % 2);
      out << u << "," << i << "," << (same_group && (shown++ % 2 == 0)) << "\n";
    }
  }
}

BuildOptions Options(const std::string& log, const std::string& root,
                     Method method = Method::kOpt) {
  BuildOptions o;
  o.inputs = {log};
  o.snapshot_root = root;
  o.pipeline.method = method;  // no reader.pilot_column: the built-in pilot
  o.pipeline.sketch_dim = 8;
  o.pipeline.threads = 2;
  o.pilot.dim = 4;
  o.pilot.epochs = 30;
  return o;
}

std::pair<float, v1::RateSource> Rate(v1::SamplingRateService::Stub* stub, uint64_t user,
                                      uint64_t item) {
  v1::GetSamplingRateRequest req;
  req.add_user_ids(user);
  req.add_item_ids(item);
  v1::GetSamplingRateResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  EXPECT_TRUE(stub->GetSamplingRate(&ctx, req, &resp).ok());
  if (resp.rates_size() != 1 || resp.sources_size() != 1) return {-1.0f, v1::RateSource()};
  return {resp.rates(0), resp.sources(0)};
}

// The pilot's rate of (user, item) from the stored rows, by hand: the last
// 1 + dim floats of each row are [bias, embedding]; then the mixture rule.
double HandRate(const SnapshotReader& snap, uint64_t user, uint64_t item) {
  const UnseenModel& m = snap.model();
  NodeView u, i;
  EXPECT_TRUE(snap.FindNode(false, user, &u)) << user;
  EXPECT_TRUE(snap.FindNode(true, item, &i)) << item;
  const size_t tail = u.sketch.size() - (m.pilot_dim + 1);
  double logit = m.pilot_bias + u.sketch[tail] + i.sketch[tail];
  for (int k = 1; k <= m.pilot_dim; ++k) logit += double(u.sketch[tail + k]) * i.sketch[tail + k];
  const double s = 1.0 / (1.0 + std::exp(-logit));
  return std::min(1.0, m.rho * (s / m.score_mean + m.kappa));
}

TEST(PilotServingTest, InferredPairsOfKnownNodesGetThePilotsRateAndDeltasFoldInNewNodes) {
  const std::string dir = testing::NewTempDir("pilot_serving");
  const std::string root = dir + "/root", base_log = dir + "/base.csv",
                    delta_log = dir + "/delta.csv";
  WriteLog(base_log, 1, 120);
  auto base = RunBuild(Options(base_log, root), BuildObserver());
  ASSERT_TRUE(base.ok()) << base.status();
  ASSERT_TRUE(base->built_in_pilot);

  auto server = GraphsieveServer::Create(testing::LoopbackOptions(root));
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = testing::Connect((*server)->port());
  ASSERT_TRUE((*server)->manager().PollOnce().ok());
  auto snap = VersionOpener().Open(root, base->version, SnapshotReaderOptions());
  ASSERT_TRUE(snap.ok()) << snap.status();
  ASSERT_EQ((*snap)->model().pilot_dim, 4);
  ASSERT_GT((*snap)->model().score_mean, 0.0);

  // Every unseen pair of user 1 (kind 1: odd items) and user 2 (even items).
  for (uint64_t user : {1, 2}) {
    double same = 0, other = 0;
    int n_same = 0, n_other = 0;
    std::set<float> distinct;
    for (int item = 0; item < kItems; ++item) {
      if (Shown(user, item)) continue;
      const auto [rate, source] = Rate(stub.get(), user, item);
      ASSERT_EQ(source, v1::RATE_SOURCE_INFERRED) << user << "," << item;
      const double want = HandRate(**snap, user, item);
      EXPECT_NEAR(rate, want, 1e-6 * want) << user << "," << item;
      distinct.insert(rate);
      ((user % 2) == static_cast<uint64_t>(item % 2) ? same : other) += rate;
      ++((user % 2) == static_cast<uint64_t>(item % 2) ? n_same : n_other);
    }
    EXPECT_GT(distinct.size(), 10u) << "per-pair rates, not a per-node default";
    // The pilot learned the groups: a user's unseen items of its own group
    // are likelier clicks, so rated higher.
    EXPECT_GT(same / n_same, 1.5 * (other / n_other)) << "user " << user;
  }

  // A delta with new users of both kinds on the base's items.
  WriteLog(delta_log, 1001, 4);
  DeltaBuildOptions d;
  d.build = Options(delta_log, root);
  auto delta = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(delta.ok()) << delta.status();
  ASSERT_TRUE((*server)->manager().PollOnce().ok());
  auto layered = VersionOpener().Open(root, delta->version, SnapshotReaderOptions());
  ASSERT_TRUE(layered.ok()) << layered.status();
  for (uint64_t user : {1001, 1002}) {
    NodeView v;
    ASSERT_TRUE((*layered)->FindNode(false, user, &v));
    const size_t tail = v.sketch.size() - 5;
    double norm = 0;
    for (size_t k = tail + 1; k < v.sketch.size(); ++k) norm += double(v.sketch[k]) * v.sketch[k];
    EXPECT_GT(std::sqrt(norm), 0.1) << "user " << user << ": the folded-in embedding";
    double same = 0, other = 0;
    for (int item = 0; item < kItems; ++item) {
      if (Shown(user, item)) continue;
      const auto [rate, source] = Rate(stub.get(), user, item);
      ASSERT_EQ(source, v1::RATE_SOURCE_INFERRED) << user << "," << item;
      const double want = HandRate(**layered, user, item);
      EXPECT_NEAR(rate, want, 1e-6 * want) << user << "," << item;
      ((user % 2) == static_cast<uint64_t>(item % 2) ? same : other) += rate;
    }
    EXPECT_GT(same, 1.5 * other) << "user " << user << ": the fold-in learned its group";
  }
}

class EnsembleServingTest : public ::testing::TestWithParam<const char*> {};

// max / mean / product with the built-in pilot: the server rates INFERRED
// pairs of known nodes by the members' stored fits, in the base and in a
// delta (which folds in its new users' pilot rows and keeps the base's fits).
TEST_P(EnsembleServingTest, InferredPairsOfKnownNodesGetTheMembersCombined) {
  const std::string dir = testing::NewTempDir("ensemble_serving");
  const std::string root = dir + "/root", base_log = dir + "/base.csv",
                    delta_log = dir + "/delta.csv";
  const Method method = *ParseMethod(GetParam());
  WriteLog(base_log, 1, 120);
  auto base = RunBuild(Options(base_log, root, method), BuildObserver());
  ASSERT_TRUE(base.ok()) << base.status();
  ASSERT_TRUE(base->built_in_pilot);
  auto server = GraphsieveServer::Create(testing::LoopbackOptions(root));
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = testing::Connect((*server)->port());
  ASSERT_TRUE((*server)->manager().PollOnce().ok());
  auto snap = VersionOpener().Open(root, base->version, SnapshotReaderOptions());
  ASSERT_TRUE(snap.ok()) << snap.status();
  ASSERT_TRUE((*snap)->model().has_members);

  WriteLog(delta_log, 1001, 4);
  DeltaBuildOptions d;
  d.build = Options(delta_log, root, method);
  const auto check = [&](const SnapshotReader& s, std::initializer_list<uint64_t> users) {
    for (uint64_t user : users) {
      std::set<float> distinct;
      NodeView u;
      ASSERT_TRUE(s.FindNode(false, user, &u)) << user;
      for (int item = 0; item < kItems; ++item) {
        if (Shown(user, item)) continue;
        const auto [rate, source] = Rate(stub.get(), user, item);
        ASSERT_EQ(source, v1::RATE_SOURCE_INFERRED) << user << "," << item;
        NodeView i;
        ASSERT_TRUE(s.FindNode(true, item, &i)) << item;
        const double want = testing::ReferenceEnsembleRate(u, i, s.model());
        EXPECT_NEAR(rate, want, 1e-6 * want) << user << "," << item;
        distinct.insert(rate);
      }
      EXPECT_GT(distinct.size(), 10u) << "per-pair rates, not a per-node default";
    }
  };
  check(**snap, {1, 2});
  auto delta = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(delta.ok()) << delta.status();
  ASSERT_TRUE((*server)->manager().PollOnce().ok());
  auto layered = VersionOpener().Open(root, delta->version, SnapshotReaderOptions());
  ASSERT_TRUE(layered.ok()) << layered.status();
  ASSERT_TRUE((*layered)->model().has_members);
  check(**layered, {1, 1001, 1002});
}

INSTANTIATE_TEST_SUITE_P(Methods, EnsembleServingTest, ::testing::Values("max", "mean", "product"));

}  // namespace
}  // namespace graphsieve
