// The client library and the `graphsieve` CLI against real graphsieve-server
// processes on loopback, serving snapshots that the real graphsieve-build made
// from a graphsieve-gen log.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/ingestion_filter.h"
#include "client/sampling_rate_client.h"
#include "core/io/ids.h"
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

using ::graphsieve::testing::CliBinary;
using ::graphsieve::testing::RunProgram;
using ::graphsieve::testing::RunResult;
using ::graphsieve::testing::ServerProcess;

constexpr double kAlphaA = 0.2;
constexpr double kAlphaB = 0.1;

// Built once for the whole binary: one log, three snapshot roots (A and A2
// built identically with alpha 0.2, B with alpha 0.1), three servers. (PinCli
// builds a fourth root with two versions and runs its own server.)
struct World {
  std::string dir, log, root_a, root_a2, root_b;
  ImpressionLog impressions;
  ServerProcess server_a, server_a2, server_b;
};
World* world = nullptr;

class ClientWorld : public ::testing::Environment {
 public:
  void SetUp() override {
    world = new World();
    world->dir = testing::NewTempDir("client-it");
    auto log = testing::GenerateLog(world->dir, 150, 250, 12000, 5);
    ASSERT_TRUE(log.ok()) << log.status();
    world->log = *log;
    world->root_a = world->dir + "/root-a";
    world->root_a2 = world->dir + "/root-a2";
    world->root_b = world->dir + "/root-b";
    {
      const absl::Status s = testing::BuildSnapshot(world->log, world->root_a, kAlphaA);
      ASSERT_TRUE(s.ok()) << s;
    }
    {
      const absl::Status s = testing::BuildSnapshot(world->log, world->root_a2, kAlphaA);
      ASSERT_TRUE(s.ok()) << s;
    }
    {
      const absl::Status s = testing::BuildSnapshot(world->log, world->root_b, kAlphaB);
      ASSERT_TRUE(s.ok()) << s;
    }
    LogReaderOptions options;
    const absl::Status read = ReadImpressionLog(world->log, options, &world->impressions);
    ASSERT_TRUE(read.ok()) << read;
    ASSERT_TRUE(world->server_a.Start(world->root_a, 0).ok());
    ASSERT_TRUE(world->server_a2.Start(world->root_a2, 0).ok());
    ASSERT_TRUE(world->server_b.Start(world->root_b, 0).ok());
  }
  void TearDown() override {
    delete world;
    world = nullptr;
  }
};

std::unique_ptr<SamplingRateClient> Client(const std::string& target, size_t max_batch = 50000) {
  SamplingRateClientOptions options;
  options.target = target;
  options.max_batch_pairs = max_batch;
  auto client = SamplingRateClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

std::string Write(const std::string& name, const std::string& text) {
  const std::string path = world->dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::vector<std::vector<std::string>> CsvRows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  for (absl::string_view line : absl::StrSplit(text, '\n', absl::SkipEmpty())) {
    rows.push_back(absl::StrSplit(line, ','));
  }
  return rows;
}

// Some pairs the builder saw, some unseen pairs of known nodes, unknown ids.
std::string PairsCsv(std::vector<uint64_t>* users, std::vector<uint64_t>* items) {
  const ImpressionLog& log = world->impressions;
  std::string csv = "user_id,item_id,extra\n";
  for (size_t i = 0; i < 40; ++i) {
    users->push_back(log.user_ids[i * 97 % log.size()]);
    items->push_back(log.item_ids[(i * 31 + 7) % log.size()]);
  }
  users->push_back(987654321);  // unknown user
  items->push_back(log.item_ids[0]);
  users->push_back(log.user_ids[0]);
  items->push_back(123456789);  // unknown item
  for (size_t i = 0; i < users->size(); ++i) {
    absl::StrAppend(&csv, (*users)[i], ",", (*items)[i], ",x\n");
  }
  return csv;
}

TEST(RatesCli, WritesCsvInInputOrderMatchingTheLibraryAndTheSnapshot) {
  std::vector<uint64_t> users, items;
  const std::string pairs = Write("pairs.csv", PairsCsv(&users, &items));
  const RunResult r = RunProgram(
      {CliBinary(), "rates", "--server", world->server_a.target(), "--input", pairs}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = CsvRows(r.out);
  ASSERT_EQ(rows.size(), users.size() + 1);
  EXPECT_EQ(rows[0], (std::vector<std::string>{"user_id", "item_id", "rate", "source"}));

  auto batch = Client(world->server_a.target())->GetRates(users, items);
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->snapshot_versions.size(), 1u);
  // The version is reported on stderr.
  EXPECT_NE(r.err.find(batch->snapshot_versions[0]), std::string::npos) << r.err;

  // EXACT answers equal the rates stored in the snapshot, read independently.
  auto version = std::filesystem::path(world->root_a) / batch->snapshot_versions[0];
  auto reader = VersionOpener().OpenStored(world->root_a, batch->snapshot_versions[0], {});
  ASSERT_TRUE(reader.ok()) << reader.status() << " " << version;
  std::vector<uint8_t> found_bytes(users.size());
  std::unique_ptr<bool[]> found(new bool[users.size()]);
  std::vector<float> stored(users.size());
  ASSERT_TRUE((*reader)
                  ->LookupPairs(users, items, absl::MakeSpan(found.get(), users.size()),
                                absl::MakeSpan(stored))
                  .ok());
  int exact = 0, by_default = 0;
  for (size_t i = 0; i < users.size(); ++i) {
    const auto& row = rows[i + 1];
    ASSERT_EQ(row.size(), 4u);
    EXPECT_EQ(row[0], absl::StrCat(users[i]));
    EXPECT_EQ(row[1], absl::StrCat(items[i]));
    float rate = 0;
    ASSERT_TRUE(absl::SimpleAtof(row[2], &rate)) << row[2];
    EXPECT_EQ(rate, batch->rates[i]) << "the CSV text must read back as the served float";
    EXPECT_GT(rate, 0.0f);
    EXPECT_LE(rate, 1.0f);
    if (found[i]) {
      EXPECT_EQ(row[3], "EXACT");
      EXPECT_EQ(rate, stored[i]);
      ++exact;
    } else {
      EXPECT_NE(row[3], "EXACT");
    }
    by_default += row[3] == "DEFAULT";
  }
  EXPECT_GT(exact, 0);
  EXPECT_GE(by_default, 2);  // the two unknown ids
  EXPECT_EQ(rows.back()[3], "DEFAULT");
}

TEST(RatesCli, ReadsStdinAndAddsTheVersionColumn) {
  const std::string pairs = Write("stdin-pairs.csv", "user_id,item_id\n1,2\n3,4\n");
  const RunResult r = RunProgram(
      {CliBinary(), "rates", "--server=" + world->server_a.target(), "--with-version"}, 60, pairs);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto rows = CsvRows(r.out);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].back(), "snapshot_version");
  EXPECT_FALSE(rows[1].back().empty());
  EXPECT_EQ(rows[1].back(), rows[2].back());
}

TEST(RatesCli, BadInputsGiveExitTwoAndNameTheProblem) {
  const std::string no_item = Write("no-item.csv", "user_id,video\n1,2\n");
  RunResult r = RunProgram(
      {CliBinary(), "rates", "--server", world->server_a.target(), "--input", no_item}, 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("item_id"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--item-column"), std::string::npos) << r.err;
  const std::string bad_id = Write("bad-id.csv", "user_id,item_id\n1,2\n99999999999999999999,3\n");
  r = RunProgram({CliBinary(), "rates", "--server", world->server_a.target(), "--input", bad_id},
                 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("bad-id.csv:3"), std::string::npos) << r.err;
  // Nothing listens on port 1: bounded retries, then exit 2 naming the target.
  r = RunProgram({CliBinary(), "status", "--server", "127.0.0.1:1", "--max-attempts=2",
                  "--deadline-seconds=2"},
                 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("127.0.0.1:1"), std::string::npos) << r.err;
  r = RunProgram({CliBinary(), "rates", "--sample=3"}, 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--sample"), std::string::npos) << r.err;
  r = RunProgram({CliBinary(), "bogus"}, 60);
  EXPECT_EQ(r.exit_code, 2);
  r = RunProgram({CliBinary(), "canary", "--help"}, 60);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--max-fraction-over"), std::string::npos);
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// rates and filter write --output through a temporary renamed on success: a
// run that fails midway leaves the old file whole and no temporary behind;
// --output naming the --input file is refused before anything is written.
TEST(OutputFlag, AFailedRunLeavesTheOldFileAndOutputOverInputIsRefused) {
  const std::string dir = world->dir + "/output-flag";
  std::filesystem::create_directories(dir);
  const std::string out = dir + "/out.csv";
  const std::string bad = Write("late-bad-id.csv",
                                "user_id,item_id,label\n1,2,0\n3,4,1\n5,6,0\n"
                                "99999999999999999999,3,0\n");
  for (const char* command : {"rates", "filter"}) {
    std::ofstream(out) << "old contents\n";
    RunResult r = RunProgram(
        {CliBinary(), command, "--server", world->server_a.target(), "--input", bad, "--output",
         out, std::string(command) == "rates" ? "--max-batch-pairs=1" : "--batch-rows=1"},
        60);
    EXPECT_EQ(r.exit_code, 2) << command << ": " << r.err;
    EXPECT_EQ(ReadAll(out), "old contents\n") << command;
    EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                            std::filesystem::directory_iterator()),
              1)
        << command << ": a temporary was left behind";

    const std::string input = Write("self.csv", "user_id,item_id,label\n1,2,0\n");
    r = RunProgram({CliBinary(), command, "--server", world->server_a.target(), "--input", input,
                    "--output", input},
                   60);
    EXPECT_EQ(r.exit_code, 2) << command;
    EXPECT_NE(r.err.find("--output"), std::string::npos) << r.err;
    EXPECT_EQ(ReadAll(input), "user_id,item_id,label\n1,2,0\n") << command;
  }
  // A run that succeeds replaces the file.
  const std::string good = Write("good.csv", "user_id,item_id\n1,2\n");
  RunResult r = RunProgram({CliBinary(), "rates", "--server", world->server_a.target(), "--input",
                            good, "--output", out},
                           60);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(ReadAll(out).rfind("user_id,item_id,rate,source\n1,2,", 0), 0u) << ReadAll(out);
}

TEST(StatusCli, TableAndJsonDescribeTheActiveSnapshot) {
  auto status = Client(world->server_b.target())->GetStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  const std::string version = status->active().version();
  ASSERT_FALSE(version.empty());
  RunResult r = RunProgram({CliBinary(), "status", "--server", world->server_b.target()}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(version), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("serving                yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("alpha / gamma          0.1 / 0.5"), std::string::npos) << r.out;  // root B
  // Root B is built with the default rate rule, read from its MANIFEST.json.
  EXPECT_NE(r.out.find("rate rule              mixture (kappa 1)"), std::string::npos) << r.out;
  // Built from flags given by hand: no tune recorded (tests/eval/tune_test.cc builds one that has).
  EXPECT_NE(r.out.find("rule in force          not tuned (flags given by hand)"), std::string::npos)
      << r.out;
  r = RunProgram({CliBinary(), "status", "--server", world->server_b.target(), "--json"}, 60);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["active"]["version"], version);
  EXPECT_NEAR(j["active"]["alpha"].get<double>(), kAlphaB, 1e-12);
  EXPECT_EQ(j["serving"], true);
}

TEST(SamplingRateClient, SplitsLargeBatchesAndReassemblesInOrder) {
  const ImpressionLog& log = world->impressions;
  const size_t n = std::min<size_t>(1000, log.size());
  std::vector<uint64_t> users(log.user_ids.begin(), log.user_ids.begin() + n);
  std::vector<uint64_t> items(log.item_ids.begin(), log.item_ids.begin() + n);
  std::reverse(items.begin(), items.end());  // mostly unseen pairs: every source appears
  auto whole = Client(world->server_a.target())->GetRates(users, items);
  auto split = Client(world->server_a.target(), 7)->GetRates(users, items);
  ASSERT_TRUE(whole.ok()) << whole.status();
  ASSERT_TRUE(split.ok()) << split.status();
  EXPECT_EQ(whole->rates, split->rates);
  EXPECT_EQ(whole->sources, split->sources);
  EXPECT_EQ(split->snapshot_versions, whole->snapshot_versions);
  auto mismatch = Client(world->server_a.target())->GetRates(users, {});
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(IngestionFilter, ServerAndLocalDecisionsAgreeWithKeepNegative) {
  const ImpressionLog& log = world->impressions;
  const size_t n = std::min<size_t>(3000, log.size());
  std::vector<uint64_t> users(log.user_ids.begin(), log.user_ids.begin() + n);
  std::vector<uint64_t> items(log.item_ids.begin(), log.item_ids.begin() + n);
  std::vector<uint8_t> labels(log.labels.begin(), log.labels.begin() + n);
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) keys[i] = HashStringId(absl::StrCat("impression-", i));
  auto client = Client(world->server_a.target(), 500);
  auto status = client->GetStatus();
  ASSERT_TRUE(status.ok());
  const uint64_t seed = status->active().seed();
  IngestionFilterOptions server_mode, local_mode;
  local_mode.mode = IngestionFilterOptions::Mode::kLocal;
  auto by_server =
      (*IngestionFilter::Create(client.get(), server_mode))->Decide(users, items, labels, keys);
  auto by_client =
      (*IngestionFilter::Create(client.get(), local_mode))->Decide(users, items, labels, keys);
  ASSERT_TRUE(by_server.ok()) << by_server.status();
  ASSERT_TRUE(by_client.ok()) << by_client.status();
  int kept_neg = 0, neg = 0;
  for (size_t i = 0; i < n; ++i) {
    const bool expect_keep = labels[i] || KeepNegative(keys[i], seed, by_server->rates[i]);
    ASSERT_EQ(by_server->keep[i], expect_keep) << i;
    ASSERT_EQ(by_client->keep[i], expect_keep) << i;
    const float expect_offset = std::log(by_server->rates[i]);  // positives too
    ASSERT_EQ(by_client->log_odds_offsets[i], expect_offset) << i;
    ASSERT_EQ(by_server->log_odds_offsets[i], expect_offset) << i;
    ASSERT_EQ(by_client->rates[i], by_server->rates[i]) << i;
    if (!labels[i]) {
      ++neg;
      kept_neg += expect_keep;
    }
  }
  EXPECT_GT(kept_neg, 0);
  EXPECT_LT(kept_neg, neg);
}

TEST(FilterCli, KeptFractionOfNegativesIsWithinFourSigmaOfAlpha) {
  const std::string out = world->dir + "/kept.csv";
  const RunResult r =
      RunProgram({CliBinary(), "filter", "--server", world->server_a.target(), "--input",
                  world->log, "--output", out, "--json", "--batch-rows=3000"},
                 120);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.err);
  const ImpressionLog& log = world->impressions;
  uint64_t positives = 0;
  for (uint8_t l : log.labels) positives += l;
  const uint64_t negatives = log.size() - positives;
  EXPECT_EQ(j["rows"].get<uint64_t>(), log.size());
  EXPECT_EQ(j["positives"].get<uint64_t>(), positives);
  EXPECT_EQ(j["negatives"].get<uint64_t>(), negatives);
  // Every pair of the builder's input is EXACT, so the served mean over the
  // negative instances is the builder's alpha (exactly, up to float rounding).
  EXPECT_EQ(j["sources"]["exact"].get<uint64_t>(), log.size());
  EXPECT_NEAR(j["served_mean_rate_of_negatives"].get<double>(), kAlphaA, 1e-4);
  // Kept negatives are a sum of independent Bernoulli(rate_i) draws (hash of
  // distinct keys): mean alpha, sd sqrt(sum r(1-r))/n. Stated bound: 4 sd.
  const double kept = j["kept_fraction_of_negatives"].get<double>();
  const double bound = j["four_sigma_bound"].get<double>();
  EXPECT_GT(bound, 0.0);
  EXPECT_LT(bound, 0.05);
  EXPECT_LE(std::fabs(kept - kAlphaA), bound + 1e-4) << "kept " << kept << " bound " << bound;
  // The output: header + rate column, every positive, the kept negatives.
  std::ifstream in(out);
  std::string line;
  std::getline(in, line);
  EXPECT_EQ(line, "user_id,item_id,label,rate");
  uint64_t rows = 0, pos_rows = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, ',');
    ASSERT_EQ(f.size(), 4u) << line;
    pos_rows += f[2] == "1";
    ++rows;
  }
  EXPECT_EQ(pos_rows, positives);
  EXPECT_EQ(rows, j["rows_written"].get<uint64_t>());
  EXPECT_EQ(rows, positives + j["kept_negatives"].get<uint64_t>());
}

nlohmann::json Canary(std::vector<std::string> args, int expected_exit) {
  args.insert(args.begin(), {CliBinary(), "canary"});
  args.push_back("--json");
  const RunResult r = RunProgram(args, 120);
  EXPECT_EQ(r.exit_code, expected_exit) << r.err << r.out;
  if (r.exit_code != expected_exit) return nlohmann::json();
  std::cout << "canary " << args[2] << " ...:\n" << r.out << "\n";
  return nlohmann::json::parse(r.out);
}

void ExpectAllZero(const nlohmann::json& j) {
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["pass"], true);
  EXPECT_EQ(j["abs_delta"]["mean"].get<double>(), 0.0);
  EXPECT_EQ(j["abs_delta"]["p50"].get<double>(), 0.0);
  EXPECT_EQ(j["abs_delta"]["p99"].get<double>(), 0.0);
  EXPECT_EQ(j["abs_delta"]["max"].get<double>(), 0.0);
  EXPECT_EQ(j["fraction_over_threshold"].get<double>(), 0.0);
  EXPECT_EQ(j["ks_distance"].get<double>(), 0.0);
  EXPECT_EQ(j["source_changed"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["baseline"]["expected_kept_fraction"], j["candidate"]["expected_kept_fraction"]);
}

TEST(CanaryCli, IdenticalSnapshotsPassWithAllDeltasZero) {
  const nlohmann::json online =
      Canary({"--baseline", world->server_a.target(), "--candidate", world->server_a2.target(),
              "--sample-from", world->log, "--sample", "5000"},
             0);
  ExpectAllZero(online);
  EXPECT_EQ(online["pairs"].get<uint64_t>(), 5000u);
  EXPECT_EQ(online["kept_fraction_over"], "negative instances");
  const nlohmann::json offline =
      Canary({"--baseline-snapshot", world->root_a, "--candidate-snapshot", world->root_a2}, 0);
  ExpectAllZero(offline);
}

TEST(CanaryCli, DifferentAlphaFailsAndKeptFractionsMatchTheAlphas) {
  const nlohmann::json online =
      Canary({"--baseline", world->server_a.target(), "--candidate", world->server_b.target(),
              "--sample-from", world->log, "--sample", "100000000"},
             1);
  ASSERT_FALSE(online.is_null());
  EXPECT_EQ(online["pass"], false);
  EXPECT_EQ(online["pairs"].get<uint64_t>(), world->impressions.size());  // all instances
  // Over all negative instances of the builder's input the mean rate is alpha.
  EXPECT_NEAR(online["baseline"]["expected_kept_fraction"].get<double>(), kAlphaA, 1e-4);
  EXPECT_NEAR(online["candidate"]["expected_kept_fraction"].get<double>(), kAlphaB, 1e-4);
  EXPECT_GT(online["abs_delta"]["mean"].get<double>(), 0.01);
  EXPECT_GT(online["ks_distance"].get<double>(), 0.05);
  EXPECT_FALSE(online["violations"].empty());
  EXPECT_NE(online["baseline"]["version"], "");

  const nlohmann::json offline =
      Canary({"--baseline-snapshot", world->root_a, "--candidate-snapshot", world->root_b,
              "--sample-from", world->log, "--sample", "100000000"},
             1);
  ASSERT_FALSE(offline.is_null());
  EXPECT_EQ(offline["abs_delta"], online["abs_delta"]) << "offline scoring must equal the servers'";
  EXPECT_EQ(offline["ks_distance"], online["ks_distance"]);
  // Unseen and unknown pairs too: offline scoring (the server's BatchScorer)
  // gives the servers' INFERRED and DEFAULT answers.
  std::vector<uint64_t> users, items;
  const std::string pairs = Write("canary-pairs.csv", PairsCsv(&users, &items));
  const nlohmann::json mixed_online = Canary({"--baseline", world->server_a.target(), "--candidate",
                                              world->server_b.target(), "--pairs", pairs},
                                             1);
  const nlohmann::json mixed_offline =
      Canary({"--baseline-snapshot", world->root_a, "--candidate-snapshot", world->root_b,
              "--pairs", pairs},
             1);
  ASSERT_FALSE(mixed_online.is_null());
  ASSERT_FALSE(mixed_offline.is_null());
  EXPECT_EQ(mixed_online["kept_fraction_over"], "pairs (labels unknown)");
  EXPECT_GE(mixed_online["baseline"]["source_mix"]["default"].get<uint64_t>(), 2u);
  EXPECT_GE(mixed_online["baseline"]["source_mix"]["inferred"].get<uint64_t>(), 1u);
  EXPECT_EQ(mixed_offline["baseline"]["source_mix"], mixed_online["baseline"]["source_mix"]);
  EXPECT_EQ(mixed_offline["candidate"]["source_mix"], mixed_online["candidate"]["source_mix"]);
  EXPECT_EQ(mixed_offline["abs_delta"], mixed_online["abs_delta"]);
  EXPECT_EQ(mixed_offline["baseline"]["expected_kept_fraction"],
            mixed_online["baseline"]["expected_kept_fraction"]);
  // A generous limit set turns the same comparison into a pass.
  Canary({"--baseline-snapshot", world->root_a, "--candidate-snapshot", world->root_b,
          "--max-mean-delta=1", "--max-p99-delta=1", "--max-ks=1", "--max-fraction-over=1"},
         0);
}

TEST(CanaryCli, BadInvocationsExitTwo) {
  RunResult r = RunProgram({CliBinary(), "canary", "--baseline", world->server_a.target()}, 60);
  EXPECT_EQ(r.exit_code, 2);
  r = RunProgram({CliBinary(), "canary", "--baseline-snapshot", world->root_a,
                  "--candidate-snapshot", world->dir + "/nope"},
                 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("nope"), std::string::npos) << r.err;
  r = RunProgram({CliBinary(), "canary", "--baseline", world->server_a.target(), "--candidate",
                  world->server_b.target()},
                 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--pairs"), std::string::npos) << r.err;
}

// Messages that name the flag at fault: a NaN limit, --default-policy with
// servers (only offline uses it), a bad --default-policy (its name once).
TEST(CanaryCli, BadLimitsAndPolicyNameTheirFlag) {
  const std::string pairs = Write("canary-pairs.csv", "user_id,item_id\n1,2\n");
  const std::vector<std::string> online = {CliBinary(),   "canary",
                                           "--baseline",  world->server_a.target(),
                                           "--candidate", world->server_b.target(),
                                           "--input",     pairs};
  for (const char* flag :
       {"--max-ks", "--max-mean-delta", "--max-p99-delta", "--max-fraction-over"}) {
    std::vector<std::string> argv = online;
    argv.insert(argv.end(), {flag, "nan"});
    RunResult r = RunProgram(argv, 60);
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.err.find(flag), std::string::npos) << r.err;
  }
  std::vector<std::string> argv = online;
  argv.insert(argv.end(), {"--default-policy", "node-mean"});
  RunResult r = RunProgram(argv, 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--default-policy"), std::string::npos) << r.err;
  r = RunProgram(
      {CliBinary(), "canary", "--baseline-snapshot", world->root_a, "--candidate-snapshot",
       world->root_b, "--input", pairs, "--default-policy", "1.5"},
      60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--default-policy"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("--default-policy: --default-policy"), std::string::npos) << r.err;
}

// filter's column errors name the flag that chose the column, and a wrong
// --delimiter shows the header as it split it and the delimiter that works.
TEST(FilterCli, ColumnErrorsNameTheFlagAndSuggestTheDelimiter) {
  const std::string log = Write("filter-cols.csv", "user_id,item_id,label\n1,2,0\n");
  RunResult r = RunProgram({CliBinary(), "filter", "--server", world->server_a.target(), "--input",
                            log, "--label-rule", "nosuch > 3"},
                           60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("(--label-rule)"), std::string::npos) << r.err;
  r = RunProgram({CliBinary(), "filter", "--server", world->server_a.target(), "--input", log,
                  "--delimiter", "tab"},
                 60);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'user_id,item_id,label'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("--delimiter comma"), std::string::npos) << r.err;
}

// filter reads stdin when --input is not given, as its help says.
TEST(FilterCli, InputDefaultsToStdinAsTheHelpSays) {
  RunResult r = RunProgram({CliBinary(), "filter", "--help"}, 60);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("'-' = stdin, the default"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("impression log (required)"), std::string::npos) << r.out;
  const std::string log = Write("filter-stdin.csv", "user_id,item_id,label\n1,2,1\n");
  r = RunProgram({CliBinary(), "filter", "--server", world->server_a.target()}, 60, log);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("user_id,item_id,label,rate\n1,2,1,", 0), 0u) << r.out;
}

// pin --help says what pin does: a failed call exits 2 (as below), --server
// has a default (the operator socket), and PinVersion is named once.
TEST(PinCli, HelpMatchesTheBehaviour) {
  RunResult r = RunProgram({CliBinary(), "pin", "--help"}, 60);
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("2 error (bad flags, or the PinVersion call failed"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find(", 1 "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("(required)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(default: unix:/tmp/graphsieve-operator-50051.sock)"), std::string::npos)
      << r.out;
  EXPECT_EQ(r.out.find("Calls PinVersion."), std::string::npos) << r.out;
  // A failed call: nothing listens on port 1.
  r = RunProgram(
      {CliBinary(), "pin", "--server", "127.0.0.1:1", "--version", "v", "--max-attempts=1"}, 60);
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// `graphsieve pin` against its own server (pins do not disturb the other
// tests) on a root with two versions: alpha 0.2, then 0.1 (CURRENT).
TEST(PinCli, PinsTheOlderVersionUnpinsAndNamesBadFlags) {
  const std::string root = world->dir + "/root-pin";
  for (double alpha : {kAlphaA, kAlphaB}) {
    const absl::Status s = testing::BuildSnapshot(world->log, root, alpha);
    ASSERT_TRUE(s.ok()) << s;
  }
  ServerProcess server;
  ASSERT_TRUE(server.Start(root, 0).ok());
  const auto client = Client(server.target());
  const auto before = client->GetStatus();  // Start waited for the first version
  ASSERT_TRUE(before.ok()) << before.status();
  ASSERT_TRUE(before->serving()) << before->DebugString();
  ASSERT_EQ(before->versions_on_disk_size(), 2) << before->DebugString();
  const std::string newer = before->current_on_disk();
  ASSERT_EQ(before->active().version(), newer);
  const std::string older = before->versions_on_disk(0) == newer ? before->versions_on_disk(1)
                                                                 : before->versions_on_disk(0);
  ASSERT_NE(older, newer);
  auto pin = [&](std::vector<std::string> flags) {
    // The operator listener: the server's default unix socket (server/options.h).
    const std::string op = absl::StrCat("unix:/tmp/graphsieve-operator-", server.port(), ".sock");
    flags.insert(flags.begin(), {CliBinary(), "pin", "--server", op});
    return RunProgram(flags, 60);
  };

  RunResult r = pin({"--version", older});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, absl::StrCat("active version         ", older, "\npinned version         ",
                                older, "\n"));
  auto status = client->GetStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->active().version(), older);
  EXPECT_EQ(status->pinned_version(), older);
  EXPECT_NEAR(status->active().alpha(), kAlphaA, 1e-12);

  r = pin({"--unpin"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("pinned version         no (following CURRENT)"), std::string::npos)
      << r.out;
  status = client->GetStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->pinned_version(), "");
  // --reject-active with --unpin: roll back from the older version to CURRENT now.
  r = pin({"--unpin", "--reject-active"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  status = client->GetStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->active().version(), newer);
  EXPECT_EQ(std::vector<std::string>(status->rejected_versions().begin(),
                                     status->rejected_versions().end()),
            std::vector<std::string>{older});

  // The server refuses a version it does not have: exit 2 (an error, as in
  // every command), with its code and message.
  const std::string missing = "20000101T000000Z-00000000";
  r = pin({"--version", missing});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("[NOT_FOUND]"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(missing), std::string::npos) << r.err;
  // Neither or both of --version / --unpin: exit 2 naming both flags, no RPC.
  for (const std::vector<std::string>& flags :
       {std::vector<std::string>{}, std::vector<std::string>{"--version", older, "--unpin"}}) {
    r = pin(flags);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--version"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("--unpin"), std::string::npos) << r.err;
  }
  status = client->GetStatus();
  ASSERT_TRUE(status.ok()) << status.status();
  EXPECT_EQ(status->active().version(), newer);
  EXPECT_EQ(status->pinned_version(), "");
}

// Runs last (gtest keeps file order): restarts server A on the same port.
TEST(ServerRestart, ClientRetriesThroughIt) {
  const int port = world->server_a.port();
  SamplingRateClientOptions options;
  options.target = world->server_a.target();
  options.max_attempts = 200;  // bounded: ~60 s of retries (the restart may be slow under load)
  options.initial_backoff_seconds = 0.05;
  options.max_backoff_seconds = 0.3;
  options.deadline_seconds = 5;
  auto client = *SamplingRateClient::Create(options);
  std::vector<uint64_t> users = {world->impressions.user_ids[0]};
  std::vector<uint64_t> items = {world->impressions.item_ids[0]};
  auto before = client->GetRates(users, items);
  ASSERT_TRUE(before.ok()) << before.status();
  EXPECT_EQ(world->server_a.Stop(), 0) << "SIGTERM drains and exits 0";
  absl::Status restarted;
  // Restarts once the call below has failed at least once (a state, not a
  // timer: docs/RELIABILITY.md, "No flaky tests"); bounded: 60 s.
  std::thread restart([&] {
    for (int k = 0; k < 6000 && client->total_retries() < 1; ++k) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    restarted = world->server_a.Start(world->root_a, port);
  });
  auto after = client->GetRates(users, items);  // fails over and over until the restart
  restart.join();
  ASSERT_TRUE(restarted.ok()) << restarted;
  ASSERT_TRUE(after.ok()) << after.status();
  EXPECT_GE(after->retries, 1);
  EXPECT_EQ(after->rates, before->rates);
  EXPECT_EQ(after->snapshot_versions, before->snapshot_versions);
  EXPECT_GE(client->total_retries(), 1u);

  // With retries off the same outage is an UNAVAILABLE error naming the target.
  options.max_attempts = 1;
  auto no_retry = *SamplingRateClient::Create(options);
  world->server_a.Stop();
  auto failed = no_retry->GetRates(users, items);
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(failed.status().message().find(options.target), std::string::npos);
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  ::testing::AddGlobalTestEnvironment(new graphsieve::ClientWorld());
  return graphsieve::testing::WorldExitCode(RUN_ALL_TESTS());
}
