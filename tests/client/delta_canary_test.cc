// `graphsieve canary` comparing a base with a delta version over it
// (docs/CLIENTS.md "canary", docs/FRESHNESS.md): a churned graphsieve-gen log
// cut by time, its earlier part built by the real graphsieve-build, its later
// part published over it as a delta (--delta_of=CURRENT). Offline, the
// candidate is opened as a server opens it (the delta layered over its base);
// the figures are checked against what each layer stores, read independently
// of the CLI, and against two real graphsieve-server processes (one pinned to
// the base, one serving the delta).
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/io/log_reader.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/client/cluster.h"
#include "tests/temp_dir.h"
#include "tests/world_main.h"

namespace graphsieve {
namespace {

using Pair = std::pair<uint64_t, uint64_t>;
using testing::RunProgram;
using testing::RunResult;
using testing::ServerProcess;

constexpr int64_t kSplitSeconds = 7 * 86400;  // the base: the log's first 7 of 10 days

struct World {
  std::string dir, base_log, new_log, root, base_version, delta_version;
  ImpressionLog new_impressions;
  std::set<uint64_t> base_users, base_items;  // the nodes of the base's log
  std::set<Pair> base_pairs, delta_pairs;     // what each layer stores, read alone
  ServerProcess base_server, delta_server;
};
World* world = nullptr;
// Set up once for the binary; every test fails with this error if it is not
// OK (a failure inside a gtest Environment would skip the tests instead).
absl::Status world_status = absl::UnknownError("the environment did not run");

// Cuts the generator's log (user_id,item_id,label,timestamp) at kSplitSeconds.
absl::Status SplitByTime(const std::string& log, const std::string& earlier,
                         const std::string& later) {
  std::ifstream in(log);
  std::ofstream a(earlier), b(later);
  std::string line;
  if (!std::getline(in, line) || line != "user_id,item_id,label,timestamp") {
    return absl::InternalError(absl::StrCat(log, ": unexpected header '", line, "'"));
  }
  a << line << "\n";
  b << line << "\n";
  while (std::getline(in, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, ',');
    int64_t t = 0;
    if (f.size() != 4 || !absl::SimpleAtoi(f[3], &t)) {
      return absl::InternalError(absl::StrCat(log, ": bad row '", line, "'"));
    }
    (t < kSplitSeconds ? a : b) << line << "\n";
  }
  return absl::OkStatus();
}

// The pairs one layer stores, read alone (a delta without its base).
absl::StatusOr<std::set<Pair>> StoredPairs(const std::string& root, const std::string& version) {
  auto reader = VersionOpener().OpenStored(root, version, {});
  if (!reader.ok()) return reader.status();
  std::set<Pair> pairs;
  const absl::Status s = (*reader)->ForEachPair([&](uint64_t u, uint64_t i, float) {
    pairs.insert({u, i});
  });
  if (!s.ok()) return s;
  if (pairs.empty()) return absl::InternalError(absl::StrCat(version, " stores no pairs"));
  return pairs;
}

absl::Status MakeWorld(World& w) {
  w.dir = testing::NewTempDir("delta-canary-it");
  const std::string log = w.dir + "/churned.csv";
  const RunResult gen =
      RunProgram({testing::GenBinary(), "--preset=tiny", "--users=300", "--items=400",
                  "--instances=20000", "--positive_rate=0.1", "--seed=11", "--churn_days=10",
                  "--new_users_per_day=10", "--new_items_per_day=15", "--output=" + log, "--quiet"},
                 120);
  if (gen.exit_code != 0) return absl::InternalError("graphsieve-gen failed: " + gen.err);
  w.base_log = w.dir + "/base.csv";
  w.new_log = w.dir + "/new.csv";
  if (absl::Status s = SplitByTime(log, w.base_log, w.new_log); !s.ok()) return s;
  w.root = w.dir + "/root";
  if (absl::Status s = testing::BuildSnapshot(w.base_log, w.root, 0.2); !s.ok()) return s;
  w.base_version = testing::CurrentVersion(w.root);
  const RunResult delta =
      RunProgram({testing::BuildBinary(), "--delta_of=CURRENT", "--input=" + w.new_log,
                  "--snapshot_root=" + w.root, "--alpha=0.2", "--threads=2", "--quiet"},
                 300);
  if (delta.exit_code != 0) return absl::InternalError("the delta build failed: " + delta.err);
  w.delta_version = testing::CurrentVersion(w.root);
  if (w.delta_version == w.base_version) return absl::InternalError("no delta published");

  ImpressionLog base;
  if (absl::Status s = ReadImpressionLog(w.base_log, LogReaderOptions(), &base); !s.ok()) return s;
  w.base_users.insert(base.user_ids.begin(), base.user_ids.end());
  w.base_items.insert(base.item_ids.begin(), base.item_ids.end());
  if (absl::Status s = ReadImpressionLog(w.new_log, LogReaderOptions(), &w.new_impressions);
      !s.ok())
    return s;
  absl::StatusOr<std::set<Pair>> pairs = StoredPairs(w.root, w.base_version);
  if (!pairs.ok()) return pairs.status();
  w.base_pairs = *std::move(pairs);
  pairs = StoredPairs(w.root, w.delta_version);
  if (!pairs.ok()) return pairs.status();
  w.delta_pairs = *std::move(pairs);

  // One server pinned to the base, one serving CURRENT (the delta); neither
  // polls again, so each keeps its version.
  absl::Status s = w.base_server.Start(
      w.root, 0, {"--pin_version=" + w.base_version, "--poll_interval_seconds=-1"});
  if (!s.ok())
    return absl::Status(s.code(), absl::StrCat(s.message(), w.base_server.stderr_text()));
  s = w.delta_server.Start(w.root, 0, {"--poll_interval_seconds=0"});
  if (!s.ok())
    return absl::Status(s.code(), absl::StrCat(s.message(), w.delta_server.stderr_text()));
  return absl::OkStatus();
}

class DeltaWorld : public ::testing::Environment {
 public:
  void SetUp() override {
    world = new World();
    world_status = MakeWorld(*world);
  }
  void TearDown() override {
    delete world;
    world = nullptr;
  }
};

nlohmann::json Canary(std::vector<std::string> args) {
  args.insert(args.begin(), {testing::CliBinary(), "canary"});
  args.push_back("--json");
  // Generous limits: a delta moves rates by design; the figures are the subject.
  for (const char* limit :
       {"--max-mean-delta=-1", "--max-p99-delta=-1", "--max-ks=-1", "--max-fraction-over=-1"}) {
    args.push_back(limit);
  }
  const RunResult r = RunProgram(args, 120);
  EXPECT_EQ(r.exit_code, 0) << r.err << r.out;
  if (r.exit_code != 0) return nlohmann::json();
  return nlohmann::json::parse(r.out);
}

nlohmann::json Offline(const std::vector<std::string>& pairs_flags) {
  std::vector<std::string> args = {"--baseline-snapshot", world->root + "/" + world->base_version,
                                   "--candidate-snapshot", world->root};  // CURRENT: the delta
  args.insert(args.end(), pairs_flags.begin(), pairs_flags.end());
  return Canary(args);
}

nlohmann::json Online(const std::vector<std::string>& pairs_flags) {
  std::vector<std::string> args = {"--baseline", world->base_server.target(), "--candidate",
                                   world->delta_server.target()};
  args.insert(args.end(), pairs_flags.begin(), pairs_flags.end());
  return Canary(args);
}

uint64_t Count(const nlohmann::json& j, const char* side, const char* source) {
  return j[side]["source_mix"][source].get<uint64_t>();
}

// Every figure of the report but the names (a server's address vs a directory).
void ExpectSameFigures(const nlohmann::json& offline, const nlohmann::json& online) {
  ASSERT_FALSE(offline.is_null());
  ASSERT_FALSE(online.is_null());
  for (const char* key :
       {"pairs", "kept_fraction_over", "kept_fraction_entries", "abs_delta", "mean_signed_delta",
        "fraction_over_threshold", "ks_distance", "source_changed"}) {
    EXPECT_EQ(offline[key], online[key]) << key;
  }
  for (const char* side : {"baseline", "candidate"}) {
    for (const char* key : {"version", "expected_kept_fraction", "source_mix"}) {
      EXPECT_EQ(offline[side][key], online[side][key]) << side << " " << key;
    }
  }
}

TEST(DeltaCanary, StoredPairsShowThePairsTheDeltaAdded) {
  ASSERT_TRUE(world_status.ok()) << world_status;
  const World& w = *world;
  std::set<Pair> all = w.base_pairs;
  all.insert(w.delta_pairs.begin(), w.delta_pairs.end());
  uint64_t added = 0;  // stored by the delta, unknown to the base
  for (const Pair& p : w.delta_pairs) added += w.base_pairs.count(p) == 0;
  ASSERT_GT(added, 0u);
  ASSERT_LT(added, w.delta_pairs.size()) << "the log should repeat some base pairs";

  const nlohmann::json j = Offline({});  // every pair stored in either snapshot
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["baseline"]["version"], w.base_version);
  EXPECT_EQ(j["candidate"]["version"], w.delta_version);
  EXPECT_EQ(j["pairs"].get<uint64_t>(), all.size());
  // Base + delta stores every pair: all EXACT. (The delta read alone would
  // answer the base's pairs it does not override as INFERRED or DEFAULT.)
  EXPECT_EQ(Count(j, "candidate", "exact"), all.size());
  EXPECT_EQ(Count(j, "baseline", "exact"), w.base_pairs.size());
  EXPECT_EQ(Count(j, "baseline", "inferred") + Count(j, "baseline", "default"), added);
  EXPECT_EQ(j["source_changed"].get<uint64_t>(), added);
  EXPECT_GT(j["abs_delta"]["max"].get<double>(), 0.0);
}

TEST(DeltaCanary, NewNodesMoveFromDefaultAndOnlineAgrees) {
  ASSERT_TRUE(world_status.ok()) << world_status;
  const World& w = *world;
  const ImpressionLog& log = w.new_impressions;
  // The later log's distinct pairs, then pairs of each new user with base
  // items neither log pairs it with (unseen pairs of nodes the delta knows).
  std::set<Pair> seen;
  std::vector<Pair> pairs;
  std::set<uint64_t> new_users;
  for (size_t i = 0; i < log.size(); ++i) {
    const Pair p{log.user_ids[i], log.item_ids[i]};
    if (seen.insert(p).second) pairs.push_back(p);
    if (w.base_users.count(p.first) == 0) new_users.insert(p.first);
  }
  const size_t logged = pairs.size();
  uint64_t new_node_pairs = 0, unstored_by_base = 0;
  for (const Pair& p : pairs) {
    new_node_pairs += w.base_users.count(p.first) == 0 || w.base_items.count(p.second) == 0;
    unstored_by_base += w.base_pairs.count(p) == 0;
  }
  ASSERT_GT(new_users.size(), 0u);
  ASSERT_GT(new_node_pairs, 0u);
  for (uint64_t u : new_users) {
    int added = 0;
    for (auto it = w.base_items.begin(); it != w.base_items.end() && added < 3; ++it) {
      if (seen.count({u, *it}) == 0 && w.base_pairs.count({u, *it}) == 0) {
        pairs.push_back({u, *it});
        ++added;
      }
    }
  }
  const uint64_t unseen = pairs.size() - logged;
  ASSERT_GT(unseen, 0u);
  std::string csv = "user_id,item_id\n";
  for (const Pair& p : pairs) absl::StrAppend(&csv, p.first, ",", p.second, "\n");
  const std::string path = w.dir + "/delta-pairs.csv";
  std::ofstream(path) << csv;

  const nlohmann::json offline = Offline({"--input", path});
  ASSERT_FALSE(offline.is_null());
  EXPECT_EQ(offline["pairs"].get<uint64_t>(), pairs.size());
  // The base knows neither the new users nor the new items: DEFAULT.
  EXPECT_EQ(Count(offline, "baseline", "default"), new_node_pairs + unseen);
  // Base + delta stores every logged pair, and knows every new node.
  EXPECT_EQ(Count(offline, "candidate", "exact"), logged);
  EXPECT_EQ(Count(offline, "candidate", "inferred"), unseen);
  EXPECT_EQ(Count(offline, "candidate", "default"), 0u);
  EXPECT_EQ(offline["source_changed"].get<uint64_t>(), unstored_by_base + unseen);

  ExpectSameFigures(offline, Online({"--input", path}));
}

TEST(DeltaCanary, SampledFromTheNewLogOfflineEqualsTwoServers) {
  ASSERT_TRUE(world_status.ok()) << world_status;
  const std::vector<std::string> sample = {"--sample-from", world->new_log, "--sample",
                                           "100000000"};
  const nlohmann::json offline = Offline(sample);
  ASSERT_FALSE(offline.is_null());
  EXPECT_EQ(offline["pairs"].get<uint64_t>(), world->new_impressions.size());
  EXPECT_EQ(offline["kept_fraction_over"], "negative instances");
  EXPECT_EQ(Count(offline, "candidate", "default"), 0u);
  EXPECT_GT(Count(offline, "baseline", "default"), 0u);
  ExpectSameFigures(offline, Online(sample));
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new graphsieve::DeltaWorld());
  return graphsieve::testing::WorldExitCode(RUN_ALL_TESTS());
}
