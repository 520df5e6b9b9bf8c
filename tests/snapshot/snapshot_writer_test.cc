// The snapshot writer's bulk load split over many pairs SST files
// (SnapshotWriterOptions::pairs_per_sst_file) with the serving index written
// alongside: the version reads back exactly as one written in a single file,
// index.gsi is byte-identical, and the manifest's digests (index.gsi's taken
// while it was written) match the files' bytes.
#include "core/snapshot/snapshot_writer.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "tests/snapshot/synthetic.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::graphsieve::testing::ScopedTempDir;
using testing_util::MakeSynthetic;
using testing_util::Synthetic;

struct Written {
  std::string version;
  std::string dir;
  size_t sst_files = 0;
};

Written WriteAndPublish(const std::string& root, Synthetic& s, size_t pairs_per_file, int threads) {
  auto store = SnapshotStore::Create({root, /*create_if_missing=*/true});
  EXPECT_TRUE(store.ok()) << store.status();
  auto lock = (*store)->AcquirePublishLock(0);
  EXPECT_TRUE(lock.ok()) << lock.status();
  Written w;
  w.version = (*store)->NewVersionId(**lock, absl::Now(), 1);
  s.info.version = w.version;
  SnapshotWriterOptions options;
  options.threads = threads;
  options.pairs_per_sst_file = pairs_per_file;
  auto stats = WriteSnapshotDir((*store)->TempDir(w.version), s.pairs, s.result, s.info, options);
  EXPECT_TRUE(stats.ok()) << stats.status();
  EXPECT_TRUE((*store)->Publish(**lock, w.version).ok());
  w.dir = (*store)->VersionDir(w.version);
  for (const auto& e : std::filesystem::directory_iterator(w.dir + "/db")) {
    w.sst_files += e.path().extension() == ".sst";
  }
  return w;
}

std::string Bytes(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
}

// Every stored pair and as many absent ones, through the reader in `mode`.
void ExpectAllPairs(const std::string& root, const std::string& version, const Synthetic& s,
                    LookupMode mode) {
  SnapshotReaderOptions ro;
  ro.lookup = mode;  // verify_checksums (default): every file's digest against the manifest
  auto reader = VersionOpener().OpenStored(root, version, ro);
  ASSERT_TRUE(reader.ok()) << reader.status();
  const PairTable& t = s.pairs;
  const size_t n = t.num_pairs();
  std::vector<uint64_t> users, items;
  for (size_t i = 0; i < n; ++i) {
    users.push_back(t.user_ids[t.pair_user[i]]);
    items.push_back(t.item_ids[t.pair_item[i]]);
  }
  std::mt19937_64 rng(7);
  for (size_t i = 0; i < n; ++i) {  // (user, item) not among the pairs: an id no node has
    users.push_back(t.user_ids[rng() % t.user_ids.size()]);
    items.push_back(0x5eed0000u + i);
  }
  std::vector<float> rates(users.size());
  std::unique_ptr<bool[]> f(new bool[users.size()]);
  ASSERT_TRUE(
      (*reader)
          ->LookupPairs(users, items, absl::MakeSpan(f.get(), users.size()), absl::MakeSpan(rates))
          .ok());
  for (size_t i = 0; i < users.size(); ++i) {
    if (i < n) {
      ASSERT_TRUE(f[i]) << "pair " << i;
      ASSERT_EQ(rates[i], s.result.rate[i]) << "pair " << i;
    } else {
      ASSERT_FALSE(f[i]) << "absent pair " << i - n;
    }
  }
  uint64_t scanned = 0;
  ASSERT_TRUE((*reader)
                  ->ForEachPair([&](uint64_t user, uint64_t item, float rate) {
                    if (scanned < n) {
                      EXPECT_EQ(user, users[scanned]);
                      EXPECT_EQ(item, items[scanned]);
                      EXPECT_EQ(rate, s.result.rate[scanned]);
                    }
                    ++scanned;
                  })
                  .ok());
  EXPECT_EQ(scanned, n);
}

TEST(SnapshotWriterTest, ManySstFilesReadLikeOne) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(/*users=*/60, /*items=*/400, /*pairs_per_user=*/90, /*seed=*/3);
  const size_t n = s.pairs.num_pairs();  // 5,400
  const Written one = WriteAndPublish(dir.path() + "/one", s, /*pairs_per_file=*/n, 1);
  const Written many = WriteAndPublish(dir.path() + "/many", s, /*pairs_per_file=*/97, 3);
  // pairs: 1 file vs ceil(5400 / 97) = 56; plus the nodes and meta tables.
  EXPECT_EQ(one.sst_files, 1u + 2u);
  EXPECT_EQ(many.sst_files, (n + 96) / 97 + 2u);
  for (LookupMode mode : {LookupMode::kRocksDb, LookupMode::kMemory}) {
    SCOPED_TRACE(mode == LookupMode::kRocksDb ? "rocksdb" : "memory");
    ExpectAllPairs(dir.path() + "/one", one.version, s, mode);
    ExpectAllPairs(dir.path() + "/many", many.version, s, mode);
  }
  // The serving index does not depend on how the pairs table was split.
  const std::string index_one = Bytes(one.dir + "/" + snapshot::kIndexFile);
  ASSERT_GT(index_one.size(), 4096u);
  EXPECT_EQ(index_one, Bytes(many.dir + "/" + snapshot::kIndexFile));
}

TEST(SnapshotWriterTest, ManifestDigestsMatchTheFiles) {
  ScopedTempDir dir;
  Synthetic s = MakeSynthetic(40, 300, 50, /*seed=*/5);
  const Written w = WriteAndPublish(dir.path(), s, /*pairs_per_file=*/333, 2);
  auto text = snapshot::ReadFileToString(w.dir + "/" + snapshot::kManifestFile);
  ASSERT_TRUE(text.ok()) << text.status();
  auto manifest = snapshot::ParseManifest(*text, "MANIFEST.json");
  ASSERT_TRUE(manifest.ok()) << manifest.status();
  size_t listed_sst = 0;
  bool index_listed = false;
  for (const snapshot::ManifestFileEntry& e : manifest->files) {
    auto d = snapshot::DigestFile(w.dir + "/" + e.path);
    ASSERT_TRUE(d.ok()) << e.path << ": " << d.status();
    EXPECT_EQ(d->size_bytes, e.size_bytes) << e.path;
    EXPECT_EQ(d->xxh3, e.xxh3) << e.path;
    listed_sst += e.path.size() > 4 && e.path.substr(e.path.size() - 4) == ".sst";
    index_listed |= e.path == snapshot::kIndexFile;
  }
  EXPECT_TRUE(index_listed);
  EXPECT_EQ(listed_sst, w.sst_files);
  EXPECT_EQ(w.sst_files, (s.pairs.num_pairs() + 332) / 333 + 2u);
}

TEST(SnapshotWriterTest, RejectsZeroPairsPerFile) {
  SnapshotWriterOptions options;
  options.pairs_per_sst_file = 0;
  EXPECT_EQ(options.Validate().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace graphsieve
