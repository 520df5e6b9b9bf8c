// The serving index file (index.gsi, docs/SNAPSHOT.md "The serving index
// file"): the builder writes it, the reader maps it instead of scanning
// RocksDB, every pair and node reads back exactly as the RocksDB store holds
// them, a flipped byte anywhere in it is rejected, and versions written
// without it still load (index built in memory).
#include <sys/stat.h>

#include <fstream>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/match.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/snapshot_reader_internal.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "tests/snapshot/synthetic.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::graphsieve::testing::ScopedTempDir;
using testing_util::MakeSynthetic;
using testing_util::Synthetic;

std::string Publish(const std::string& root, Synthetic& s, bool write_index) {
  SnapshotWriterOptions options;
  options.write_index = write_index;
  absl::StatusOr<std::string> version = testing_util::PublishSynthetic(root, s, options, 7);
  EXPECT_TRUE(version.ok()) << version.status();
  return version.value_or("");
}

std::shared_ptr<const SnapshotReader> OpenOk(const std::string& root, const std::string& version,
                                             LookupMode mode) {
  SnapshotReaderOptions options;
  options.lookup = mode;
  auto reader = VersionOpener().OpenStored(root, version, options);
  EXPECT_TRUE(reader.ok()) << reader.status();
  return reader.ok() ? *reader : nullptr;
}

// Every stored pair, absent pairs of each kind, and every node agree between
// `a` and the RocksDB reader `b`.
void ExpectSameAnswers(const Synthetic& s, const SnapshotReader& a, const SnapshotReader& b) {
  std::vector<uint64_t> users, items;
  for (size_t i = 0; i < s.pairs.num_pairs(); ++i) {
    users.push_back(s.pairs.user_ids[s.pairs.pair_user[i]]);
    items.push_back(s.pairs.item_ids[s.pairs.pair_item[i]]);
  }
  for (uint64_t u : s.pairs.user_ids) {  // unseen pairs of known nodes, unknown items
    users.push_back(u);
    items.push_back(s.pairs.item_ids[u % s.pairs.item_ids.size()]);
    users.push_back(u);
    items.push_back(12345);
  }
  users.push_back(999);  // unknown user
  items.push_back(s.pairs.item_ids[0]);
  const size_t n = users.size();
  std::unique_ptr<bool[]> fa(new bool[n]), fb(new bool[n]);
  std::vector<float> ra(n), rb(n);
  ASSERT_TRUE(a.LookupPairs(users, items, absl::MakeSpan(fa.get(), n), absl::MakeSpan(ra)).ok());
  ASSERT_TRUE(b.LookupPairs(users, items, absl::MakeSpan(fb.get(), n), absl::MakeSpan(rb)).ok());
  for (size_t i = 0; i < n; ++i) {
    ASSERT_EQ(fa[i], fb[i]) << "pair " << i;
    ASSERT_EQ(ra[i], rb[i]) << "pair " << i;
    if (i < s.pairs.num_pairs()) {
      ASSERT_TRUE(fa[i]) << "stored pair " << i;
    }
  }
  for (int side = 0; side < 2; ++side) {
    for (uint64_t id : side ? s.pairs.item_ids : s.pairs.user_ids) {
      NodeView va, vb;
      ASSERT_TRUE(a.FindNode(side == 1, id, &va));
      ASSERT_TRUE(b.FindNode(side == 1, id, &vb));
      EXPECT_EQ(va.record.degree, vb.record.degree);
      EXPECT_EQ(va.record.mean_rate, vb.record.mean_rate);
      EXPECT_EQ(va.record.sum_score, vb.record.sum_score);
      EXPECT_EQ(std::vector<float>(va.sketch.begin(), va.sketch.end()),
                std::vector<float>(vb.sketch.begin(), vb.sketch.end()));
    }
  }
  EXPECT_EQ(a.model().alpha, b.model().alpha);
  EXPECT_EQ(a.model().sketch_dim, b.model().sketch_dim);
}

TEST(IndexFileTest, MappedIndexAnswersExactlyAsTheRocksDbStore) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(150, 400, 30, 11);
  const std::string version = Publish(dir.path(), s, /*write_index=*/true);
  auto mapped = OpenOk(dir.path(), version, LookupMode::kMemory);
  auto rocks = OpenOk(dir.path(), version, LookupMode::kRocksDb);
  ASSERT_NE(mapped, nullptr);
  ASSERT_NE(rocks, nullptr);
  EXPECT_TRUE(mapped->load_stats().index_mapped);
  ASSERT_NE(ServingIndex(*mapped), nullptr);
  EXPECT_TRUE(ServingIndex(*mapped)->mapped());
  EXPECT_GT(mapped->manifest().index_bytes, 0u);
  ExpectSameAnswers(s, *mapped, *rocks);
  // ForEachPair opens the RocksDB side on first use.
  size_t n = 0;
  ASSERT_TRUE(mapped->ForEachPair([&](uint64_t, uint64_t, float) { ++n; }).ok());
  EXPECT_EQ(n, s.pairs.num_pairs());
}

// The server's version profiler scans every version it adopts through
// ForEachPair; on a mapped version that opens RocksDB for the scan alone, and
// opens the pairs tables without their Bloom filters (an iteration never
// reads them): 10 bits a pair the scan does not load (docs/SERVER.md
// "Memory during a swap").
TEST(IndexFileTest, AScanOnlyOpenLoadsNoBloomFilter) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(150, 400, 30, 11);
  const std::string version = Publish(dir.path(), s, /*write_index=*/true);
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store = SnapshotStore::Create({dir.path(), false});
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<std::string> vdir = (*store)->PublishedVersionDir(version);
  ASSERT_TRUE(vdir.ok()) << vdir.status();
  uint64_t readers_bytes[2] = {0, 0};
  for (bool scan_only : {false, true}) {
    auto db =
        snapshot_internal::OpenRocksDb(*vdir, snapshot::TableFormat::kBlockBased,
                                       SnapshotReaderOptions(), /*open_dbs=*/nullptr, scan_only);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->db->GetIntProperty((*db)->handles[1], "rocksdb.estimate-table-readers-mem",
                                          &readers_bytes[scan_only]));
  }
  // A Bloom filter of 10 bits a key holds at least a byte a pair.
  EXPECT_GE(readers_bytes[0], readers_bytes[1] + s.pairs.num_pairs())
      << "with filters " << readers_bytes[0] << " bytes, scan only " << readers_bytes[1];
  // The scan through the mapped reader still sees every pair, in key order.
  auto mapped = OpenOk(dir.path(), version, LookupMode::kMemory);
  auto rocks = OpenOk(dir.path(), version, LookupMode::kRocksDb);
  ASSERT_NE(mapped, nullptr);
  ASSERT_NE(rocks, nullptr);
  std::vector<std::tuple<uint64_t, uint64_t, float>> a, b;
  ASSERT_TRUE(
      mapped->ForEachPair([&](uint64_t u, uint64_t i, float r) { a.emplace_back(u, i, r); }).ok());
  ASSERT_TRUE(
      rocks->ForEachPair([&](uint64_t u, uint64_t i, float r) { b.emplace_back(u, i, r); }).ok());
  EXPECT_EQ(a.size(), s.pairs.num_pairs());
  EXPECT_EQ(a, b);
}

// MapFileOptions::huge_pages changes how the file is brought into memory
// (page cache dropped, read through an advised mapping), never an answer.
TEST(IndexFileTest, MappedIndexAnswersTheSameWithAndWithoutHugePages) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(150, 400, 30, 13);
  const std::string version = Publish(dir.path(), s, /*write_index=*/true);
  auto rocks = OpenOk(dir.path(), version, LookupMode::kRocksDb);
  ASSERT_NE(rocks, nullptr);
  for (bool huge : {true, false, true}) {
    SnapshotReaderOptions options;
    options.index_huge_pages = huge;
    auto mapped = VersionOpener().OpenStored(dir.path(), version, options);
    ASSERT_TRUE(mapped.ok()) << mapped.status();
    EXPECT_TRUE((*mapped)->load_stats().index_mapped) << huge;
    ExpectSameAnswers(s, **mapped, *rocks);
  }
}

TEST(IndexFileTest, VersionWithoutIndexFileBuildsTheIndexOnLoad) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(80, 200, 20, 12);
  const std::string version = Publish(dir.path(), s, /*write_index=*/false);
  struct stat st;
  EXPECT_NE(::stat((dir.path() + "/" + version + "/index.gsi").c_str(), &st), 0);
  auto built = OpenOk(dir.path(), version, LookupMode::kMemory);
  auto rocks = OpenOk(dir.path(), version, LookupMode::kRocksDb);
  ASSERT_NE(built, nullptr);
  EXPECT_FALSE(built->load_stats().index_mapped);
  EXPECT_FALSE(ServingIndex(*built)->mapped());
  ExpectSameAnswers(s, *built, *rocks);
}

// The builder lays regions out in key order and says so in the manifest
// (storage.serving_index.region_order, docs/SNAPSHOT.md "Ordered regions");
// the reader probes by what the manifest says. A manifest without the field
// (a version written before it) is probed plainly, which reads a key-ordered
// file whole too; an order this reader does not know is refused by name.
TEST(IndexFileTest, TheManifestStatesTheRegionOrderAndTheReaderProbesByIt) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(150, 400, 30, 17);
  const std::string version = Publish(dir.path(), s, /*write_index=*/true);
  const std::string manifest_path = dir.path() + "/" + version + "/MANIFEST.json";
  auto rocks = OpenOk(dir.path(), version, LookupMode::kRocksDb);
  ASSERT_NE(rocks, nullptr);
  auto text = snapshot::ReadFileToString(manifest_path);
  ASSERT_TRUE(text.ok());
  nlohmann::json m = nlohmann::json::parse(*text);
  EXPECT_EQ(m["storage"]["serving_index"]["region_order"], "key");
  auto mapped = OpenOk(dir.path(), version, LookupMode::kMemory);
  ASSERT_NE(mapped, nullptr);
  EXPECT_EQ(ServingIndex(*mapped)->region_order(), RegionOrder::kKeyOrdered);
  ExpectSameAnswers(s, *mapped, *rocks);

  m["storage"]["serving_index"].erase("region_order");
  ASSERT_TRUE(snapshot::WriteFileAtomic(manifest_path, m.dump(2)).ok());
  auto plain = OpenOk(dir.path(), version, LookupMode::kMemory);
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(ServingIndex(*plain)->region_order(), RegionOrder::kInsertion);
  ExpectSameAnswers(s, *plain, *rocks);

  m["storage"]["serving_index"]["region_order"] = "hashed";
  ASSERT_TRUE(snapshot::WriteFileAtomic(manifest_path, m.dump(2)).ok());
  auto unknown = VersionOpener().OpenStored(dir.path(), version, SnapshotReaderOptions());
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(
      absl::StrContains(unknown.status().message(), "storage.serving_index.region_order 'hashed'"))
      << unknown.status();
}

// Flips one byte of index.gsi at `offset`.
void FlipByte(const std::string& path, std::streamoff offset) {
  std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
  ASSERT_TRUE(f.good()) << path;
  f.seekg(offset);
  char c;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 0x01);
  f.seekp(offset);
  f.write(&c, 1);
}

TEST(IndexFileTest, AFlippedByteAnywhereInTheIndexFileIsRejected) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(60, 100, 10, 13);
  const std::string version = Publish(dir.path(), s, true);
  const std::string path = dir.path() + "/" + version + "/index.gsi";
  auto digest = snapshot::DigestFile(path);
  ASSERT_TRUE(digest.ok());
  // Header, a node section, the last byte (slots or model text).
  for (std::streamoff offset : {std::streamoff{9}, std::streamoff{4096 + 3},
                                static_cast<std::streamoff>(digest->size_bytes) - 1}) {
    FlipByte(path, offset);
    SnapshotReaderOptions options;
    auto reader = VersionOpener().OpenStored(dir.path(), version, options);
    ASSERT_FALSE(reader.ok()) << "offset " << offset;
    EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_TRUE(absl::StrContains(reader.status().message(), "index.gsi: checksum mismatch"))
        << reader.status();
    FlipByte(path, offset);  // restore
  }
  EXPECT_NE(OpenOk(dir.path(), version, LookupMode::kMemory), nullptr);
}

// A flip whose manifest digest was rewritten to match: the body checksum the
// writer computed from memory (in the header) still catches it.
TEST(IndexFileTest, AFlipBehindARewrittenManifestDigestIsRejected) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(60, 100, 10, 15);
  const std::string version = Publish(dir.path(), s, true);
  const std::string vdir = dir.path() + "/" + version;
  const std::string path = vdir + "/index.gsi";
  FlipByte(path, 4096 + 5);
  auto digest = snapshot::DigestFile(path);
  ASSERT_TRUE(digest.ok());
  auto text = snapshot::ReadFileToString(vdir + "/MANIFEST.json");
  ASSERT_TRUE(text.ok());
  nlohmann::json m = nlohmann::json::parse(*text);
  for (auto& f : m["files"]) {
    if (f["path"] == "index.gsi") f["xxh3"] = snapshot::Hex64(digest->xxh3);
  }
  ASSERT_TRUE(snapshot::WriteFileAtomic(vdir + "/MANIFEST.json", m.dump(2)).ok());
  auto reader = VersionOpener().OpenStored(dir.path(), version, SnapshotReaderOptions());
  ASSERT_FALSE(reader.ok());
  EXPECT_EQ(reader.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_TRUE(absl::StrContains(reader.status().message(), "its header says")) << reader.status();
}

TEST(IndexFileTest, StructureIsCheckedEvenWithoutChecksums) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(40, 50, 5, 14);
  const std::string version = Publish(dir.path(), s, true);
  const std::string path = dir.path() + "/" + version + "/index.gsi";
  SnapshotReaderOptions options;
  options.verify_checksums = false;
  FlipByte(path, 0);  // magic
  auto reader = VersionOpener().OpenStored(dir.path(), version, options);
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(absl::StrContains(reader.status().message(), "not a graphsieve index file"))
      << reader.status();
  FlipByte(path, 0);
  FlipByte(path, 32);  // the pair count's low byte
  reader = VersionOpener().OpenStored(dir.path(), version, options);
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(absl::StrContains(reader.status().message(), "header checksum mismatch"))
      << reader.status();
}

}  // namespace
}  // namespace graphsieve
