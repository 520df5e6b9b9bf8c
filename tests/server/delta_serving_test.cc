// A delta version served end to end over a real socket: the server serves a
// base, a delta is published, the refresher adopts base + delta as one version,
// and a pair that was DEFAULT becomes EXACT with the delta's rate; GetStatus
// and the metrics show the base, the delta and the freshness lag; a corrupt
// delta is refused and the version before it keeps serving.
#include <fstream>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/offline/build_job.h"
#include "core/offline/delta_build.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/version_opener.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "server/rate_profile.h"
#include "server/server.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;

void WriteLog(const std::string& path, uint64_t first_user, int users, int items) {
  std::ofstream out(path);
  out << "user_id,item_id,label\n";
  for (int u = 0; u < users; ++u) {
    for (int k = 0; k < 20; ++k) {
      out << first_user + u << "," << (u * 7 + k * 13) % items << "," << (k % 6 == 0) << "\n";
    }
  }
}

BuildOptions Options(const std::string& log, const std::string& root) {
  BuildOptions o;
  o.inputs = {log};
  o.snapshot_root = root;
  o.pipeline.sketch_dim = 16;
  o.pipeline.threads = 1;
  return o;
}

v1::GetSamplingRateResponse Rate(v1::SamplingRateService::Stub* stub, uint64_t user,
                                 uint64_t item) {
  v1::GetSamplingRateRequest req;
  req.add_user_ids(user);
  req.add_item_ids(item);
  v1::GetSamplingRateResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  EXPECT_TRUE(stub->GetSamplingRate(&ctx, req, &resp).ok());
  return resp;
}

v1::GetStatusResponse Status(v1::SamplingRateService::Stub* stub) {
  v1::GetStatusResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  EXPECT_TRUE(stub->GetStatus(&ctx, v1::GetStatusRequest(), &resp).ok());
  return resp;
}

TEST(DeltaServingTest, RefresherAdoptsBasePlusDeltaAndDefaultBecomesExact) {
  const std::string dir = testing::NewTempDir("delta_serving");
  const std::string root = dir + "/root", base_log = dir + "/base.csv",
                    delta_log = dir + "/delta.csv";
  WriteLog(base_log, 1, 200, 300);
  WriteLog(delta_log, 500000, 10, 300);  // new users on base items
  auto base = RunBuild(Options(base_log, root), BuildObserver());
  ASSERT_TRUE(base.ok()) << base.status();

  ServerOptions o = testing::LoopbackOptions(root);
  o.admin_port = 0;
  auto server = GraphsieveServer::Create(o);
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = testing::Connect((*server)->port());
  ASSERT_TRUE((*server)->manager().PollOnce().ok());
  const uint64_t user = 500000, item = 0;  // a pair of the delta's log
  v1::GetSamplingRateResponse before = Rate(stub.get(), user, item);
  ASSERT_EQ(before.sources_size(), 1);
  EXPECT_EQ(before.sources(0), v1::RATE_SOURCE_DEFAULT);

  DeltaBuildOptions d;
  d.build = Options(delta_log, root);
  auto delta = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(delta.ok()) << delta.status();
  const MemoryIndex* base_index = ServingIndex(*(*server)->manager().Current()->reader);
  ASSERT_NE(base_index, nullptr);
  ASSERT_TRUE(base_index->mapped());
  ASSERT_TRUE((*server)->manager().PollOnce().ok());
  // The base is now held for pinned requests, but base + delta serves from the
  // same mapped index: its pages stay resident.
  EXPECT_EQ(ServingIndex(*(*server)->manager().Current()->reader), base_index);
  EXPECT_EQ(base_index->resident_releases(), 0);

  auto layered = VersionOpener().Open(root, delta->version, SnapshotReaderOptions());
  ASSERT_TRUE(layered.ok()) << layered.status();
  const uint64_t us[1] = {user}, is[1] = {item};
  bool found[1];
  float want[1];
  ASSERT_TRUE((*layered)->LookupPairs(us, is, absl::MakeSpan(found), absl::MakeSpan(want)).ok());
  ASSERT_TRUE(found[0]);
  v1::GetSamplingRateResponse after = Rate(stub.get(), user, item);
  ASSERT_EQ(after.sources_size(), 1);
  EXPECT_EQ(after.sources(0), v1::RATE_SOURCE_EXACT);
  EXPECT_EQ(after.rates(0), want[0]);
  EXPECT_EQ(after.snapshot_version(), delta->version);
  // A pair of the new user the delta does not store: INFERRED from its record.
  EXPECT_EQ(Rate(stub.get(), user, 1).sources(0), v1::RATE_SOURCE_INFERRED);

  v1::GetStatusResponse st = Status(stub.get());
  EXPECT_EQ(st.active().version(), delta->version);
  EXPECT_EQ(st.active().base_version(), base->version);
  EXPECT_EQ(st.active().covers_through(), delta->covers_through);
  EXPECT_GE(st.freshness_lag_seconds(), 0.0);
  auto metrics = testing::HttpGet((*server)->admin_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(metrics->second, HasSubstr("graphsieve_snapshot_layers 2"));
  EXPECT_THAT(metrics->second, HasSubstr("graphsieve_freshness_lag_seconds"));

  // A corrupt newer delta is refused; base + the first delta keep serving.
  auto second = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(second.ok()) << second.status();
  {
    std::fstream io(root + "/" + second->version + "/index.gsi",
                    std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(200);
    io.put('\x5a');
  }
  EXPECT_FALSE((*server)->manager().PollOnce().ok());
  EXPECT_EQ(Status(stub.get()).active().version(), delta->version);
  EXPECT_EQ(Rate(stub.get(), user, item).rates(0), want[0]);

  // A good newer delta: base + the first delta is now the held version. The
  // held delta's own index drops its resident pages at the swap; the base's,
  // which the new version serves from too, keeps them.
  std::shared_ptr<const ServingSnapshot> first = (*server)->manager().Current();
  const auto* first_layers = dynamic_cast<const LayeredSnapshotReader*>(first->reader.get());
  ASSERT_NE(first_layers, nullptr);
  const MemoryIndex* first_delta_index = ServingIndex(first_layers->delta());
  ASSERT_NE(first_delta_index, nullptr);
  ASSERT_TRUE(first_delta_index->mapped());
  EXPECT_EQ(first_delta_index->resident_releases(), 0);
  auto third = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(third.ok()) << third.status();
  ASSERT_TRUE((*server)->manager().PollOnce().ok());
  EXPECT_EQ(Status(stub.get()).active().version(), third->version);
  EXPECT_GE(first_delta_index->resident_releases(), 1);
  EXPECT_EQ(base_index->resident_releases(), 0);
}

// The version profiler scans base + delta: its sample is sized by the pairs
// the layered reader serves, not by the delta's own manifest (which counts
// only the delta's pairs and made the profiler keep every base pair).
TEST(DeltaServingTest, ProfileOfBasePlusDeltaSamplesAsManyPairsAsAsked) {
  const std::string dir = testing::NewTempDir("delta_profile");
  const std::string root = dir + "/root", base_log = dir + "/base.csv",
                    delta_log = dir + "/delta.csv";
  WriteLog(base_log, 1, 200, 300);
  WriteLog(delta_log, 500000, 10, 300);
  auto base = RunBuild(Options(base_log, root), BuildObserver());
  ASSERT_TRUE(base.ok()) << base.status();
  DeltaBuildOptions d;
  d.build = Options(delta_log, root);
  auto delta = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(delta.ok()) << delta.status();
  auto layered = VersionOpener().Open(root, delta->version, SnapshotReaderOptions());
  ASSERT_TRUE(layered.ok()) << layered.status();
  const auto& l = static_cast<const LayeredSnapshotReader&>(**layered);
  const uint64_t base_pairs = l.base().manifest().pairs, delta_pairs = l.delta().manifest().pairs;
  ASSERT_GT(base_pairs, 8 * delta_pairs);
  EXPECT_EQ(ServedPairsBound(**layered), base_pairs + delta_pairs);
  EXPECT_EQ(ServedPairsBound(l.base()), base_pairs);

  RateProfileOptions small;
  small.max_sample_pairs = 64;
  absl::StatusOr<RateProfile> p = ProfileSnapshot(**layered, small);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_GE(p->pairs, base_pairs);  // every pair served: the base's and the delta's
  EXPECT_LE(p->pairs >> p->sample_bits, small.max_sample_pairs);
  EXPECT_LT(p->sample.size(), p->pairs / 8);
}

}  // namespace
}  // namespace graphsieve
