// The server's border for the request-path core (core/serving): RateSource
// maps to graphsieve.v1.RateSource one to one, and a real server over gRPC
// answers exactly what the core gives in-process on the same snapshot — the
// path the CLI's offline canary takes — rates, sources and keep decisions.
#include <memory>
#include <string>
#include <vector>

#include "core/serving/batch_scorer.h"
#include "core/serving/keep_rule.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "server/options.h"
#include "server/rate_service.h"
#include "server/server.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

TEST(RateSourceTest, MapsEachCoreSourceToItsProtoValue) {
  EXPECT_EQ(ToProtoRateSource(RateSource::kExact), v1::RATE_SOURCE_EXACT);
  EXPECT_EQ(ToProtoRateSource(RateSource::kInferred), v1::RATE_SOURCE_INFERRED);
  EXPECT_EQ(ToProtoRateSource(RateSource::kDefault), v1::RATE_SOURCE_DEFAULT);
}

// What the server logs once per loaded version when positive-rate cannot
// apply (the fallback's rates are tested in tests/model/node_default_test.cc).
TEST(RateSourceTest, PositiveRateFallbackNoteNamesTheSidesWithoutAFit) {
  const DefaultPolicy positive = *DefaultPolicy::Parse("positive-rate");
  UnseenModel fitted;
  fitted.default_user_rho = 0.5;
  fitted.default_item_rho = 0.25;
  EXPECT_EQ(DefaultPolicyFallbackNote(positive, fitted), "");
  UnseenModel old_format;  // no fit: a snapshot before format 3
  const std::string none = DefaultPolicyFallbackNote(positive, old_format);
  EXPECT_NE(none.find("for users and items"), std::string::npos) << none;
  UnseenModel items_only = fitted;
  items_only.default_user_rho = 0.0;
  const std::string note = DefaultPolicyFallbackNote(positive, items_only);
  EXPECT_NE(note.find("fit for users ("), std::string::npos) << note;
  EXPECT_NE(note.find("node-mean"), std::string::npos) << note;
  for (const char* other : {"node-mean", "alpha", "model", "0.25"}) {
    EXPECT_EQ(DefaultPolicyFallbackNote(*DefaultPolicy::Parse(other), old_format), "") << other;
  }
}

TEST(RateSourceTest, ServerAnswersWhatTheCoreGivesInProcess) {
  const std::string root = testing::NewTempDir("core-vs-server");
  const testing::SyntheticSnapshot snap = testing::SyntheticSnapshot::Make(3);
  auto version = testing::PublishSnapshot(root, snap);
  ASSERT_TRUE(version.ok()) << version.status();
  ServerOptions o = testing::LoopbackOptions(root);
  o.default_policy = *DefaultPolicy::Parse("alpha");
  auto server = GraphsieveServer::Create(o);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE((*server)->manager().PollOnce().ok());
  auto stub = testing::Connect((*server)->port());

  // Stored, unseen and unknown pairs, labelled, with instance keys.
  v1::GetSamplingRateRequest req;
  for (int k = 0; k < 300; ++k) {
    req.add_user_ids(k % 50 == 0 ? 77777 : 1 + k % 12);
    req.add_item_ids(k % 40 == 0 ? 66666 : 1001 + (k * 7) % 15);
    req.add_labels(k % 4 == 0);
    req.add_instance_keys(0x9e3779b97f4a7c15ull * static_cast<uint64_t>(k + 1));
  }
  v1::GetSamplingRateResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->GetSamplingRate(&ctx, req, &resp).ok());
  const size_t n = static_cast<size_t>(req.user_ids_size());
  ASSERT_EQ(static_cast<size_t>(resp.sources_size()), n);

  auto reader = VersionOpener().OpenStored(root, *version, SnapshotReaderOptions());
  ASSERT_TRUE(reader.ok()) << reader.status();
  const BatchScorer scorer(o.default_policy, /*chunk_pairs=*/64);
  std::vector<float> rates(n);
  std::vector<RateSource> sources(n);
  ASSERT_TRUE(scorer
                  .Score(**reader, absl::MakeConstSpan(req.user_ids().data(), n),
                         absl::MakeConstSpan(req.item_ids().data(), n), {}, absl::MakeSpan(rates),
                         absl::MakeSpan(sources), nullptr)
                  .ok());
  std::unique_ptr<bool[]> keep(new bool[n]);
  std::vector<float> offsets(n);
  DecideKeep(rates, absl::MakeConstSpan(req.labels().data(), n),
             absl::MakeConstSpan(req.instance_keys().data(), n), (*reader)->manifest().seed,
             absl::MakeSpan(keep.get(), n), absl::MakeSpan(offsets));
  int seen[4] = {0, 0, 0, 0};
  for (size_t k = 0; k < n; ++k) {
    const int i = static_cast<int>(k);
    ASSERT_EQ(resp.rates(i), rates[k]) << k;
    ASSERT_EQ(resp.sources(i), ToProtoRateSource(sources[k])) << k;
    ASSERT_EQ(resp.keep(i), keep[k]) << k;
    ASSERT_EQ(resp.log_odds_offsets(i), offsets[k]) << k;
    ++seen[resp.sources(i)];
  }
  EXPECT_GT(seen[v1::RATE_SOURCE_EXACT], 0);
  EXPECT_GT(seen[v1::RATE_SOURCE_INFERRED], 0);
  EXPECT_GT(seen[v1::RATE_SOURCE_DEFAULT], 0);
  (*server)->Shutdown();
}

}  // namespace
}  // namespace graphsieve
