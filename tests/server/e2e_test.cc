// End to end with the real binaries: graphsieve-gen writes a log,
// graphsieve-build publishes a snapshot and its --export CSV, and every
// pair's rate served by a real server equals the builder's export.
#include <cstdlib>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "tests/missing_dependency.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

#if defined(GRAPHSIEVE_GEN_BINARY) && defined(GRAPHSIEVE_BUILD_BINARY)
TEST(EndToEndTest, EveryServedRateEqualsTheBuildersExport) {
  const std::string dir = testing::NewTempDir("e2e");
  const std::string log = dir + "/log.csv", root = dir + "/snapshots", exported = dir + "/export";
  ASSERT_EQ(std::system(absl::StrCat(GRAPHSIEVE_GEN_BINARY, " --preset tiny --seed 11 --quiet",
                                     " --output ", log)
                            .c_str()),
            0);
  ASSERT_EQ(
      std::system(absl::StrCat(GRAPHSIEVE_BUILD_BINARY, " --input ", log, " --snapshot_root ", root,
                               " --export ", exported, " --threads 1 > ", dir, "/build.out 2>&1")
                      .c_str()),
      0)
      << "see " << dir << "/build.out";
  std::ifstream in(exported);
  if (!in) in.open(exported + ".csv");
  ASSERT_TRUE(in) << "no export at " << exported;
  std::string line;
  std::getline(in, line);  // header
  const std::vector<std::string> header = absl::StrSplit(line, ',');
  int rate_col = -1;
  for (size_t c = 0; c < header.size(); ++c) {
    if (header[c] == "rate") rate_col = static_cast<int>(c);
  }
  ASSERT_GE(rate_col, 2) << line;
  v1::GetSamplingRateRequest req;
  std::vector<float> expected;
  std::map<uint64_t, bool> users, items;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, ',');
    uint64_t u = 0, i = 0;
    float r = 0;
    ASSERT_TRUE(absl::SimpleAtoi(f[0], &u) && absl::SimpleAtoi(f[1], &i) &&
                absl::SimpleAtof(f[rate_col], &r))
        << line;
    req.add_user_ids(u);
    req.add_item_ids(i);
    expected.push_back(r);
    users[u] = true;
    items[i] = true;
  }
  ASSERT_GT(expected.size(), 100u);

  const ServerOptions o = testing::LoopbackOptions(root);
  auto server = GraphsieveServer::Create(o);
  ASSERT_TRUE(server.ok()) << server.status();
  ASSERT_TRUE((*server)->manager().PollOnce().ok());
  auto stub = testing::Connect((*server)->port());
  v1::GetSamplingRateResponse resp;
  grpc::ClientContext ctx;
  ASSERT_TRUE(stub->GetSamplingRate(&ctx, req, &resp).ok());
  ASSERT_EQ(resp.rates_size(), static_cast<int>(expected.size()));
  int mismatches = 0;
  for (size_t k = 0; k < expected.size(); ++k) {
    if (resp.sources(static_cast<int>(k)) != v1::RATE_SOURCE_EXACT ||
        resp.rates(static_cast<int>(k)) != expected[k]) {
      if (++mismatches < 5) {
        ADD_FAILURE() << "pair (" << req.user_ids(k) << ", " << req.item_ids(k) << "): served "
                      << resp.rates(static_cast<int>(k)) << " source "
                      << resp.sources(static_cast<int>(k)) << ", export " << expected[k];
      }
    }
  }
  EXPECT_EQ(mismatches, 0);

  // The RocksDB lookup path serves the very same rates.
  {
    ServerOptions ro = o;
    ro.lookup = LookupMode::kRocksDb;
    auto rocks = GraphsieveServer::Create(ro);
    ASSERT_TRUE(rocks.ok()) << rocks.status();
    ASSERT_TRUE((*rocks)->manager().PollOnce().ok());
    ASSERT_EQ(ServingIndex(*(*rocks)->manager().Current()->reader), nullptr);
    auto rocks_stub = testing::Connect((*rocks)->port());
    v1::GetSamplingRateResponse rocks_resp;
    grpc::ClientContext rocks_ctx;
    ASSERT_TRUE(rocks_stub->GetSamplingRate(&rocks_ctx, req, &rocks_resp).ok());
    ASSERT_EQ(rocks_resp.rates_size(), resp.rates_size());
    int differ = 0;
    for (int k = 0; k < resp.rates_size(); ++k) {
      differ += rocks_resp.rates(k) != resp.rates(k) || rocks_resp.sources(k) != resp.sources(k);
    }
    EXPECT_EQ(differ, 0);
  }

  // Unseen pairs of known nodes are INFERRED with a rate in [floor, 1].
  std::map<std::pair<uint64_t, uint64_t>, bool> seen;
  for (int k = 0; k < req.user_ids_size(); ++k) seen[{req.user_ids(k), req.item_ids(k)}] = true;
  v1::GetSamplingRateRequest unseen;
  for (const auto& [u, unused_u] : users) {
    for (const auto& [i, unused_i] : items) {
      if (!seen.count({u, i}) && unseen.user_ids_size() < 500) {
        unseen.add_user_ids(u);
        unseen.add_item_ids(i);
      }
    }
  }
  ASSERT_GT(unseen.user_ids_size(), 0);
  v1::GetSamplingRateResponse unseen_resp;
  grpc::ClientContext ctx2;
  ASSERT_TRUE(stub->GetSamplingRate(&ctx2, unseen, &unseen_resp).ok());
  const double floor = (*server)->manager().Current()->reader->manifest().floor;
  for (int k = 0; k < unseen_resp.rates_size(); ++k) {
    EXPECT_EQ(unseen_resp.sources(k), v1::RATE_SOURCE_INFERRED);
    EXPECT_GE(unseen_resp.rates(k), floor - 1e-6);
    EXPECT_LE(unseen_resp.rates(k), 1.0f);
  }
}
#else
TEST(EndToEndTest, NeedsGenAndBuildBinaries) {
  GRAPHSIEVE_SKIP_OR_FAIL("the graphsieve-gen / graphsieve-build targets (not configured)");
}
#endif

}  // namespace
}  // namespace graphsieve
