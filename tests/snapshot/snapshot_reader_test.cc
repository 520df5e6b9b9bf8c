// Writer → store publish → reader round trips on synthetic pipeline output,
// for every table format, plus the reader's corruption checks.
#include "core/snapshot/snapshot_reader.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>
#include <tuple>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "tests/snapshot/synthetic.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::graphsieve::testing::ScopedTempDir;
using snapshot::TableFormat;
using testing_util::MakeSynthetic;
using testing_util::Synthetic;

// Writes and publishes `s` under `root`; returns the version.
std::string WriteAndPublish(const std::string& root, Synthetic& s, TableFormat format,
                            uint64_t hash = 1, bool write_index = true) {
  SnapshotWriterOptions options;
  options.pairs_format = format;
  options.write_index = write_index;
  absl::StatusOr<std::string> version = testing_util::PublishSynthetic(root, s, options, hash);
  EXPECT_TRUE(version.ok()) << version.status();
  return version.value_or("");
}

std::string FindSst(const std::string& dir, bool largest) {
  std::string best;
  uintmax_t best_size = 0;
  for (auto& e : std::filesystem::directory_iterator(dir + "/db")) {
    if (e.path().extension() != ".sst") continue;
    if (best.empty() || (largest ? e.file_size() > best_size : e.file_size() < best_size)) {
      best = e.path().string();
      best_size = e.file_size();
    }
  }
  return best;
}

// Every table format, read through both lookup modes.
class RoundTripTest : public ::testing::TestWithParam<std::tuple<TableFormat, LookupMode>> {
 protected:
  TableFormat format() const { return std::get<0>(GetParam()); }
  SnapshotReaderOptions options() const {
    SnapshotReaderOptions o;
    o.lookup = std::get<1>(GetParam());
    return o;
  }
};

TEST_P(RoundTripTest, EveryPairAndNodeReadsBack) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(/*users=*/300, /*items=*/500, /*pairs_per_user=*/40, /*seed=*/7);
  const std::string version = WriteAndPublish(dir.path(), s, format());
  auto reader = VersionOpener().OpenStored(dir.path(), version, options());
  ASSERT_TRUE(reader.ok()) << reader.status();
  const SnapshotReader& r = **reader;
  EXPECT_EQ(r.manifest().version, version);
  EXPECT_EQ(r.manifest().pairs, s.pairs.num_pairs());
  EXPECT_EQ(r.manifest().users, 300u);
  EXPECT_EQ(r.manifest().pairs_table_format, snapshot::TableFormatName(format()));
  EXPECT_EQ(r.model().sketch_dim, 4);
  EXPECT_EQ(ServingIndex(r) != nullptr, std::get<1>(GetParam()) == LookupMode::kMemory);
  EXPECT_DOUBLE_EQ(r.model().rho, 1.5);

  // All pairs in a shuffled order, in one call (crosses MultiGet chunks).
  const size_t n = s.pairs.num_pairs();
  std::vector<size_t> order(n);
  for (size_t i = 0; i < n; ++i) order[i] = i;
  std::shuffle(order.begin(), order.end(), std::mt19937(3));
  std::vector<uint64_t> users(n), items(n);
  for (size_t k = 0; k < n; ++k) {
    users[k] = s.pairs.user_ids[s.pairs.pair_user[order[k]]];
    items[k] = s.pairs.item_ids[s.pairs.pair_item[order[k]]];
  }
  std::unique_ptr<bool[]> found(new bool[n]);
  std::vector<float> rates(n, -1.0f);
  ASSERT_TRUE(
      r.LookupPairs(users, items, absl::MakeSpan(found.get(), n), absl::MakeSpan(rates)).ok());
  for (size_t k = 0; k < n; ++k) {
    ASSERT_TRUE(found[k]) << "pair " << order[k];
    ASSERT_EQ(rates[k], s.result.rate[order[k]]) << "pair " << order[k];
  }

  // Every node with its record and sketch row.
  std::vector<float> sketch(4);
  for (size_t k = 0; k < s.result.nodes.ids.size(); ++k) {
    NodeRecord rec;
    const bool item = s.result.nodes.is_item[k];
    const uint64_t id = s.result.nodes.ids[k];
    ASSERT_TRUE(item ? r.LookupItem(id, &rec, absl::MakeSpan(sketch))
                     : r.LookupUser(id, &rec, absl::MakeSpan(sketch)));
    EXPECT_EQ(rec.degree, s.result.nodes.records[k].degree);
    EXPECT_EQ(rec.sum_score, s.result.nodes.records[k].sum_score);
    auto row = s.result.nodes.SketchRow(k);
    for (int d = 0; d < 4; ++d) EXPECT_EQ(sketch[d], row[d]);
  }
  NodeRecord rec;
  EXPECT_FALSE(r.LookupUser(s.pairs.item_ids[0] ^ 1, &rec, absl::MakeSpan(sketch)));

  // ForEachPair visits every pair in key order.
  size_t visited = 0;
  ASSERT_TRUE(r.ForEachPair([&](uint64_t u, uint64_t i, float rate) {
                 EXPECT_EQ(u, s.pairs.user_ids[s.pairs.pair_user[visited]]);
                 EXPECT_EQ(i, s.pairs.item_ids[s.pairs.pair_item[visited]]);
                 EXPECT_EQ(rate, s.result.rate[visited]);
                 ++visited;
               }).ok());
  EXPECT_EQ(visited, n);
}

TEST_P(RoundTripTest, MultiGetReportsAbsentKeysInsideAndOutsideTheRange) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(50, 80, 10, /*seed=*/11);
  const std::string version = WriteAndPublish(dir.path(), s, format());
  auto reader = VersionOpener().OpenStored(dir.path(), version, options());
  ASSERT_TRUE(reader.ok()) << reader.status();
  const uint64_t u0 = s.pairs.user_ids[s.pairs.pair_user[0]];
  const uint64_t i0 = s.pairs.item_ids[s.pairs.pair_item[0]];
  const uint64_t u_last = s.pairs.user_ids.back();
  // Mixed batch: present pairs interleaved with absent ones — below the
  // smallest key, above the largest, between keys, same user other item,
  // and duplicates of a present key.
  std::vector<uint64_t> users = {0, u0, UINT64_MAX, u0, u_last, u0, u0 + 1, u0};
  std::vector<uint64_t> items = {0, i0, UINT64_MAX, i0 + 1, UINT64_MAX, i0, 0, 1};
  std::vector<int> expect = {0, 1, 0, 0, 0, 1, 0, 0};
  // A present key the table does hold, at the end of the batch.
  users.push_back(s.pairs.user_ids[s.pairs.pair_user.back()]);
  items.push_back(s.pairs.item_ids[s.pairs.pair_item.back()]);
  expect.push_back(1);
  // Guard the "absent" choices against accidental hits in the random data.
  std::set<std::pair<uint64_t, uint64_t>> present;
  for (size_t p = 0; p < s.pairs.num_pairs(); ++p) {
    present.insert(
        {s.pairs.user_ids[s.pairs.pair_user[p]], s.pairs.item_ids[s.pairs.pair_item[p]]});
  }
  for (size_t k = 0; k < users.size(); ++k) {
    ASSERT_EQ(present.count({users[k], items[k]}), static_cast<size_t>(expect[k])) << k;
  }
  std::unique_ptr<bool[]> found(new bool[users.size()]);
  std::vector<float> rates(users.size());
  ASSERT_TRUE((*reader)
                  ->LookupPairs(users, items, absl::MakeSpan(found.get(), users.size()),
                                absl::MakeSpan(rates))
                  .ok());
  for (size_t k = 0; k < users.size(); ++k) {
    EXPECT_EQ(found[k], expect[k] == 1) << "entry " << k;
  }
  EXPECT_EQ(rates[1], s.result.rate[0]);
  EXPECT_EQ(rates.back(), s.result.rate.back());
  // Size mismatch is an error naming the spans.
  absl::Status bad =
      (*reader)->LookupPairs(users, absl::MakeConstSpan(items).subspan(1),
                             absl::MakeSpan(found.get(), users.size()), absl::MakeSpan(rates));
  EXPECT_EQ(bad.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.message(), "items")) << bad;
}

INSTANTIATE_TEST_SUITE_P(
    Formats, RoundTripTest,
    ::testing::Combine(::testing::Values(TableFormat::kBlockBased, TableFormat::kCuckoo),
                       ::testing::Values(LookupMode::kMemory, LookupMode::kRocksDb)),
    [](const auto& info) {
      return std::string(snapshot::TableFormatName(std::get<0>(info.param))) + "_" +
             LookupModeName(std::get<1>(info.param));
    });

class CorruptionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    s_ = MakeSynthetic(100, 100, 20, /*seed=*/5);
    version_ = WriteAndPublish(dir_.path(), s_, TableFormat::kCuckoo);
    vdir_ = dir_.path() + "/" + version_;
    ASSERT_TRUE(VersionOpener().OpenStored(dir_.path(), version_, {}).ok());
  }
  absl::Status OpenStatus() {
    return VersionOpener().OpenStored(dir_.path(), version_, SnapshotReaderOptions()).status();
  }
  ScopedTempDir dir_;
  Synthetic s_;
  std::string version_, vdir_;
};

// XORs the byte at `offset` with `mask` (default: several bits).
void FlipByte(const std::string& path, off_t offset, unsigned char mask = 0x5a) {
  int fd = ::open(path.c_str(), O_RDWR);
  ASSERT_GE(fd, 0) << path;
  unsigned char b;
  ASSERT_EQ(::pread(fd, &b, 1, offset), 1);
  b ^= mask;
  ASSERT_EQ(::pwrite(fd, &b, 1, offset), 1);
  ::close(fd);
}

// Rewrites `sst`'s XXH3 in the manifest to match its (corrupted) bytes, so
// that only RocksDB's block checksums can notice the corruption.
void PatchManifestDigest(const std::string& vdir, const std::string& sst) {
  auto digest = snapshot::DigestFile(sst);
  ASSERT_TRUE(digest.ok());
  const std::string path = vdir + "/MANIFEST.json";
  auto text = snapshot::ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  nlohmann::json m = nlohmann::json::parse(*text);
  bool patched = false;
  for (auto& f : m["files"]) {
    if (absl::EndsWith(sst, f["path"].get<std::string>())) {
      f["xxh3"] = snapshot::Hex64(digest->xxh3);
      patched = true;
    }
  }
  ASSERT_TRUE(patched);
  ASSERT_TRUE(snapshot::WriteFileAtomic(path, m.dump(2)).ok());
}

// Both lookup modes refuse the version on open, the mapped kMemory one too
// although it serves from index.gsi alone.
TEST_F(CorruptionTest, FlippedByteInPairsSstNamesTheFile) {
  const std::string sst = FindSst(vdir_, /*largest=*/true);
  FlipByte(sst, static_cast<off_t>(std::filesystem::file_size(sst) / 2));
  SnapshotReaderOptions rocks;
  rocks.lookup = LookupMode::kRocksDb;
  for (absl::Status s : {VersionOpener().OpenStored(dir_.path(), version_, rocks).status(),
                         VersionOpener().OpenStored(dir_.path(), version_, {}).status()}) {
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), std::filesystem::path(sst).filename().string()))
        << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "checksum mismatch")) << s;
  }
}

TEST_F(CorruptionTest, RocksDbChecksumCatchesAFlipTheManifestDigestMissed) {
  // Corrupt a block-based table (nodes/meta) and rewrite its digest in the
  // manifest, so only RocksDB's own block checksums can catch it: on open in
  // kRocksDb mode (a mapped kMemory version does not read RocksDB on open;
  // its index file has its own body checksum, tests/snapshot/index_file_test.cc).
  const std::string sst = FindSst(vdir_, /*largest=*/false);
  FlipByte(sst, 40);
  PatchManifestDigest(vdir_, sst);
  SnapshotReaderOptions rocks;
  rocks.lookup = LookupMode::kRocksDb;
  absl::Status s = VersionOpener().OpenStored(dir_.path(), version_, rocks).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "/db")) << s;
}

TEST_F(CorruptionTest, TruncatedManifest) {
  const std::string path = vdir_ + "/MANIFEST.json";
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  absl::Status s = OpenStatus();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "MANIFEST.json")) << s;
}

TEST_F(CorruptionTest, MissingManifest) {
  std::filesystem::remove(vdir_ + "/MANIFEST.json");
  absl::Status s = OpenStatus();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "MANIFEST.json")) << s;
}

TEST_F(CorruptionTest, MissingTableFileNamesTheFile) {
  const std::string sst = FindSst(vdir_, /*largest=*/true);
  std::filesystem::remove(sst);
  absl::Status s = OpenStatus();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), std::filesystem::path(sst).filename().string())) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "missing")) << s;
}

TEST_F(CorruptionTest, TruncatedTableFile) {
  const std::string sst = FindSst(vdir_, /*largest=*/true);
  std::filesystem::resize_file(sst, std::filesystem::file_size(sst) - 1);
  absl::Status s = OpenStatus();
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "bytes, manifest says")) << s;
}

TEST_F(CorruptionTest, UnknownFormatVersion) {
  const std::string path = vdir_ + "/MANIFEST.json";
  auto text = snapshot::ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  std::string t = *text;
  const std::string from = absl::StrCat("\"format_version\": ", snapshot::kFormatVersion);
  ASSERT_NE(t.find(from), std::string::npos);
  // A newer format is refused by name (an older reader refuses ours the same way).
  t.replace(t.find(from), from.size(), "\"format_version\": 99");
  ASSERT_TRUE(snapshot::WriteFileAtomic(path, t).ok());
  absl::Status s = OpenStatus();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "format_version 99")) << s;
  t.replace(t.find("\"format_version\": 99"), 20, "\"format_version\": 0");
  ASSERT_TRUE(snapshot::WriteFileAtomic(path, t).ok());
  s = OpenStatus();
  EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition) << s;
  EXPECT_TRUE(absl::StrContains(s.message(), "format_version 0")) << s;
  // Format 1 (before the mixture rule's fields) is still read.
  t.replace(t.find("\"format_version\": 0"), 19, "\"format_version\": 1");
  ASSERT_TRUE(snapshot::WriteFileAtomic(path, t).ok());
  EXPECT_TRUE(OpenStatus().ok()) << OpenStatus();
}

// A corrupt block in the block-based pairs table whose file digest was
// rewritten: both lookup modes refuse a version without an index file
// (kMemory through the checksummed index scan, kRocksDb through VerifyChecksum).
TEST(PairsBlockCorruptionTest, BothLookupModesCatchAFlipBehindARewrittenDigest) {
  for (LookupMode mode : {LookupMode::kMemory, LookupMode::kRocksDb}) {
    ScopedTempDir dir;
    Synthetic s = MakeSynthetic(200, 300, 50, /*seed=*/9);
    const std::string version = WriteAndPublish(dir.path(), s, TableFormat::kBlockBased, 1,
                                                /*write_index=*/false);
    const std::string vdir = dir.path() + "/" + version;
    const std::string sst = FindSst(vdir, /*largest=*/true);
    // Flip the lowest mantissa bit of one stored rate: the table still parses
    // and the rate is still in (0, 1]; only a checksum can tell.
    auto bytes = snapshot::ReadFileToString(sst);
    ASSERT_TRUE(bytes.ok());
    char rate[4];
    std::memcpy(rate, &s.result.rate[s.result.rate.size() / 2], 4);
    const size_t at = bytes->find(std::string(rate, 4));
    ASSERT_NE(at, std::string::npos);
    FlipByte(sst, static_cast<off_t>(at), /*mask=*/0x01);
    PatchManifestDigest(vdir, sst);
    SnapshotReaderOptions o;
    o.lookup = mode;
    absl::Status st = VersionOpener().OpenStored(dir.path(), version, o).status();
    EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << LookupModeName(mode) << ": " << st;
  }
}

// The index built on load (a version without an index file) checks the table
// against the manifest's pair count.
TEST(PairsBlockCorruptionTest, ManifestPairCountDisagreeingWithTheTableIsDataLoss) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(40, 60, 10, /*seed=*/10);
  const std::string version = WriteAndPublish(dir.path(), s, TableFormat::kBlockBased, 1,
                                              /*write_index=*/false);
  const std::string path = dir.path() + "/" + version + "/MANIFEST.json";
  auto text = snapshot::ReadFileToString(path);
  ASSERT_TRUE(text.ok());
  nlohmann::json m = nlohmann::json::parse(*text);
  m["counts"]["pairs"] = m["counts"]["pairs"].get<uint64_t>() + 1;
  ASSERT_TRUE(snapshot::WriteFileAtomic(path, m.dump(2)).ok());
  absl::Status st =
      VersionOpener().OpenStored(dir.path(), version, SnapshotReaderOptions()).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "the manifest says")) << st;

  // An absurd count is refused before any memory is mapped for it.
  m["counts"]["pairs"] = uint64_t{1} << 40;
  ASSERT_TRUE(snapshot::WriteFileAtomic(path, m.dump(2)).ok());
  st = VersionOpener().OpenStored(dir.path(), version, SnapshotReaderOptions()).status();
  EXPECT_EQ(st.code(), absl::StatusCode::kDataLoss) << st;
  EXPECT_TRUE(absl::StrContains(st.message(), "bytes of table files can hold")) << st;
}

TEST_F(CorruptionTest, UnknownVersionIsNotFound) {
  absl::Status s =
      VersionOpener().OpenStored(dir_.path(), "20200101T000000Z-00000000", {}).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound) << s;
}

TEST(SnapshotWriterTest, RejectsUnsortedPairsAndSizeMismatch) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(10, 10, 3, 1);
  std::swap(s.pairs.pair_item[0], s.pairs.pair_item[1]);
  s.info.version = "20260101T000000Z-00000001";
  auto st = WriteSnapshotDir(dir.path() + "/a", s.pairs, s.result, s.info, {});
  EXPECT_EQ(st.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(st.status().message(), "sorted")) << st.status();

  Synthetic t = MakeSynthetic(10, 10, 3, 1);
  t.result.rate.pop_back();
  st = WriteSnapshotDir(dir.path() + "/b", t.pairs, t.result, t.info, {});
  EXPECT_EQ(st.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(st.status().message(), "result.rate")) << st.status();
}

}  // namespace
}  // namespace graphsieve
