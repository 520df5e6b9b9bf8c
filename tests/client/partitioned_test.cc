// A partitioned deployment against real processes (docs/CLIENTS.md
// "Partitioned deployments", docs/SNAPSHOT.md "Partitioned versions"):
// graphsieve-build --partitions 2, two graphsieve-server --partition I
// processes on loopback, the routing SamplingRateClient and the graphsieve
// CLI with --server A,B; compared with one server over the same log built
// unpartitioned; swaps of one part at a time answered from one version
// (the held previous version, GetSamplingRateRequest.snapshot_version).
// Also: a version whose index file has a flipped byte is refused by a real
// server (DATA_LOSS), the old version keeps serving.
#include <atomic>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/sampling_rate_client.h"
#include "core/io/log_reader.h"
#include "core/io/partition.h"
#include "graphsieve/v1/sampling.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/client/cluster.h"
#include "tests/temp_dir.h"
#include "tests/world_main.h"

namespace graphsieve {
namespace {

using testing::ServerProcess;

struct World {
  std::string dir, log, single_root, parts_root;
  std::string single_v1, parts_v1, parts_v2, parts_v3;
  ImpressionLog impressions;
  ServerProcess single, part0, part1;
};
World* world = nullptr;

class PartitionedWorld : public ::testing::Environment {
 public:
  void SetUp() override {
    world = new World();
    world->dir = testing::NewTempDir("partitioned-it");
    auto log = testing::GenerateLog(world->dir, 300, 400, 20000, 7);
    ASSERT_TRUE(log.ok()) << log.status();
    world->log = *log;
    world->single_root = world->dir + "/single";
    world->parts_root = world->dir + "/parts";
    ASSERT_TRUE(testing::BuildSnapshot(world->log, world->single_root, 0.2).ok());
    world->single_v1 = testing::CurrentVersion(world->single_root);
    ASSERT_TRUE(
        testing::BuildSnapshot(world->log, world->parts_root, 0.2, {"--partitions=2"}).ok());
    world->parts_v1 = testing::CurrentVersion(world->parts_root);
    // A second partitioned version (another alpha) for the swap test.
    ASSERT_TRUE(
        testing::BuildSnapshot(world->log, world->parts_root, 0.3, {"--partitions=2"}).ok());
    world->parts_v2 = testing::CurrentVersion(world->parts_root);
    ASSERT_NE(world->parts_v1, world->parts_v2);
    ASSERT_TRUE(
        testing::BuildSnapshot(world->log, world->parts_root, 0.35, {"--partitions=2"}).ok());
    world->parts_v3 = testing::CurrentVersion(world->parts_root);
    ASSERT_NE(world->parts_v2, world->parts_v3);
    ASSERT_TRUE(ReadImpressionLog(world->log, LogReaderOptions(), &world->impressions).ok());
    // Pinned to v1 with no refresher: every version change below is explicit.
    const std::vector<std::string> pinned = {"--pin_version=" + world->parts_v1,
                                             "--poll_interval_seconds=-1"};
    const absl::Status started = world->single.Start(
        world->single_root, 0, {"--pin_version=" + world->single_v1, "--poll_interval_seconds=-1"});
    ASSERT_TRUE(started.ok()) << started << world->single.stderr_text();
    std::vector<std::string> f0 = pinned, f1 = pinned;
    f0.push_back("--partition=0");
    f1.push_back("--partition=1");
    const absl::Status s0 = world->part0.Start(world->parts_root, 0, f0);
    ASSERT_TRUE(s0.ok()) << s0 << world->part0.stderr_text();
    const absl::Status s1 = world->part1.Start(world->parts_root, 0, f1);
    ASSERT_TRUE(s1.ok()) << s1 << world->part1.stderr_text();
  }
  void TearDown() override {
    delete world;
    world = nullptr;
  }
};

std::unique_ptr<SamplingRateClient> Client(const std::string& target) {
  SamplingRateClientOptions options;
  options.target = target;
  options.max_batch_pairs = 3000;  // several chunks per part
  auto client = SamplingRateClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

// PinVersion is accepted only on the operator listener: the server's default
// unix socket (server/options.h).
std::string OperatorTarget(const ServerProcess& server) {
  return absl::StrCat("unix:/tmp/graphsieve-operator-", server.port(), ".sock");
}

std::string PartsTarget() {
  return absl::StrCat(world->part0.target(), ",", world->part1.target());
}

// Every logged pair (in log order, repeats included), unseen pairs of known
// nodes, unknown users and unknown items.
void AllPairs(std::vector<uint64_t>* users, std::vector<uint64_t>* items) {
  const ImpressionLog& log = world->impressions;
  *users = log.user_ids;
  *items = log.item_ids;
  for (size_t i = 0; i < 500; ++i) {
    users->push_back(log.user_ids[(i * 131) % log.size()]);
    items->push_back(log.item_ids[(i * 17 + 3) % log.size()]);
    users->push_back(900000000 + i);  // unknown user, known item
    items->push_back(log.item_ids[i % log.size()]);
    users->push_back(log.user_ids[i % log.size()]);
    items->push_back(800000000 + i);  // unknown item
  }
}

TEST(Partitioned, EveryPairAnsweredExactlyAsTheSingleServer) {
  std::vector<uint64_t> users, items;
  AllPairs(&users, &items);
  auto single = Client(world->single.target());
  auto routed = Client(PartsTarget());
  ASSERT_EQ(routed->partitions(), 2u);
  auto a = single->GetRates(users, items);
  auto b = routed->GetRates(users, items);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_EQ(a->size(), users.size());
  ASSERT_EQ(b->size(), users.size());
  size_t mismatches = 0;
  for (size_t i = 0; i < users.size(); ++i) {
    if (a->rates[i] != b->rates[i] || a->sources[i] != b->sources[i]) {
      if (++mismatches <= 5) {
        ADD_FAILURE() << "pair " << i << " (" << users[i] << ", " << items[i] << "): single "
                      << a->rates[i] << "/" << a->sources[i] << ", routed " << b->rates[i] << "/"
                      << b->sources[i];
      }
    }
  }
  EXPECT_EQ(mismatches, 0u);
  ASSERT_EQ(b->snapshot_versions.size(), 1u);
  EXPECT_EQ(b->snapshot_versions[0], world->parts_v1);
  // Both parts were used, and every source kind occurs.
  std::map<int, size_t> sources;
  size_t in_part1 = 0;
  for (size_t i = 0; i < users.size(); ++i) {
    ++sources[b->sources[i]];
    in_part1 += PartitionOfUser(users[i], 2) == 1;
  }
  EXPECT_GT(in_part1, users.size() / 4);
  EXPECT_LT(in_part1, users.size() * 3 / 4);
  EXPECT_EQ(sources.size(), 3u);
}

TEST(Partitioned, ServerRefusesAUserOfAnotherPartitionNamingIt) {
  uint64_t foreign = 1;
  while (PartitionOfUser(foreign, 2) != 1) ++foreign;
  auto direct = Client(world->part0.target());
  auto r = direct->GetRates(std::vector<uint64_t>{foreign}, std::vector<uint64_t>{1});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "belongs to partition 1 of 2")) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "holds partition 0")) << r.status();
}

TEST(Partitioned, CliWithAServerListMatchesTheSingleServer) {
  const ImpressionLog& log = world->impressions;
  std::string csv = "user_id,item_id\n";
  for (size_t i = 0; i < 200; ++i) {
    absl::StrAppend(&csv, log.user_ids[i * 37 % log.size()], ",", log.item_ids[i * 11 % log.size()],
                    "\n");
  }
  const std::string in = world->dir + "/cli-pairs.csv";
  std::ofstream(in) << csv;
  auto run = [&](const std::string& server, const std::string& out) {
    const std::string cmd = absl::StrCat(testing::CliBinary(), " rates --server=", server,
                                         " --input=", in, " --output=", out, " 2>&1");
    return std::system(cmd.c_str());
  };
  ASSERT_EQ(run(world->single.target(), world->dir + "/single.csv"), 0);
  ASSERT_EQ(run(PartsTarget(), world->dir + "/routed.csv"), 0);
  std::ifstream a(world->dir + "/single.csv"), b(world->dir + "/routed.csv");
  std::string ta((std::istreambuf_iterator<char>(a)), {}),
      tb((std::istreambuf_iterator<char>(b)), {});
  EXPECT_GT(ta.size(), 200u * 10);
  EXPECT_EQ(ta, tb);
}

// `graphsieve canary` over the single server against the two parts, online
// (routing client) and offline (the partitioned version's directories).
TEST(Partitioned, CanaryOverPartitionsSeesNoDifference) {
  for (const std::vector<std::string>& where :
       {std::vector<std::string>{"--baseline=" + world->single.target(),
                                 "--candidate=" + PartsTarget(), "--sample-from=" + world->log,
                                 "--sample=3000"},
        std::vector<std::string>{
            "--baseline-snapshot=" + world->single_root + "/" + world->single_v1,
            "--candidate-snapshot=" + world->parts_root + "/" + world->parts_v1}}) {
    std::vector<std::string> argv = {testing::CliBinary(), "canary", "--json"};
    argv.insert(argv.end(), where.begin(), where.end());
    const testing::RunResult r = testing::RunProgram(argv, 120);
    ASSERT_EQ(r.exit_code, 0) << r.err << r.out;
    const nlohmann::json j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["pass"], true) << r.out;
    EXPECT_EQ(j["abs_delta"]["max"].get<double>(), 0.0) << r.out;
    EXPECT_EQ(j["source_changed"].get<uint64_t>(), 0u) << r.out;
    EXPECT_GT(j["pairs"].get<uint64_t>(), 1000u) << r.out;
    if (where[0].rfind("--baseline-snapshot", 0) == 0) {
      // Offline without pairs: every stored pair once. The parts' scans come
      // as sorted runs that are merged before the union with the single
      // version; a pair out of order would be counted twice.
      std::ifstream in(world->single_root + "/" + world->single_v1 + "/MANIFEST.json");
      const nlohmann::json manifest = nlohmann::json::parse(in);
      EXPECT_EQ(j["pairs"].get<uint64_t>(), manifest["counts"]["pairs"].get<uint64_t>()) << r.out;
    }
  }
}

// The parts are swapped one after the other (PinVersion) while a reader
// hammers the routing client. The hook that holds the skew is the explicit
// pin of one part: part 0 serves v2 while part 1 still serves v1, for as long
// as the test needs, no timers. Part 0 keeps v1 open (its held version), so
// the client asks it again for v1 and every batch is answered from one
// version, without an error.
TEST(Partitioned, APartThatSwappedFirstIsAskedForTheOlderVersion) {
  std::vector<uint64_t> users, items;
  AllPairs(&users, &items);
  users.resize(4000);
  items.resize(4000);
  auto routed = Client(PartsTarget());
  auto before = routed->GetRates(users, items);
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_EQ(before->snapshot_versions, std::vector<std::string>{world->parts_v1});
  EXPECT_EQ(before->version_reasks, 0);

  std::atomic<bool> stop{false};
  std::atomic<int> ok_v1{0}, ok_v2{0}, mixed{0}, errors{0};
  std::string first_error;
  std::thread reader([&] {
    SamplingRateClientOptions o;
    o.target = PartsTarget();
    o.max_batch_pairs = 1000;  // chunked parts too (CallPart with a pinned version)
    auto client = SamplingRateClient::Create(o);
    while (!stop.load()) {
      auto r = (*client)->GetRates(users, items);
      if (!r.ok()) {
        if (errors++ == 0) first_error = r.status().ToString();
        continue;
      }
      if (r->snapshot_versions.size() != 1) {
        ++mixed;
      } else {
        (r->snapshot_versions[0] == world->parts_v1 ? ok_v1 : ok_v2)++;
      }
    }
  });
  auto part0 = Client(OperatorTarget(world->part0));
  auto part1 = Client(OperatorTarget(world->part1));
  // Whatever fails below: the reader stops and both parts go back to v1.
  struct Restore {
    std::function<void()> fn;
    ~Restore() { fn(); }
  } restore{[&] {
    stop = true;
    if (reader.joinable()) reader.join();
    part0->PinVersion(world->parts_v1, false).IgnoreError();
    part1->PinVersion(world->parts_v1, false).IgnoreError();
  }};
  ASSERT_TRUE(part0->PinVersion(world->parts_v2, false).ok());
  // Held state: part 0 on v2 (holding v1), part 1 on v1.
  auto status0 = routed->GetStatus(0);
  ASSERT_TRUE(status0.ok()) << status0.status();
  EXPECT_EQ(status0->active().version(), world->parts_v2);
  EXPECT_EQ(status0->held_version(), world->parts_v1);
  {
    auto r = routed->GetRates(users, items);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(r->snapshot_versions, std::vector<std::string>{world->parts_v1});
    EXPECT_EQ(r->version_reasks, 1);  // part 0, asked for v1
    EXPECT_EQ(r->version_retries, 0);
    EXPECT_EQ(r->rates, before->rates);  // exactly v1's answers
    EXPECT_EQ(r->sources, before->sources);
  }
  ASSERT_TRUE(part1->PinVersion(world->parts_v2, false).ok());
  auto after = routed->GetRates(users, items);
  ASSERT_TRUE(after.ok()) << after.status();
  stop = true;
  reader.join();
  ASSERT_EQ(after->snapshot_versions, std::vector<std::string>{world->parts_v2});
  EXPECT_EQ(after->version_reasks, 0);
  EXPECT_EQ(mixed.load(), 0);
  EXPECT_EQ(errors.load(), 0) << first_error;
  EXPECT_GT(ok_v1.load() + ok_v2.load(), 0);
  // alpha 0.3 vs 0.2: the versions' rates really differ.
  size_t differ = 0;
  for (size_t i = 0; i < users.size(); ++i) differ += before->rates[i] != after->rates[i];
  EXPECT_GT(differ, users.size() / 2);
}

// A version that no part still holds: part 0 swaps v1 -> v2 -> v3 (holding
// only v2) while part 1 stays on v1. The client asks part 0 for v1 (NOT_FOUND,
// naming what it serves and holds), part 1 for v3 (NOT_FOUND), asks afresh
// within its bound, and fails ABORTED with the versions and the reason.
TEST(Partitioned, NoVersionHeldByEveryPartFailsClearlyAfterTheBound) {
  std::vector<uint64_t> users, items;
  AllPairs(&users, &items);
  users.resize(2000);
  items.resize(2000);
  auto part0 = Client(OperatorTarget(world->part0));
  struct Restore {
    SamplingRateClient* part0;
    ~Restore() { part0->PinVersion(world->parts_v1, false).IgnoreError(); }
  } restore{part0.get()};
  ASSERT_TRUE(part0->PinVersion(world->parts_v2, false).ok());
  ASSERT_TRUE(part0->PinVersion(world->parts_v3, false).ok());

  // Asked directly for v1, part 0 names the requested version and its own.
  v1::GetSamplingRateRequest request;
  for (size_t i = 0; i < users.size(); ++i) {
    if (PartitionOfUser(users[i], 2) != 0) continue;
    request.add_user_ids(users[i]);
    request.add_item_ids(items[i]);
  }
  request.set_snapshot_version(world->parts_v1);
  auto stub = v1::SamplingRateService::NewStub(
      grpc::CreateChannel(world->part0.target(), grpc::InsecureChannelCredentials()));
  {
    grpc::ClientContext context;
    v1::GetSamplingRateResponse response;
    const grpc::Status st = stub->GetSamplingRate(&context, request, &response);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << st.error_message();
    EXPECT_TRUE(absl::StrContains(st.error_message(), "'" + world->parts_v1 + "' is not held"))
        << st.error_message();
    EXPECT_TRUE(absl::StrContains(st.error_message(), "serves '" + world->parts_v3 + "'"))
        << st.error_message();
    EXPECT_TRUE(absl::StrContains(st.error_message(), "holds '" + world->parts_v2 + "'"))
        << st.error_message();
  }
  request.set_snapshot_version(world->parts_v2);  // the held one answers
  {
    grpc::ClientContext context;
    v1::GetSamplingRateResponse response;
    const grpc::Status st = stub->GetSamplingRate(&context, request, &response);
    ASSERT_TRUE(st.ok()) << st.error_message();
    EXPECT_EQ(response.snapshot_version(), world->parts_v2);
    EXPECT_EQ(response.rates_size(), request.user_ids_size());
  }

  SamplingRateClientOptions o;
  o.target = PartsTarget();
  o.max_version_attempts = 2;
  o.version_retry_backoff_seconds = 0;
  auto client = SamplingRateClient::Create(o);
  auto r = (*client)->GetRates(users, items);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kAborted) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), world->parts_v1)) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), world->parts_v3)) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "is not held by this server")) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "in each of 2 attempts")) << r.status();
  ASSERT_TRUE(part0->PinVersion(world->parts_v1, false).ok());
  auto back = (*client)->GetRates(users, items);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->snapshot_versions, std::vector<std::string>{world->parts_v1});
}

TEST(Partitioned, AFlippedByteInAVersionsIndexFileIsRefusedByTheServer) {
  // A second unpartitioned version with one byte of its index file flipped.
  ASSERT_TRUE(testing::BuildSnapshot(world->log, world->single_root, 0.25).ok());
  const std::string bad = testing::CurrentVersion(world->single_root);
  ASSERT_NE(bad, world->single_v1);
  const std::string path = world->single_root + "/" + bad + "/index.gsi";
  {
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good()) << path;
    f.seekg(8192 + 100);
    char c;
    f.read(&c, 1);
    c = static_cast<char>(c ^ 0x10);
    f.seekp(8192 + 100);
    f.write(&c, 1);
  }
  auto client = Client(world->single.target());
  auto r = Client(OperatorTarget(world->single))->PinVersion(bad, false);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "index.gsi: checksum mismatch"))
      << r.status();
  auto status = client->GetStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  auto rates = client->GetRates(std::vector<uint64_t>{world->impressions.user_ids[0]},
                                std::vector<uint64_t>{world->impressions.item_ids[0]});
  ASSERT_TRUE(rates.ok()) << rates.status();
  EXPECT_EQ(rates->snapshot_versions, std::vector<std::string>{world->single_v1});
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new graphsieve::PartitionedWorld());
  return graphsieve::testing::WorldExitCode(RUN_ALL_TESTS());
}
