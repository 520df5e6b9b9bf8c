// Deltas over a partitioned base (core/offline/delta_build.h, docs/DESIGN.md
// "Delta versions"): the same logs built once unpartitioned and once in three
// parts; each part of the partitioned base + delta answers every pair and
// node of its users, and every item, exactly as the unpartitioned base +
// delta; a delta part whose users logged nothing new stores no pairs and
// still carries the items' new records; --partitions other than the base's is
// refused; a delta in another part count than its base's is refused at load
// (VersionOpener::Open, the server's manager, `graphsieve canary`) naming both.
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/io/log_reader.h"
#include "core/io/partition.h"
#include "core/maec/pair_table.h"
#include "core/offline/build_job.h"
#include "core/offline/build_stages.h"
#include "core/offline/delta_build.h"
#include "core/offline/delta_records.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "core/snapshot/partitioned_snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/snapshot_manager.h"
#include "tests/builder/builder_test_util.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::graphsieve::testing::ScopedTempDir;

constexpr uint32_t kParts = 3;
constexpr uint32_t kQuietPart = 2;  // the first delta's part without new impressions

// Users 0..299 over items 0..399, 25 impressions each, 1 in 6 positive.
void WriteBaseLog(const std::string& path) {
  std::mt19937_64 rng(1);
  std::ofstream out(path);
  out << "user_id,item_id,label\n";
  for (int u = 0; u < 300; ++u) {
    for (int k = 0; k < 25; ++k) {
      out << u << "," << (u * 7 + k * 13 + rng() % 5) % 400 << "," << (rng() % 6 == 0) << "\n";
    }
  }
}

// The later log: new users (ids from 100000) on base and new items (ids from
// 5000), base users again on new items and old ones, positives among both.
// With `skip_quiet_part`, no user of kQuietPart logs anything.
void WriteDeltaLog(const std::string& path, bool skip_quiet_part) {
  std::mt19937_64 rng(2);
  std::ofstream out(path);
  out << "user_id,item_id,label\n";
  auto row = [&](uint64_t user, uint64_t item, bool label) {
    if (skip_quiet_part && PartitionOfUser(user, kParts) == kQuietPart) return;
    out << user << "," << item << "," << label << "\n";
  };
  for (int u = 0; u < 40; ++u) {
    for (int k = 0; k < 12; ++k) row(100000 + u, (u * 11 + k * 17) % 400, k < 2);
    row(100000 + u, 5000 + u % 15, u % 3 == 0);
  }
  for (int u = 0; u < 60; ++u) {
    row(u, 5000 + (u * 7) % 15, u % 4 == 0);
    row(u, rng() % 400, rng() % 5 == 0);
  }
}

BuildOptions Options(const std::string& log, const std::string& root, int partitions) {
  BuildOptions o;
  o.inputs = {log};
  o.snapshot_root = root;
  o.keep_versions = 10;
  o.partitions = partitions;
  o.pipeline.sketch_dim = 16;
  o.pipeline.seed = 7;
  o.pipeline.threads = 1;
  return o;
}

DeltaBuildOptions DeltaOptions(const std::string& log, const std::string& root) {
  DeltaBuildOptions d;
  d.build = Options(log, root, 1);
  return d;
}

// The same logs built unpartitioned (single) and in kParts parts (parts): a
// base, then a delta of the log without kQuietPart's users, then a delta of
// the whole later log (cumulative: the second replaces the first).
struct Fixture {
  ScopedTempDir dir;
  std::string base_log = dir.path() + "/base.csv", quiet_log = dir.path() + "/quiet.csv",
              delta_log = dir.path() + "/delta.csv";
  std::string single = dir.path() + "/single", parts = dir.path() + "/parts";
  std::string single_base, parts_base, single_quiet, parts_quiet, single_delta, parts_delta;
  Fixture() {
    WriteBaseLog(base_log);
    WriteDeltaLog(quiet_log, /*skip_quiet_part=*/true);
    WriteDeltaLog(delta_log, /*skip_quiet_part=*/false);
    single_base = Full(single, 1);
    parts_base = Full(parts, kParts);
    single_quiet = Delta(quiet_log, single, 1);
    parts_quiet = Delta(quiet_log, parts, kParts);
    single_delta = Delta(delta_log, single, 1);
    parts_delta = Delta(delta_log, parts, kParts);
  }
  std::string Full(const std::string& root, int partitions) {
    auto r = RunBuild(Options(base_log, root, partitions), BuildObserver());
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->version : "";
  }
  std::string Delta(const std::string& log, const std::string& root, uint32_t want_parts) {
    auto r = RunDeltaBuild(DeltaOptions(log, root), BuildObserver());
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return "";
    EXPECT_EQ(r->partitions, want_parts);
    return r->version;
  }
};

std::shared_ptr<const SnapshotReader> Open(const std::string& root, const std::string& version,
                                           int partition) {
  SnapshotReaderOptions o;
  o.partition = partition;
  auto r = VersionOpener().Open(root, version, o);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : nullptr;
}

// Every id of both logs plus some nobody logged.
struct Ids {
  std::set<uint64_t> users, items;
};
Ids AllIds(const Fixture& f) {
  Ids ids;
  for (const std::string& log : {f.base_log, f.delta_log}) {
    ImpressionLog l;
    EXPECT_TRUE(ReadImpressionLog(log, LogReaderOptions(), &l).ok());
    ids.users.insert(l.user_ids.begin(), l.user_ids.end());
    ids.items.insert(l.item_ids.begin(), l.item_ids.end());
  }
  ids.users.insert(777777);
  ids.items.insert(888888);
  return ids;
}

void ExpectSameNode(const SnapshotReader& want, const SnapshotReader& got, bool item, uint64_t id) {
  NodeView a, b;
  const bool fa = want.FindNode(item, id, &a), fb = got.FindNode(item, id, &b);
  ASSERT_EQ(fa, fb) << (item ? "item " : "user ") << id;
  if (!fa) return;
  EXPECT_EQ(a.record.component, b.record.component) << id;
  EXPECT_EQ(a.record.degree, b.record.degree) << id;
  EXPECT_EQ(a.record.sum_uncertainty, b.record.sum_uncertainty) << id;
  EXPECT_EQ(a.record.sum_score, b.record.sum_score) << id;
  EXPECT_EQ(a.record.mean_rate, b.record.mean_rate) << id;
  EXPECT_EQ(a.record.positives, b.record.positives) << id;
  EXPECT_EQ(a.record.impressions, b.record.impressions) << id;
  EXPECT_EQ(std::vector<float>(a.sketch.begin(), a.sketch.end()),
            std::vector<float>(b.sketch.begin(), b.sketch.end()))
      << id;
}

// Part p of the partitioned delta against the unpartitioned one: every pair
// of p's users with every item, every node of p's users, every item.
void ExpectPartsAnswerAsTheWhole(const Fixture& f, const std::string& single_version,
                                 const std::string& parts_version) {
  const Ids ids = AllIds(f);
  std::shared_ptr<const SnapshotReader> whole = Open(f.single, single_version, -1);
  ASSERT_NE(whole, nullptr);
  size_t found_pairs = 0;
  for (uint32_t p = 0; p < kParts; ++p) {
    SCOPED_TRACE(absl::StrCat("part ", p));
    std::shared_ptr<const SnapshotReader> part = Open(f.parts, parts_version, p);
    ASSERT_NE(part, nullptr);
    EXPECT_EQ(part->manifest().num_partitions, kParts);
    EXPECT_EQ(part->manifest().partition, p);
    std::vector<uint64_t> us, is;
    for (uint64_t u : ids.users) {
      if (PartitionOfUser(u, kParts) != p) continue;
      ExpectSameNode(*whole, *part, false, u);
      for (uint64_t i : ids.items) us.push_back(u), is.push_back(i);
    }
    for (uint64_t i : ids.items) ExpectSameNode(*whole, *part, true, i);
    std::unique_ptr<bool[]> fa(new bool[us.size()]), fb(new bool[us.size()]);
    std::vector<float> ra(us.size()), rb(us.size());
    ASSERT_TRUE(
        whole->LookupPairs(us, is, absl::MakeSpan(fa.get(), us.size()), absl::MakeSpan(ra)).ok());
    ASSERT_TRUE(
        part->LookupPairs(us, is, absl::MakeSpan(fb.get(), us.size()), absl::MakeSpan(rb)).ok());
    size_t mismatches = 0;
    for (size_t k = 0; k < us.size(); ++k) {
      if (fa[k] != fb[k] || (fa[k] && ra[k] != rb[k])) {
        if (++mismatches <= 5) {
          ADD_FAILURE() << "(" << us[k] << ", " << is[k] << "): whole " << fa[k] << "/" << ra[k]
                        << ", part " << fb[k] << "/" << rb[k];
        }
      }
      found_pairs += fa[k];
    }
    EXPECT_EQ(mismatches, 0u);
  }
  EXPECT_GT(found_pairs, 7000u);  // the base's pairs and the delta's
}

TEST(PartitionedDeltaTest, EachPartAnswersAsTheUnpartitionedBasePlusDelta) {
  Fixture f;
  ExpectPartsAnswerAsTheWhole(f, f.single_delta, f.parts_delta);
  // The delta's records are the ones the unpartitioned build computed: new
  // users and items (INFERRED answers), not only stored pairs.
  auto store = SnapshotStore::Create({f.parts});
  ASSERT_TRUE(store.ok());
  auto m = ReadPublishedManifest(**store, f.parts_delta);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->base_version, f.parts_base);
  const nlohmann::json j = nlohmann::json::parse(m->json);
  EXPECT_EQ(j["delta"]["new_users"], 40);
  EXPECT_EQ(j["delta"]["new_items"], 15);
  EXPECT_EQ(j["parameters"]["partitions"], kParts);
}

TEST(PartitionedDeltaTest, APartWhoseUsersLoggedNothingNewCarriesTheItems) {
  Fixture f;
  ExpectPartsAnswerAsTheWhole(f, f.single_quiet, f.parts_quiet);
  std::shared_ptr<const SnapshotReader> quiet = Open(f.parts, f.parts_quiet, kQuietPart);
  ASSERT_NE(quiet, nullptr);
  const auto& layers = static_cast<const LayeredSnapshotReader&>(*quiet);
  EXPECT_EQ(layers.delta().manifest().pairs, 0u);
  EXPECT_EQ(layers.delta().manifest().users, 0u);
  EXPECT_GT(layers.delta().manifest().items, 15u);  // every item the delta touched
  // A new item is known to the quiet part through the delta alone.
  NodeView view;
  EXPECT_FALSE(layers.base().FindNode(true, 5000, &view));
  EXPECT_TRUE(quiet->FindNode(true, 5000, &view));
}

TEST(PartitionedDeltaTest, PartitionsOtherThanTheBasesAreRefusedNamingBoth) {
  Fixture f;
  DeltaBuildOptions d = DeltaOptions(f.delta_log, f.parts);
  d.partitions = 2;
  auto r = RunDeltaBuild(d, BuildObserver());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), "--partitions=2")) << r.status();
  EXPECT_TRUE(absl::StrContains(r.status().message(), f.parts_base + " is written in 3 parts"))
      << r.status();
  d.partitions = 3;  // the base's count, given explicitly
  auto ok = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->partitions, 3u);

  // The binary: --partitions=1 over the 3-part base; nothing published.
  auto bin = testing_util::RunBuildBinary(
      {"--input=" + f.delta_log, "--snapshot_root=" + f.parts, "--delta_of=CURRENT",
       "--sketch_dim=16", "--seed=7", "--partitions=1", "--quiet"},
      f.dir.path());
  EXPECT_EQ(bin.exit_code, 1);
  EXPECT_TRUE(absl::StrContains(bin.err, "--partitions=1")) << bin.err;
  EXPECT_TRUE(absl::StrContains(bin.err, f.parts_base + " is written in 3 parts")) << bin.err;
  auto store = SnapshotStore::Create({f.parts});
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->ReadCurrent(), ok->version);
}

// A delta written by hand in `parts` parts over the 3-part base (the builder
// never writes one): its records computed as the builder computes them.
std::string PublishMismatchedDelta(const Fixture& f, uint32_t parts) {
  auto store = SnapshotStore::Create({f.parts});
  EXPECT_TRUE(store.ok());
  auto base = VersionOpener().OpenAllParts(**store, f.parts_base, SnapshotReaderOptions());
  EXPECT_TRUE(base.ok()) << base.status();
  ImpressionLog log;
  EXPECT_TRUE(ReadImpressionLog(f.delta_log, LogReaderOptions(), &log).ok());
  auto fresh = BuildPairTable(log, 1);
  EXPECT_TRUE(fresh.ok()) << fresh.status();
  const nlohmann::json params = nlohmann::json::parse((*base)->manifest().json)["parameters"];
  DeltaRecordOptions ro;  // as the builder reads the base's row layout
  ro.sketch_columns = params["sketch_columns"];
  ro.control_variate = params["unseen_control_variate"] && params["method"] == "maec";
  auto d = ComputeDeltaRecords(**base, *fresh, ro);
  EXPECT_TRUE(d.ok()) << d.status();
  snapshot::ManifestInfo info = build_internal::MakeManifestInfo(
      Options(f.delta_log, f.parts, static_cast<int>(parts)), absl::Now(), log, {});
  info.delta = {{"base_version", f.parts_base}, {"covers_through", "2026-01-01T00:00:00Z"}};
  auto lock = (*store)->AcquirePublishLock(0);
  EXPECT_TRUE(lock.ok());
  info.version = (*store)->NewVersionId(**lock, absl::Now(), 99);
  SnapshotWriterOptions wo;
  wo.allow_no_pairs = true;
  auto w = WriteVersionDir((*store)->TempDir(info.version), d->pairs, d->result, info, wo, parts);
  EXPECT_TRUE(w.ok()) << w.status();
  EXPECT_TRUE((*store)->Publish(**lock, info.version).ok());
  return info.version;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(PartitionedDeltaTest, ADeltaInAnotherPartCountThanItsBaseIsRefusedAtLoad) {
  Fixture f;
  for (uint32_t parts : {2u, 1u}) {
    SCOPED_TRACE(absl::StrCat(parts, " parts"));
    const std::string bad = PublishMismatchedDelta(f, parts);
    const std::string names_both =
        absl::StrCat("delta version ", bad, " is written in ", parts,
                     parts == 1 ? " part" : " parts", ", its base ", f.parts_base, " in 3");
    // Opened as a part (a partitioned server) and whole (an unpartitioned one).
    for (int partition : {0, 1, -1}) {
      SnapshotReaderOptions o;
      o.partition = partition;
      auto r = VersionOpener().Open(f.parts, bad, o);
      ASSERT_FALSE(r.ok()) << partition;
      EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
      EXPECT_TRUE(absl::StrContains(r.status().message(), names_both)) << r.status();
    }
    // The server's manager (its default loader) refuses CURRENT and keeps
    // serving the delta it had.
    SnapshotManagerOptions mo;
    mo.root = f.parts;
    mo.poll_interval_seconds = -1;
    mo.pin_version = f.parts_delta;
    mo.reader.partition = 1;
    auto manager = SnapshotManager::Create(mo);
    ASSERT_TRUE(manager.ok()) << manager.status();
    ASSERT_TRUE((*manager)->Pin(f.parts_delta, false).ok());
    absl::Status swap = (*manager)->Pin(bad, false);
    EXPECT_EQ(swap.code(), absl::StatusCode::kFailedPrecondition) << swap;
    EXPECT_TRUE(absl::StrContains(swap.message(), names_both)) << swap;
    EXPECT_EQ((*manager)->Current()->version, f.parts_delta);
    // The canary opens the candidate as a server does.
    const std::string out = f.dir.path() + "/canary.err";
    const std::string cmd =
        absl::StrCat(GRAPHSIEVE_CLI_BINARY, " canary --baseline-snapshot=", f.parts, "/",
                     f.parts_base, " --candidate-snapshot=", f.parts, "/", bad, " 2>", out);
    EXPECT_NE(std::system(cmd.c_str()), 0);
    EXPECT_TRUE(absl::StrContains(ReadAll(out), names_both)) << ReadAll(out);
  }
}

}  // namespace
}  // namespace graphsieve
