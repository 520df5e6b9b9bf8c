// The positive-rate DEFAULT policy (core/model/node_default.h, its fit
// node_default_fit.h): per-node
// counts from a hand-made pair table, the fit against hand-computed rates
// and the budget, the policy through DefaultPolicy, and end to end through
// real snapshots — counts written and read back in both lookup modes, and a
// version in the layout before format 3 (index format 1, no fit) still
// served, with node-mean answers.
#include "core/model/node_default.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <vector>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "core/maec/pipeline_options.h"
#include "core/maec/rates.h"
#include "core/model/node_default_fit.h"
#include "core/serving/batch_scorer.h"
#include "core/serving/default_policy.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/format.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/snapshot/synthetic.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::graphsieve::testing::ScopedTempDir;
using testing_util::MakeSynthetic;
using testing_util::Synthetic;

// Users u0, u1; items i0, i1, i2. (user, item, instances, negatives):
//   (u0,i0,3,2) (u0,i1,2,2) (u1,i0,1,0) (u1,i2,4,4)
PairTable HandTable() {
  PairTable t;
  t.user_ids = {10, 11};
  t.item_ids = {20, 21, 22};
  t.pair_user = {0, 0, 1, 1};
  t.pair_item = {0, 1, 0, 2};
  t.instances = {3, 2, 1, 4};
  t.negatives = {2, 2, 0, 4};
  t.label = {1, 0, 1, 0};
  t.total_instances = 10;
  t.total_negatives = 8;
  return t;
}

NodeTable EmptyNodes(const PairTable& t) {
  NodeTable n;
  n.ids = t.user_ids;
  n.ids.insert(n.ids.end(), t.item_ids.begin(), t.item_ids.end());
  n.is_item = {0, 0, 1, 1, 1};
  n.records.resize(5);
  return n;
}

UnseenModel MixtureModel(double alpha, double kappa) {
  UnseenModel m;
  m.method = static_cast<int>(Method::kMaec);
  m.rate_rule = static_cast<int>(RateRule::kMixture);
  m.alpha = alpha;
  m.kappa = kappa;
  m.score_mean = 1.0;
  return m;
}

TEST(NodeDefaultTest, CountsFromThePairTable) {
  const PairTable t = HandTable();
  NodeTable n = EmptyNodes(t);
  ASSERT_TRUE(CountNodeImpressions(t, &n).ok());
  const uint32_t pos[5] = {1, 1, 2, 0, 0}, imp[5] = {5, 5, 4, 2, 4};
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(n.records[k].positives, pos[k]) << k;
    EXPECT_EQ(n.records[k].impressions, imp[k]) << k;
  }
  n.records.pop_back();
  absl::Status s = CountNodeImpressions(t, &n);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(s.message(), "4 node records for 5 nodes")) << s;
}

// Items, m = 2: p̄ = 2/10; q = (pos + 0.4)/(imp + 2) = 0.4, 0.1, 0.4/6 with
// 2, 2, 4 negative instances; h̄ = Σ w q / Σ w; rate = ρ(q/h̄ + κ), ρ = α/(1 + κ)
// while no rate reaches 1.
TEST(NodeDefaultTest, FitMatchesHandComputedRatesAndTheBudget) {
  const PairTable t = HandTable();
  NodeTable n = EmptyNodes(t);
  ASSERT_TRUE(CountNodeImpressions(t, &n).ok());
  NodeDefaultOptions o;
  o.smoothing_impressions = 2.0;
  UnseenModel m = MixtureModel(0.2, 0.1);
  ASSERT_TRUE(FitNodeDefault(n, o, &m).ok());
  EXPECT_DOUBLE_EQ(m.default_prior, 0.2);
  EXPECT_DOUBLE_EQ(m.default_smoothing, 2.0);
  const double q[3] = {0.4, 0.1, 0.4 / 6}, w[3] = {2, 2, 4};
  const double hbar = (w[0] * q[0] + w[1] * q[1] + w[2] * q[2]) / 8;
  EXPECT_NEAR(m.default_item_mean, hbar, 1e-12);
  EXPECT_NEAR(m.default_item_rho, 0.2 / 1.1, 1e-12);
  double mean = 0;
  for (int k = 0; k < 3; ++k) {
    ASSERT_TRUE(HasNodeDefault(m, /*is_item=*/true));
    EXPECT_NEAR(SmoothedPositiveRate(n.records[2 + k], m), q[k], 1e-12);
    const double rate = NodeDefaultRate(n.records[2 + k], /*is_item=*/true, m);
    EXPECT_NEAR(rate, 0.2 / 1.1 * (q[k] / hbar + 0.1), 1e-12) << k;
    mean += w[k] * rate / 8;
  }
  EXPECT_NEAR(mean, 0.2, 1e-12);
  // Users: both q = (1 + 0.4)/7 = 0.2 = h̄: every user rate is α.
  EXPECT_NEAR(NodeDefaultRate(n.records[0], /*is_item=*/false, m), 0.2, 1e-12);

  // α = 0.5: i0 would get 0.5/1.1·2.63 > 1 and is capped; the other two
  // carry the rest: 2·1 + ρ(2·a1 + 4·a2) = 8·0.5.
  m = MixtureModel(0.5, 0.1);
  ASSERT_TRUE(FitNodeDefault(n, o, &m).ok());
  const double a1 = q[1] / hbar + 0.1, a2 = q[2] / hbar + 0.1;
  const double rho = 2.0 / (2 * a1 + 4 * a2);
  EXPECT_NEAR(m.default_item_rho, rho, 1e-12);
  EXPECT_DOUBLE_EQ(NodeDefaultRate(n.records[2], true, m), 1.0);
  mean = (2 * 1.0 + 2 * NodeDefaultRate(n.records[3], true, m) +
          4 * NodeDefaultRate(n.records[4], true, m)) /
         8;
  EXPECT_NEAR(mean, 0.5, 1e-12);

  // The floor rule: min(max(ρq, ϱ), 1), ρ fitted the same way.
  m = MixtureModel(0.2, 0.1);
  m.rate_rule = static_cast<int>(RateRule::kFloor);
  m.floor = 0.05;
  ASSERT_TRUE(FitNodeDefault(n, o, &m).ok());
  mean = 0;
  for (int k = 0; k < 3; ++k) {
    const double rate = NodeDefaultRate(n.records[2 + k], true, m);
    EXPECT_NEAR(rate, std::min(std::max(m.default_item_rho * q[k], 0.05), 1.0), 1e-12);
    mean += w[k] * rate / 8;
  }
  EXPECT_NEAR(mean, 0.2, 1e-9);
}

TEST(NodeDefaultTest, NoFitForUniformOrWithoutPositives) {
  const PairTable t = HandTable();
  NodeTable n = EmptyNodes(t);
  ASSERT_TRUE(CountNodeImpressions(t, &n).ok());
  UnseenModel m = MixtureModel(0.2, 0.1);
  m.method = static_cast<int>(Method::kUniform);
  ASSERT_TRUE(FitNodeDefault(n, {}, &m).ok());
  EXPECT_FALSE(HasNodeDefault(m, true));
  EXPECT_FALSE(HasNodeDefault(m, false));
  m = MixtureModel(0.2, 0.1);
  for (NodeRecord& r : n.records) r.positives = 0;
  ASSERT_TRUE(FitNodeDefault(n, {}, &m).ok());
  EXPECT_FALSE(HasNodeDefault(m, true));
  EXPECT_EQ(m.default_prior, 0.0);
  NodeDefaultOptions bad;
  bad.smoothing_impressions = 0;
  EXPECT_EQ(FitNodeDefault(n, bad, &m).code(), absl::StatusCode::kInvalidArgument);
}

TEST(NodeDefaultTest, PolicyUsesTheKnownSideAndFallsBackToNodeMean) {
  auto policy = DefaultPolicy::Parse("positive-rate");
  ASSERT_TRUE(policy.ok());
  EXPECT_EQ(policy->kind, DefaultPolicy::Kind::kPositiveRate);
  EXPECT_EQ(policy->ToString(), "positive-rate");
  const PairTable t = HandTable();
  NodeTable n = EmptyNodes(t);
  ASSERT_TRUE(CountNodeImpressions(t, &n).ok());
  for (int k = 0; k < 5; ++k) n.records[k].mean_rate = 0.1f * (k + 1);
  UnseenModel m = MixtureModel(0.2, 0.1);
  ASSERT_TRUE(FitNodeDefault(n, {}, &m).ok());
  NodeView item{n.records[3], {}}, user{n.records[1], {}};
  EXPECT_DOUBLE_EQ(policy->Rate(m, nullptr, &item), NodeDefaultRate(n.records[3], true, m));
  EXPECT_DOUBLE_EQ(policy->Rate(m, &user, nullptr), NodeDefaultRate(n.records[1], false, m));
  EXPECT_DOUBLE_EQ(policy->Rate(m, nullptr, nullptr), 0.2);
  // A snapshot without the fit (before format 3): node-mean's answers.
  UnseenModel old = MixtureModel(0.2, 0.1);
  EXPECT_DOUBLE_EQ(policy->Rate(old, nullptr, &item), 0.4f);
  EXPECT_DOUBLE_EQ(policy->Rate(old, &user, nullptr), 0.2f);
}

TEST(NodeDefaultTest, NodeValueAndModelFormats) {
  NodeRecord r;
  r.component = 3;
  r.degree = 7;
  r.sum_uncertainty = 0.5f;
  r.sum_score = 0.25f;
  r.mean_rate = 0.125f;
  r.positives = 4000000000u;
  r.impressions = 4000000001u;
  const float sketch[2] = {1.5f, -2.0f};
  const std::string v = snapshot::EncodeNodeValue(r, sketch);
  ASSERT_EQ(v.size(), 28u + 8u);
  NodeRecord back;
  float sk[2];
  ASSERT_TRUE(snapshot::DecodeNodeValue(v, &back, absl::MakeSpan(sk)).ok());
  EXPECT_EQ(back.positives, r.positives);
  EXPECT_EQ(back.impressions, r.impressions);
  EXPECT_EQ(back.mean_rate, r.mean_rate);
  EXPECT_EQ(sk[1], -2.0f);
  // The 20-byte record of formats 1 and 2: the same fields, counts 0.
  const std::string old = v.substr(0, 20) + v.substr(28);
  back.positives = back.impressions = 9;
  ASSERT_TRUE(snapshot::DecodeNodeValue(old, &back, absl::MakeSpan(sk)).ok());
  EXPECT_EQ(back.positives, 0u);
  EXPECT_EQ(back.impressions, 0u);
  EXPECT_EQ(back.degree, 7u);
  EXPECT_EQ(back.mean_rate, 0.125f);
  EXPECT_EQ(sk[0], 1.5f);
  absl::Status s = snapshot::DecodeNodeValue(v.substr(0, 30), &back, absl::MakeSpan(sk));
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(s.message(), "expected 36 (or 28 before format 3)")) << s;

  UnseenModel m = MixtureModel(0.2, 0.1);
  m.default_prior = 0.05;
  m.default_smoothing = 20;
  m.default_item_rho = 0.3;
  m.default_item_mean = 0.06;
  m.default_user_rho = 0.25;
  m.default_user_mean = 0.07;
  auto d = snapshot::DecodeUnseenModel(snapshot::EncodeUnseenModel(m));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->default_prior, 0.05);
  EXPECT_EQ(d->default_smoothing, 20);
  EXPECT_EQ(d->default_item_rho, 0.3);
  EXPECT_EQ(d->default_item_mean, 0.06);
  EXPECT_EQ(d->default_user_rho, 0.25);
  EXPECT_EQ(d->default_user_mean, 0.07);
  // Without the fields (older snapshots): not fitted.
  auto plain = snapshot::DecodeUnseenModel(snapshot::EncodeUnseenModel(MixtureModel(0.2, 0.1)));
  ASSERT_TRUE(plain.ok());
  EXPECT_FALSE(HasNodeDefault(*plain, true));
  EXPECT_FALSE(absl::StrContains(snapshot::EncodeUnseenModel(MixtureModel(0.2, 0.1)), "default"));
}

// A real snapshot of a synthetic log with the counts and the fit attached as
// the builder does (AttachNodeDefault).
class NodeDefaultSnapshotTest : public ::testing::Test {
 protected:
  void SetUp() override {
    s_ = MakeSynthetic(/*users=*/30, /*items=*/50, /*pairs_per_user=*/8, /*seed=*/5);
    UnseenModel& m = s_.result.model;
    m.rate_rule = static_cast<int>(RateRule::kMixture);
    m.kappa = 0.1;
    m.score_mean = 0.5;
    ASSERT_TRUE(AttachNodeDefault(s_.pairs, {}, &s_.result).ok());
    ASSERT_TRUE(HasNodeDefault(m, true));
    absl::StatusOr<std::string> version =
        testing_util::PublishSynthetic(dir_.path(), s_, {}, /*content_hash=*/5);
    ASSERT_TRUE(version.ok()) << version.status();
    vdir_ = dir_.path() + "/" + s_.info.version;
  }

  std::shared_ptr<const SnapshotReader> Open(LookupMode mode) const {
    SnapshotReaderOptions options;
    options.lookup = mode;
    auto reader = VersionOpener().OpenStored(dir_.path(), s_.info.version, options);
    EXPECT_TRUE(reader.ok()) << reader.status();
    return reader.ok() ? *reader : nullptr;
  }

  // Rates of (unknown user, item) for every item and (user, unknown item)
  // for every user: all DEFAULT answers.
  std::vector<float> DefaultRates(const SnapshotReader& reader, const DefaultPolicy& policy) const {
    std::vector<uint64_t> users, items;
    const uint64_t unknown = 12345;  // MakeSynthetic's ids are large random values
    for (uint64_t i : s_.pairs.item_ids) {
      users.push_back(unknown);
      items.push_back(i);
    }
    for (uint64_t u : s_.pairs.user_ids) {
      users.push_back(u);
      items.push_back(unknown);
    }
    std::vector<float> rates(users.size());
    std::vector<RateSource> sources(users.size());
    SourceCounts counts;
    EXPECT_TRUE(BatchScorer(policy, 16)
                    .Score(reader, users, items, {}, absl::MakeSpan(rates), absl::MakeSpan(sources),
                           &counts)
                    .ok());
    EXPECT_EQ(counts.by_default, users.size());
    return rates;
  }

  ScopedTempDir dir_;
  Synthetic s_;
  std::string vdir_;
};

TEST_F(NodeDefaultSnapshotTest, CountsAndFitReadBackAndServeInBothLookupModes) {
  const NodeTable& n = s_.result.nodes;
  const size_t users = s_.pairs.num_users();
  for (LookupMode mode : {LookupMode::kMemory, LookupMode::kRocksDb}) {
    auto reader = Open(mode);
    ASSERT_NE(reader, nullptr);
    EXPECT_EQ(reader->model().default_item_rho, s_.result.model.default_item_rho);
    EXPECT_EQ(reader->model().default_user_mean, s_.result.model.default_user_mean);
    for (size_t k = 0; k < n.ids.size(); ++k) {
      NodeView view;
      ASSERT_TRUE(reader->FindNode(n.is_item[k] != 0, n.ids[k], &view)) << k;
      ASSERT_EQ(view.record.positives, n.records[k].positives) << k;
      ASSERT_EQ(view.record.impressions, n.records[k].impressions) << k;
      ASSERT_GT(view.record.impressions, 0u) << k;
    }
    const std::vector<float> rates = DefaultRates(*reader, *DefaultPolicy::Parse("positive-rate"));
    double mean = 0, weight = 0;
    for (size_t k = 0; k < rates.size(); ++k) {
      const size_t node = k < s_.pairs.num_items() ? users + k : k - s_.pairs.num_items();
      const bool is_item = k < s_.pairs.num_items();
      ASSERT_EQ(rates[k],
                static_cast<float>(NodeDefaultRate(n.records[node], is_item, s_.result.model)))
          << k;
      if (is_item) {
        const double neg = n.records[node].impressions - n.records[node].positives;
        mean += neg * rates[k];
        weight += neg;
      }
    }
    // The item side's budget over the log's negatives (float rates).
    EXPECT_NEAR(mean / weight, s_.result.model.alpha, 1e-6);
  }
}

// The layout before format 3: index file format 1 (20-byte records) and a
// model without the fit, as an older builder wrote them. Still served; the
// positive-rate policy gives node-mean's answers.
TEST_F(NodeDefaultSnapshotTest, OlderFormatIsServedWithNodeMeanAnswers) {
  const NodeTable& n = s_.result.nodes;
  auto index = MemoryIndex::Build(
      n.sketch_dim, s_.pairs.num_pairs(),
      [&](const MemoryIndex::NodeSink& fn) {
        for (size_t k = 0; k < n.ids.size(); ++k) {
          fn(n.is_item[k] != 0, n.ids[k], n.records[k], n.SketchRow(k));
        }
        return absl::OkStatus();
      },
      [&](const MemoryIndex::PairSink& fn) {
        for (size_t p = 0; p < s_.pairs.num_pairs(); ++p) {
          fn(s_.pairs.user_ids[s_.pairs.pair_user[p]], s_.pairs.item_ids[s_.pairs.pair_item[p]],
             s_.result.rate[p]);
        }
        return absl::OkStatus();
      });
  ASSERT_TRUE(index.ok()) << index.status();
  UnseenModel old_model = s_.result.model;
  old_model.default_prior = old_model.default_smoothing = 0;
  old_model.default_item_rho = old_model.default_item_mean = 0;
  old_model.default_user_rho = old_model.default_user_mean = 0;
  IndexFileInfo info;
  info.format_version = 1;
  info.unseen_model = snapshot::EncodeUnseenModel(old_model);
  const std::string path = vdir_ + "/" + snapshot::kIndexFile;
  std::filesystem::remove(path);
  ASSERT_TRUE((*index)->WriteFile(path, info).ok());
  const uint64_t old_bytes = std::filesystem::file_size(path);
  auto digest = snapshot::DigestFile(path);
  ASSERT_TRUE(digest.ok());
  const std::string manifest_path = vdir_ + "/MANIFEST.json";
  auto text = snapshot::ReadFileToString(manifest_path);
  ASSERT_TRUE(text.ok());
  nlohmann::json m = nlohmann::json::parse(*text);
  m["format_version"] = 2;
  m["storage"]["serving_index"]["format_version"] = 1;
  m["storage"]["serving_index"]["size_bytes"] = old_bytes;
  bool patched = false;
  for (auto& f : m["files"]) {
    if (f["path"].get<std::string>() == snapshot::kIndexFile) {
      f["xxh3"] = snapshot::Hex64(digest->xxh3);
      f["size_bytes"] = old_bytes;
      patched = true;
    }
  }
  ASSERT_TRUE(patched) << m["files"].dump();
  ASSERT_TRUE(snapshot::WriteFileAtomic(manifest_path, m.dump(2)).ok());

  auto reader = Open(LookupMode::kMemory);
  ASSERT_NE(reader, nullptr);
  EXPECT_FALSE(HasNodeDefault(reader->model(), true));
  for (size_t k = 0; k < n.ids.size(); ++k) {
    NodeView view;
    ASSERT_TRUE(reader->FindNode(n.is_item[k] != 0, n.ids[k], &view)) << k;
    ASSERT_EQ(view.record.impressions, 0u) << k;
    ASSERT_EQ(view.record.positives, 0u) << k;
    ASSERT_EQ(view.record.degree, n.records[k].degree) << k;
    ASSERT_EQ(view.record.mean_rate, n.records[k].mean_rate) << k;
    ASSERT_EQ(view.record.sum_score, n.records[k].sum_score) << k;
  }
  EXPECT_EQ(DefaultRates(*reader, *DefaultPolicy::Parse("positive-rate")),
            DefaultRates(*reader, DefaultPolicy()));
  // ... which are not the fitted answers (those need the counts and the fit).
  const std::vector<float> node_mean = DefaultRates(*reader, DefaultPolicy());
  EXPECT_NE(node_mean[0], static_cast<float>(NodeDefaultRate(n.records[s_.pairs.num_users()], true,
                                                             s_.result.model)));
}

}  // namespace
}  // namespace graphsieve
