// Deltas in a partitioned deployment against real processes (docs/FRESHNESS.md
// "Deltas over a partitioned base"): a churned graphsieve-gen log cut by
// time; its earlier part built by graphsieve-build once unpartitioned and
// once with --partitions=3; two cumulative deltas of its later part
// (--delta_of=CURRENT) published over each — the first without the
// impressions of partition 2's users, so that delta's part 2 stores no
// pairs. Three graphsieve-server --partition I processes over the
// partitioned root and one over the unpartitioned root, on loopback sockets:
// the routing SamplingRateClient answers every pair (stored, new user, new
// item, unseen) exactly as the single server, and a swap from one delta to
// the next, one part at a time, is answered from one version.
#include <atomic>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "client/sampling_rate_client.h"
#include "core/io/log_reader.h"
#include "core/io/partition.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/client/cluster.h"
#include "tests/temp_dir.h"
#include "tests/world_main.h"

namespace graphsieve {
namespace {

using testing::RunProgram;
using testing::RunResult;
using testing::ServerProcess;

constexpr uint32_t kParts = 3;
constexpr uint32_t kQuietPart = 2;                 // no impressions in the first delta
constexpr int64_t kSplitSeconds = 7 * 86400;       // the base: the first 7 of 10 days
constexpr int64_t kFirstDeltaSeconds = 8 * 86400;  // the first delta: day 7 only

struct World {
  std::string dir, base_log, first_log, second_log, single_root, parts_root;
  std::string single_base, single_d1, single_d2, parts_base, parts_d1, parts_d2;
  ImpressionLog base, later;
  std::vector<std::unique_ptr<ServerProcess>> parts;
  ServerProcess single;
};
World* world = nullptr;
// Set up once for the binary; every test fails with this error if it is not OK.
absl::Status world_status = absl::UnknownError("the environment did not run");

// The generator's log (user_id,item_id,label,timestamp) cut by time: the base
// before kSplitSeconds; the first delta's log: the later rows before
// kFirstDeltaSeconds of users outside kQuietPart; the second's: every later row.
absl::Status Split(const std::string& log, World& w) {
  std::ifstream in(log);
  std::ofstream base(w.base_log), first(w.first_log), second(w.second_log);
  std::string line;
  if (!std::getline(in, line) || line != "user_id,item_id,label,timestamp") {
    return absl::InternalError(absl::StrCat(log, ": unexpected header '", line, "'"));
  }
  for (std::ofstream* out : {&base, &first, &second}) *out << line << "\n";
  while (std::getline(in, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, ',');
    int64_t t = 0;
    uint64_t user = 0;
    if (f.size() != 4 || !absl::SimpleAtoi(f[3], &t) || !absl::SimpleAtoi(f[0], &user)) {
      return absl::InternalError(absl::StrCat(log, ": bad row '", line, "'"));
    }
    if (t < kSplitSeconds) {
      base << line << "\n";
      continue;
    }
    second << line << "\n";
    if (t < kFirstDeltaSeconds && PartitionOfUser(user, kParts) != kQuietPart) {
      first << line << "\n";
    }
  }
  return absl::OkStatus();
}

// graphsieve-build --delta_of=CURRENT as the CronJob runs it; the version it published.
absl::StatusOr<std::string> Delta(const std::string& log, const std::string& root, uint32_t parts) {
  const RunResult r =
      RunProgram({testing::BuildBinary(), "--delta_of=CURRENT", "--input=" + log,
                  "--snapshot_root=" + root, "--alpha=0.2", "--threads=2", "--quiet", "--json"},
                 300);
  if (r.exit_code != 0) return absl::InternalError("the delta build failed: " + r.err);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  if (j["partitions"] != parts) {
    return absl::InternalError(absl::StrCat("the delta was written in ", j["partitions"].dump(),
                                            " parts, expected ", parts));
  }
  return j["version"].get<std::string>();
}

absl::Status MakeWorld(World& w) {
  w.dir = testing::NewTempDir("partitioned-delta-it");
  const std::string log = w.dir + "/churned.csv";
  const RunResult gen =
      RunProgram({testing::GenBinary(), "--preset=tiny", "--users=300", "--items=400",
                  "--instances=20000", "--positive_rate=0.1", "--seed=13", "--churn_days=10",
                  "--new_users_per_day=10", "--new_items_per_day=15", "--output=" + log, "--quiet"},
                 120);
  if (gen.exit_code != 0) return absl::InternalError("graphsieve-gen failed: " + gen.err);
  w.base_log = w.dir + "/base.csv";
  w.first_log = w.dir + "/first.csv";
  w.second_log = w.dir + "/second.csv";
  if (absl::Status s = Split(log, w); !s.ok()) return s;
  w.single_root = w.dir + "/single";
  w.parts_root = w.dir + "/parts";
  if (absl::Status s = testing::BuildSnapshot(w.base_log, w.single_root, 0.2); !s.ok()) return s;
  w.single_base = testing::CurrentVersion(w.single_root);
  absl::Status s = testing::BuildSnapshot(w.base_log, w.parts_root, 0.2,
                                          {absl::StrCat("--partitions=", kParts)});
  if (!s.ok()) return s;
  w.parts_base = testing::CurrentVersion(w.parts_root);
  struct Step {
    std::string* version;
    const std::string& log;
    const std::string& root;
    uint32_t parts;
  };
  for (const Step& step : {Step{&w.single_d1, w.first_log, w.single_root, 1},
                           Step{&w.parts_d1, w.first_log, w.parts_root, kParts},
                           Step{&w.single_d2, w.second_log, w.single_root, 1},
                           Step{&w.parts_d2, w.second_log, w.parts_root, kParts}}) {
    absl::StatusOr<std::string> v = Delta(step.log, step.root, step.parts);
    if (!v.ok()) return v.status();
    *step.version = *v;
  }
  if (s = ReadImpressionLog(w.base_log, LogReaderOptions(), &w.base); !s.ok()) return s;
  if (s = ReadImpressionLog(w.second_log, LogReaderOptions(), &w.later); !s.ok()) return s;

  // Pinned to the first delta with no refresher: every version change below is explicit.
  s = w.single.Start(w.single_root, 0,
                     {"--pin_version=" + w.single_d1, "--poll_interval_seconds=-1"});
  if (!s.ok()) return absl::Status(s.code(), absl::StrCat(s.message(), w.single.stderr_text()));
  for (uint32_t p = 0; p < kParts; ++p) {
    w.parts.push_back(std::make_unique<ServerProcess>());
    s = w.parts[p]->Start(w.parts_root, 0,
                          {"--pin_version=" + w.parts_d1, "--poll_interval_seconds=-1",
                           absl::StrCat("--partition=", p)});
    if (!s.ok()) {
      return absl::Status(s.code(), absl::StrCat(s.message(), w.parts[p]->stderr_text()));
    }
  }
  return absl::OkStatus();
}

class PartitionedDeltaWorld : public ::testing::Environment {
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

std::unique_ptr<SamplingRateClient> Client(const std::string& target, int max_batch = 3000) {
  SamplingRateClientOptions options;
  options.target = target;
  options.max_batch_pairs = max_batch;  // several chunks per part
  auto client = SamplingRateClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

// PinVersion is accepted only on the operator listener (server/options.h).
std::unique_ptr<SamplingRateClient> Operator(const ServerProcess& server) {
  return Client(absl::StrCat("unix:/tmp/graphsieve-operator-", server.port(), ".sock"));
}

std::string PartsTarget() {
  std::vector<std::string> targets;
  for (const auto& p : world->parts) targets.push_back(p->target());
  return absl::StrJoin(targets, ",");
}

// Every pair of both logs, each user with items it never logged (old and new
// items), unknown users and unknown items.
void AllPairs(std::vector<uint64_t>* users, std::vector<uint64_t>* items) {
  for (const ImpressionLog* log : {&world->base, &world->later}) {
    users->insert(users->end(), log->user_ids.begin(), log->user_ids.end());
    items->insert(items->end(), log->item_ids.begin(), log->item_ids.end());
  }
  const ImpressionLog& b = world->base;
  const ImpressionLog& l = world->later;
  for (size_t i = 0; i < 600; ++i) {
    users->push_back(l.user_ids[(i * 131) % l.size()]);  // later users, base items
    items->push_back(b.item_ids[(i * 17 + 3) % b.size()]);
    users->push_back(b.user_ids[(i * 97) % b.size()]);  // base users, later items
    items->push_back(l.item_ids[(i * 29 + 5) % l.size()]);
    users->push_back(900000000 + i);  // unknown user
    items->push_back(l.item_ids[i % l.size()]);
    users->push_back(l.user_ids[i % l.size()]);
    items->push_back(800000000 + i);  // unknown item
  }
}

// The routed answers against the single server's, pair by pair.
void ExpectSameAnswers(const std::vector<uint64_t>& users, const RateBatch& single,
                       const RateBatch& routed) {
  ASSERT_EQ(single.size(), users.size());
  ASSERT_EQ(routed.size(), users.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < users.size(); ++i) {
    if (single.rates[i] != routed.rates[i] || single.sources[i] != routed.sources[i]) {
      if (++mismatches <= 5) {
        ADD_FAILURE() << "pair " << i << " (user " << users[i] << "): single " << single.rates[i]
                      << "/" << single.sources[i] << ", routed " << routed.rates[i] << "/"
                      << routed.sources[i];
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
}

TEST(PartitionedDelta, EveryPairAnsweredExactlyAsTheSingleServer) {
  ASSERT_TRUE(world_status.ok()) << world_status;
  std::vector<uint64_t> users, items;
  AllPairs(&users, &items);
  auto single = Client(world->single.target());
  auto routed = Client(PartsTarget());
  ASSERT_EQ(routed->partitions(), kParts);
  auto a = single->GetRates(users, items);
  auto b = routed->GetRates(users, items);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ExpectSameAnswers(users, *a, *b);
  EXPECT_EQ(a->snapshot_versions, std::vector<std::string>{world->single_d1});
  EXPECT_EQ(b->snapshot_versions, std::vector<std::string>{world->parts_d1});
  // Every source occurs, and every part answered.
  std::map<int, size_t> sources;
  std::vector<size_t> per_part(kParts, 0);
  for (size_t i = 0; i < users.size(); ++i) {
    ++sources[b->sources[i]];
    ++per_part[PartitionOfUser(users[i], kParts)];
  }
  EXPECT_EQ(sources.size(), 3u);
  for (uint32_t p = 0; p < kParts; ++p) EXPECT_GT(per_part[p], users.size() / 6) << p;
}

// The first delta's part 2 stores no pairs (its users logged nothing in it),
// yet its users' pairs with the items the delta introduced are answered from
// the delta's item records (INFERRED), as by the single server; without the
// delta those items are unknown (DEFAULT).
TEST(PartitionedDelta, APartWithoutNewImpressionsAnswersTheNewItems) {
  ASSERT_TRUE(world_status.ok()) << world_status;
  std::ifstream manifest(world->parts_root + "/" + world->parts_d1 + "/part-" +
                         std::to_string(kQuietPart) + "/MANIFEST.json");
  ASSERT_TRUE(manifest.good());
  const nlohmann::json m = nlohmann::json::parse(manifest);
  EXPECT_EQ(m["counts"]["pairs"], 0) << m["counts"].dump();
  EXPECT_EQ(m["counts"]["users"], 0) << m["counts"].dump();
  EXPECT_GT(m["counts"]["items"].get<uint64_t>(), 0u) << m["counts"].dump();

  const std::set<uint64_t> base_items(world->base.item_ids.begin(), world->base.item_ids.end());
  std::set<uint64_t> quiet_users, new_items;
  for (uint64_t u : world->base.user_ids) {
    if (PartitionOfUser(u, kParts) == kQuietPart) quiet_users.insert(u);
  }
  std::ifstream first(world->first_log);
  std::string line;
  std::getline(first, line);
  while (std::getline(first, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, ',');
    uint64_t item = 0;
    ASSERT_TRUE(f.size() == 4 && absl::SimpleAtoi(f[1], &item)) << line;
    if (base_items.count(item) == 0) new_items.insert(item);
  }
  ASSERT_FALSE(quiet_users.empty());
  ASSERT_FALSE(new_items.empty());
  std::vector<uint64_t> users, items;
  for (uint64_t u : quiet_users) {
    for (uint64_t i : new_items) users.push_back(u), items.push_back(i);
  }
  auto a = Client(world->single.target())->GetRates(users, items);
  auto b = Client(PartsTarget())->GetRates(users, items);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ExpectSameAnswers(users, *a, *b);
  size_t inferred = 0;
  for (size_t i = 0; i < users.size(); ++i) inferred += b->sources[i] == v1::RATE_SOURCE_INFERRED;
  EXPECT_EQ(inferred, users.size());
}

// The parts swap from the first delta to the second one at a time (PinVersion)
// while a reader hammers the routing client. The explicit pin of one part is
// the hook that holds the skew, no timers: part 0 serves the second delta and
// holds the first, so the client asks it again for the first and every batch
// is answered from one version. Once every part serves the second delta, the
// answers are the single server's over its second delta.
TEST(PartitionedDelta, ASwapFromOneDeltaToTheNextIsAnsweredFromOneVersion) {
  ASSERT_TRUE(world_status.ok()) << world_status;
  std::vector<uint64_t> users, items;
  AllPairs(&users, &items);
  users.resize(6000);
  items.resize(6000);
  auto routed = Client(PartsTarget());
  auto before = routed->GetRates(users, items);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(before->snapshot_versions, std::vector<std::string>{world->parts_d1});

  std::atomic<bool> stop{false};
  std::atomic<int> ok_d1{0}, ok_d2{0}, mixed{0}, errors{0};
  std::string first_error;
  std::thread reader([&] {
    auto client = Client(PartsTarget(), 1000);
    while (!stop.load()) {
      auto r = client->GetRates(users, items);
      if (!r.ok()) {
        if (errors++ == 0) first_error = r.status().ToString();
        continue;
      }
      if (r->snapshot_versions.size() != 1) {
        ++mixed;
      } else {
        (r->snapshot_versions[0] == world->parts_d1 ? ok_d1 : ok_d2)++;
      }
    }
  });
  std::vector<std::unique_ptr<SamplingRateClient>> ops;
  for (const auto& p : world->parts) ops.push_back(Operator(*p));
  auto single_op = Operator(world->single);
  // Whatever fails below: the reader stops and every server goes back to the first delta.
  struct Restore {
    std::function<void()> fn;
    ~Restore() { fn(); }
  } restore{[&] {
    stop = true;
    if (reader.joinable()) reader.join();
    for (auto& op : ops) op->PinVersion(world->parts_d1, false).IgnoreError();
    single_op->PinVersion(world->single_d1, false).IgnoreError();
  }};
  ASSERT_TRUE(ops[0]->PinVersion(world->parts_d2, false).ok());
  auto status0 = routed->GetStatus(0);
  ASSERT_TRUE(status0.ok()) << status0.status();
  EXPECT_EQ(status0->active().version(), world->parts_d2);
  EXPECT_EQ(status0->active().base_version(), world->parts_base);
  EXPECT_EQ(status0->held_version(), world->parts_d1);
  {
    auto r = routed->GetRates(users, items);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->snapshot_versions, std::vector<std::string>{world->parts_d1});
    EXPECT_EQ(r->version_reasks, 1);  // part 0, asked for the first delta
    EXPECT_EQ(r->rates, before->rates);
    EXPECT_EQ(r->sources, before->sources);
  }
  for (uint32_t p = 1; p < kParts; ++p)
    ASSERT_TRUE(ops[p]->PinVersion(world->parts_d2, false).ok());
  ASSERT_TRUE(single_op->PinVersion(world->single_d2, false).ok());
  auto after = routed->GetRates(users, items);
  ASSERT_TRUE(after.ok()) << after.status();
  stop = true;
  reader.join();
  ASSERT_EQ(after->snapshot_versions, std::vector<std::string>{world->parts_d2});
  EXPECT_EQ(after->version_reasks, 0);
  EXPECT_EQ(mixed.load(), 0);
  EXPECT_EQ(errors.load(), 0) << first_error;
  EXPECT_GT(ok_d1.load() + ok_d2.load(), 0);
  auto single = Client(world->single.target())->GetRates(users, items);
  ASSERT_TRUE(single.ok()) << single.status();
  EXPECT_EQ(single->snapshot_versions, std::vector<std::string>{world->single_d2});
  ExpectSameAnswers(users, *single, *after);
  // The second delta changed answers (the day after the first, partition 2's users).
  size_t differ = 0;
  for (size_t i = 0; i < users.size(); ++i) differ += before->rates[i] != after->rates[i];
  EXPECT_GT(differ, 0u);
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new graphsieve::PartitionedDeltaWorld());
  return graphsieve::testing::WorldExitCode(RUN_ALL_TESTS());
}
