#include "core/snapshot/snapshot_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/format.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/node_cache.h"
#include "core/snapshot/snapshot_store.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"

namespace graphsieve {
namespace {

using snapshot::FromRocks;

// MultiGet batch; RocksDB's batched path is tuned for a few hundred keys.
constexpr size_t kMultiGetChunk = 256;

struct Scratch {
  std::vector<uint32_t> order;
  std::vector<char> keys;
  std::vector<rocksdb::Slice> slices;
  std::vector<rocksdb::PinnableSlice> values;
  std::vector<rocksdb::Status> statuses;
};

// The OpenDb instances open in the process (OpenRocksDbInstances()).
std::atomic<int64_t> open_rocksdb_instances{0};

// RocksDB opened read-only over a version's db/ (column families default,
// pairs, nodes, meta); closed on destruction.
struct OpenDb {
  std::shared_ptr<rocksdb::Cache> cache;
  std::unique_ptr<rocksdb::DB> db;
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  ~OpenDb() {
    if (db == nullptr) return;
    for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
    db->Close();
    open_rocksdb_instances.fetch_sub(1, std::memory_order_relaxed);
  }
};

absl::StatusOr<std::unique_ptr<OpenDb>> OpenRocksDb(const std::string& dir,
                                                    snapshot::TableFormat format,
                                                    const SnapshotReaderOptions& options);
absl::Status VerifyFiles(const std::string& dir, const snapshot::ParsedManifest& m, bool digest,
                         const std::string& skip);

class SnapshotReaderImpl final : public SnapshotReader {
 public:
  // `db` may be null for a mapped index: ForEachPair then opens RocksDB for
  // the scan and closes it at its end (the version profiler, tests, offline
  // tools), never the request path.
  SnapshotReaderImpl(snapshot::ParsedManifest manifest, UnseenModel model,
                     std::unique_ptr<OpenDb> db, std::string dir, SnapshotReaderOptions options)
      : parsed_(std::move(manifest)),
        model_(model),
        dir_(std::move(dir)),
        options_(options),
        owned_db_(std::move(db)),
        db_(owned_db_ ? owned_db_->db.get() : nullptr),
        handles_(owned_db_ ? owned_db_->handles : std::vector<rocksdb::ColumnFamilyHandle*>()) {}

  void SetIndex(std::unique_ptr<const MemoryIndex> index) { index_ = std::move(index); }

  const ManifestSummary& manifest() const override { return parsed_.summary; }
  const SnapshotLoadStats& load_stats() const override { return stats_; }
  SnapshotLoadStats* mutable_load_stats() { return &stats_; }
  const UnseenModel& model() const override { return model_; }

  const MemoryIndex* memory_index() const override { return index_.get(); }

  bool FindNode(bool is_item, uint64_t id, NodeView* view) const override {
    // In-memory snapshots answer without I/O or locks.
    if (index_ != nullptr) return index_->FindNode(is_item, id, view);
    const CachedNode* node = nodes_->Find(is_item, id);
    if (node == nullptr) return false;
    *view = node->view();
    return true;
  }

  absl::Status LookupPairs(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                           absl::Span<bool> found, absl::Span<float> rates) const override {
    const size_t n = users.size();
    if (items.size() != n || found.size() != n || rates.size() != n) {
      return absl::InvalidArgumentError(
          absl::StrCat("LookupPairs: users has ", n, " entries, items ", items.size(), ", found ",
                       found.size(), ", rates ", rates.size(), "; all must match"));
    }
    if (index_ != nullptr) {
      index_->LookupPairs(users, items, found, rates);
      return absl::OkStatus();
    }
    thread_local Scratch scratch;
    Scratch& sc = scratch;
    sc.order.resize(n);
    std::iota(sc.order.begin(), sc.order.end(), 0u);
    std::sort(sc.order.begin(), sc.order.end(), [&](uint32_t a, uint32_t b) {
      return users[a] != users[b] ? users[a] < users[b] : items[a] < items[b];
    });
    sc.keys.resize(n * snapshot::kPairKeyBytes);
    sc.slices.resize(std::min(n, kMultiGetChunk));
    if (sc.values.size() < kMultiGetChunk) sc.values.resize(kMultiGetChunk);
    sc.statuses.resize(kMultiGetChunk);
    for (size_t k = 0; k < n; ++k) {
      char* key = sc.keys.data() + k * snapshot::kPairKeyBytes;
      snapshot::EncodePairKey(users[sc.order[k]], items[sc.order[k]], key);
    }
    rocksdb::ReadOptions ro;
    ro.verify_checksums = false;  // verified once on Open
    for (size_t begin = 0; begin < n; begin += kMultiGetChunk) {
      const size_t m = std::min(kMultiGetChunk, n - begin);
      for (size_t k = 0; k < m; ++k) {
        sc.slices[k] = rocksdb::Slice(sc.keys.data() + (begin + k) * snapshot::kPairKeyBytes,
                                      snapshot::kPairKeyBytes);
        sc.values[k].Reset();
      }
      db_->MultiGet(ro, handles_[1], m, sc.slices.data(), sc.values.data(), sc.statuses.data(),
                    /*sorted_input=*/true);
      for (size_t k = 0; k < m; ++k) {
        const uint32_t i = sc.order[begin + k];
        const rocksdb::Status& st = sc.statuses[k];
        if (st.ok()) {
          if (sc.values[k].size() != snapshot::kPairValueBytes) {
            return absl::DataLossError(absl::StrCat("snapshot ", parsed_.summary.version,
                                                    ": pair (", users[i], ",", items[i], ") has a ",
                                                    sc.values[k].size(), "-byte value"));
          }
          found[i] = true;
          rates[i] = snapshot::DecodeRate(sc.values[k].data());
        } else if (st.IsNotFound()) {
          found[i] = false;
          rates[i] = 0.0f;
        } else {
          return FromRocks(st, absl::StrCat("snapshot ", parsed_.summary.version, " pairs"));
        }
        sc.values[k].Reset();
      }
    }
    return absl::OkStatus();
  }

  bool LookupUser(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const override {
    return LookupNode(false, id, record, sketch);
  }
  bool LookupItem(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const override {
    return LookupNode(true, id, record, sketch);
  }

  absl::Status ForEachPair(
      const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const override {
    if (db_ == nullptr) {
      absl::StatusOr<std::unique_ptr<const SnapshotReaderImpl>> db = OpenScanDb();
      if (!db.ok()) return db.status();
      return (*db)->ForEachPair(fn);  // RocksDB closes here, with the scan
    }
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    ro.verify_checksums = true;
    ro.readahead_size = 4 << 20;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, handles_[1]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      rocksdb::Slice k = it->key(), v = it->value();
      if (k.size() != snapshot::kPairKeyBytes || v.size() != snapshot::kPairValueBytes) {
        return absl::DataLossError(absl::StrCat("snapshot ", parsed_.summary.version,
                                                ": pairs entry with ", k.size(), "-byte key and ",
                                                v.size(), "-byte value"));
      }
      fn(snapshot::GetBigEndian64(k.data()), snapshot::GetBigEndian64(k.data() + 8),
         snapshot::DecodeRate(v.data()));
    }
    return FromRocks(it->status(), absl::StrCat("snapshot ", parsed_.summary.version, " pairs"));
  }

  // Iterates the nodes column family (decoded).
  absl::Status ForEachNode(const MemoryIndex::NodeSink& fn) const {
    rocksdb::ReadOptions ro;
    ro.fill_cache = false;
    ro.verify_checksums = true;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, handles_[2]));
    NodeRecord record;
    std::vector<float> sketch(static_cast<size_t>(model_.sketch_dim));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      rocksdb::Slice k = it->key(), v = it->value();
      if (k.size() != snapshot::kNodeKeyBytes || (k[0] != 0 && k[0] != 1)) {
        return absl::DataLossError(absl::StrCat("snapshot ", parsed_.summary.version,
                                                ": nodes entry with a malformed ", k.size(),
                                                "-byte key"));
      }
      const uint64_t id = snapshot::GetBigEndian64(k.data() + 1);
      absl::Status s = snapshot::DecodeNodeValue(absl::string_view(v.data(), v.size()), &record,
                                                 absl::MakeSpan(sketch));
      if (!s.ok()) {
        return absl::DataLossError(absl::StrCat("snapshot ", parsed_.summary.version, ": node ",
                                                id, ": ", s.message()));
      }
      fn(k[0] == 1, id, record, sketch);
    }
    return FromRocks(it->status(), absl::StrCat("snapshot ", parsed_.summary.version, " nodes"));
  }

  // LookupMode::kMemory: builds the index from the pairs and nodes tables.
  absl::Status BuildIndex() {
    // The table is sized from the manifest's count before the scan: refuse a
    // count the files cannot hold (a stored pair takes >= 4 bytes: its rate)
    // rather than map memory for it.
    uint64_t file_bytes = 0;
    for (const snapshot::ManifestFileEntry& f : parsed_.files) file_bytes += f.size_bytes;
    if (parsed_.summary.pairs > file_bytes / snapshot::kPairValueBytes) {
      return absl::DataLossError(absl::StrCat(
          "snapshot ", parsed_.summary.version, ": the manifest claims ", parsed_.summary.pairs,
          " pairs, more than its ", file_bytes, " bytes of table files can hold"));
    }
    absl::StatusOr<std::unique_ptr<const MemoryIndex>> index = MemoryIndex::Build(
        model_.sketch_dim, parsed_.summary.pairs,
        [this](const MemoryIndex::NodeSink& fn) { return ForEachNode(fn); },
        [this](const MemoryIndex::PairSink& fn) { return ForEachPair(fn); });
    if (!index.ok()) {
      return absl::DataLossError(absl::StrCat("snapshot ", parsed_.summary.version,
                                              ": in-memory index: ", index.status().message()));
    }
    index_ = std::move(*index);
    return absl::OkStatus();
  }

  // LookupMode::kRocksDb: FindNode reads nodes through a cache.
  void CreateNodeCache() { nodes_ = std::make_unique<const NodeCache>(*this); }

  // Reads every pairs and nodes entry once (fills the block cache / page cache).
  absl::Status Warm() const {
    for (size_t cf : {size_t{1}, size_t{2}}) {
      rocksdb::ReadOptions ro;
      ro.fill_cache = true;
      std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, handles_[cf]));
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
      }
      absl::Status s = FromRocks(it->status(), "warm");
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

 private:
  bool LookupNode(bool is_item, uint64_t id, NodeRecord* record, absl::Span<float> sketch) const {
    if (sketch.size() != static_cast<size_t>(model_.sketch_dim)) return false;
    if (index_ != nullptr) {
      NodeView view;
      if (!index_->FindNode(is_item, id, &view)) return false;
      *record = view.record;
      std::copy(view.sketch.begin(), view.sketch.end(), sketch.begin());
      return true;
    }
    char key[snapshot::kNodeKeyBytes];
    snapshot::EncodeNodeKey(is_item, id, key);
    rocksdb::PinnableSlice value;
    rocksdb::ReadOptions ro;
    rocksdb::Status st = db_->Get(ro, handles_[2], rocksdb::Slice(key, sizeof(key)), &value);
    if (!st.ok()) return false;
    return snapshot::DecodeNodeValue(absl::string_view(value.data(), value.size()), record, sketch)
        .ok();
  }

  // A mapped reader's RocksDB side for one scan: a reader over the same
  // version in kRocksDb mode (Open digested its files; block checksums are
  // verified as ForEachPair reads). Not kept: an open RocksDB holds its table
  // readers (index and filter blocks) in anonymous memory, and a mapped
  // version lives on as the active and then the held version
  // (docs/SERVER.md "Memory across many swaps").
  absl::StatusOr<std::unique_ptr<const SnapshotReaderImpl>> OpenScanDb() const {
    SnapshotReaderOptions o = options_;
    o.lookup = LookupMode::kRocksDb;
    o.verify_checksums = false;
    o.warm = false;
    absl::StatusOr<std::unique_ptr<OpenDb>> db = OpenRocksDb(dir_, parsed_.pairs_format, o);
    if (!db.ok()) return db.status();
    return std::make_unique<const SnapshotReaderImpl>(parsed_, model_, std::move(*db), dir_, o);
  }

  // Constant after construction.
  const snapshot::ParsedManifest parsed_;
  const UnseenModel model_;
  const std::string dir_;
  const SnapshotReaderOptions options_;
  const std::unique_ptr<OpenDb> owned_db_;
  rocksdb::DB* const db_;  // null for a mapped index (ForEachPair opens one per scan)
  const std::vector<rocksdb::ColumnFamilyHandle*> handles_;  // default, pairs, nodes, meta
  std::unique_ptr<const MemoryIndex> index_;           // set once by BuildIndex() in Open
  std::unique_ptr<const NodeCache> nodes_;             // kRocksDb: set once in Open
  SnapshotLoadStats stats_;                            // set in Open
};

// Sizes and (with `digest`) XXH3-64 of every listed file but `skip` (the
// index file when it is mapped: MapFile checks it in its own single pass).
absl::Status VerifyFiles(const std::string& dir, const snapshot::ParsedManifest& m, bool digest,
                         const std::string& skip) {
  for (const snapshot::ManifestFileEntry& f : m.files) {
    if (f.path == skip) continue;
    const std::string path = absl::StrCat(dir, "/", f.path);
    struct stat st;
    if (::stat(path.c_str(), &st) != 0) {
      return absl::DataLossError(
          absl::StrCat(path, ": missing (listed in ", snapshot::kManifestFile, ")"));
    }
    if (static_cast<uint64_t>(st.st_size) != f.size_bytes) {
      return absl::DataLossError(
          absl::StrCat(path, ": ", st.st_size, " bytes, manifest says ", f.size_bytes));
    }
    if (!digest) continue;
    absl::StatusOr<snapshot::FileDigest> d = snapshot::DigestFile(path);
    if (!d.ok()) return absl::DataLossError(d.status().message());
    if (d->xxh3 != f.xxh3 || d->size_bytes != f.size_bytes) {
      return absl::DataLossError(absl::StrCat(path, ": checksum mismatch (XXH3-64 ",
                                              snapshot::Hex64(d->xxh3), ", manifest says ",
                                              snapshot::Hex64(f.xxh3), ")"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<OpenDb>> OpenRocksDb(const std::string& dir,
                                                    snapshot::TableFormat format,
                                                    const SnapshotReaderOptions& options) {
  auto out = std::make_unique<OpenDb>();
  out->cache = rocksdb::NewLRUCache(std::max<size_t>(options.block_cache_bytes, 1 << 20));
  rocksdb::DBOptions db_options;
  db_options.info_log = snapshot::NullLogger();
  // CuckooTable requires mmap reads. Block-based tables use pread: mmapped
  // pages of a scanned table would count as the server's RSS.
  db_options.allow_mmap_reads = format == snapshot::TableFormat::kCuckoo;
  db_options.max_open_files = -1;
  db_options.paranoid_checks = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
      {rocksdb::kDefaultColumnFamilyName, snapshot::SmallCfOptions(out->cache)},
      {snapshot::kPairsCf, snapshot::PairsCfOptions(format, false, out->cache)},
      {snapshot::kNodesCf, snapshot::SmallCfOptions(out->cache)},
      {snapshot::kMetaCf, snapshot::SmallCfOptions(out->cache)},
  };
  const std::string db_dir = absl::StrCat(dir, "/", snapshot::kDbDir);
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs = rocksdb::DB::OpenForReadOnly(db_options, db_dir, cfs, &out->handles, &raw);
  if (!rs.ok()) {
    return absl::DataLossError(absl::StrCat(db_dir, ": cannot open: ", rs.ToString()));
  }
  out->db.reset(raw);
  open_rocksdb_instances.fetch_add(1, std::memory_order_relaxed);
  return out;
}

// kMemory over a version with an index file: map it (its bytes were checked
// against the manifest by VerifyFiles); RocksDB is not opened.
absl::StatusOr<std::shared_ptr<SnapshotReaderImpl>> OpenMapped(
    const std::string& dir, snapshot::ParsedManifest parsed, const SnapshotReaderOptions& options,
    SnapshotLoadStats* stats) {
  const absl::Time t0 = absl::Now();
  const std::string path = absl::StrCat(dir, "/", parsed.index_path);
  IndexFileInfo info;
  MapFileOptions map;
  map.verify = options.verify_checksums;
  map.check_file_xxh3 = options.verify_checksums;
  map.advise_huge_pages = options.index_huge_pages;
  for (const snapshot::ManifestFileEntry& f : parsed.files) {
    if (f.path == parsed.index_path) {
      map.file_xxh3 = f.xxh3;
      map.file_bytes = f.size_bytes;
    }
  }
  absl::StatusOr<std::unique_ptr<const MemoryIndex>> index =
      MemoryIndex::MapFile(path, parsed.summary.sketch_dim, parsed.summary.pairs, map, &info);
  if (!index.ok()) return index.status();
  if (info.partition != parsed.summary.partition ||
      info.num_partitions != parsed.summary.num_partitions) {
    return absl::DataLossError(absl::StrCat(path, ": partition ", info.partition, " of ",
                                            info.num_partitions, ", the manifest says ",
                                            parsed.summary.partition, " of ",
                                            parsed.summary.num_partitions));
  }
  absl::StatusOr<UnseenModel> model = snapshot::DecodeUnseenModel(info.unseen_model);
  if (!model.ok()) return absl::DataLossError(absl::StrCat(path, ": ", model.status().message()));
  auto reader = std::make_shared<SnapshotReaderImpl>(std::move(parsed), *model, nullptr, dir,
                                                     options);
  reader->SetIndex(*std::move(index));
  stats->index_seconds = absl::ToDoubleSeconds(absl::Now() - t0);
  stats->index_mapped = true;
  return reader;
}

}  // namespace

int64_t OpenRocksDbInstances() { return open_rocksdb_instances.load(std::memory_order_relaxed); }

const char* LookupModeName(LookupMode mode) {
  return mode == LookupMode::kMemory ? "memory" : "rocksdb";
}

absl::StatusOr<LookupMode> ParseLookupMode(absl::string_view name) {
  if (name == "memory") return LookupMode::kMemory;
  if (name == "rocksdb") return LookupMode::kRocksDb;
  return absl::InvalidArgumentError(
      absl::StrCat("lookup mode '", name, "' is not one of: memory, rocksdb"));
}

absl::StatusOr<std::shared_ptr<const SnapshotReader>> SnapshotReader::Open(
    const std::string& root, const std::string& version, const SnapshotReaderOptions& options) {
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store = SnapshotStore::Create({root});
  if (!store.ok()) return store.status();
  return Open(**store, version, options);
}

absl::StatusOr<std::shared_ptr<const SnapshotReader>> SnapshotReader::Open(
    const SnapshotStore& store, const std::string& version, const SnapshotReaderOptions& options) {
  absl::StatusOr<std::string> version_dir = store.PublishedPartDir(version, options.partition);
  if (!version_dir.ok()) return version_dir.status();
  const std::string& dir = *version_dir;
  const std::string manifest_path = absl::StrCat(dir, "/", snapshot::kManifestFile);
  absl::StatusOr<std::string> text = snapshot::ReadFileToString(manifest_path);
  if (!text.ok()) {
    return absl::DataLossError(absl::StrCat(manifest_path, ": ", text.status().message()));
  }
  absl::StatusOr<snapshot::ParsedManifest> parsed = snapshot::ParseManifest(*text, manifest_path);
  if (!parsed.ok()) return parsed.status();
  if (options.partition >= 0 && parsed->summary.num_partitions > 1 &&
      parsed->summary.partition != static_cast<uint32_t>(options.partition)) {
    return absl::DataLossError(absl::StrCat(manifest_path, ": holds partition ",
                                            parsed->summary.partition, ", its directory is part-",
                                            options.partition));
  }
  if (parsed->summary.version != version) {
    return absl::DataLossError(absl::StrCat(manifest_path, ": names version '",
                                            parsed->summary.version, "', directory is '", version,
                                            "'"));
  }
  SnapshotLoadStats stats;
  absl::Time t0 = absl::Now();
  // A mapped version: the RocksDB files are digested on a second thread while
  // MapFile checks the index file in its own single pass; a corrupt file of
  // either kind rejects the version, as before the index file existed.
  const bool mapped = options.lookup == LookupMode::kMemory && options.use_index_file &&
                      !parsed->index_path.empty();
  if (mapped) {
    absl::Status db_files;
    std::thread verify([&] {
      db_files = VerifyFiles(dir, *parsed, options.verify_checksums, parsed->index_path);
      stats.verify_files_seconds = absl::ToDoubleSeconds(absl::Now() - t0);
    });
    snapshot::ParsedManifest copy = *parsed;
    absl::StatusOr<std::shared_ptr<SnapshotReaderImpl>> reader =
        OpenMapped(dir, std::move(copy), options, &stats);
    verify.join();
    if (!db_files.ok()) return db_files;
    if (!reader.ok()) return reader.status();
    *(*reader)->mutable_load_stats() = stats;
    return std::shared_ptr<const SnapshotReader>(*std::move(reader));
  }
  absl::Status s = VerifyFiles(dir, *parsed, options.verify_checksums, "");
  if (!s.ok()) return s;
  stats.verify_files_seconds = absl::ToDoubleSeconds(absl::Now() - t0);
  t0 = absl::Now();
  const snapshot::TableFormat parsed_format = parsed->pairs_format;
  absl::StatusOr<std::unique_ptr<OpenDb>> db = OpenRocksDb(dir, parsed_format, options);
  if (!db.ok()) return db.status();
  const std::string db_dir = absl::StrCat(dir, "/", snapshot::kDbDir);
  // kMemory verifies RocksDB's block checksums in the index scan (Open's
  // contract in the header).
  if (options.verify_checksums && options.lookup == LookupMode::kRocksDb) {
    const absl::Time v0 = absl::Now();
    rocksdb::Status rs = (*db)->db->VerifyChecksum();
    if (!rs.ok() && !rs.IsNotSupported()) {
      return absl::DataLossError(absl::StrCat(db_dir, ": ", rs.ToString()));
    }
    stats.verify_rocksdb_seconds = absl::ToDoubleSeconds(absl::Now() - v0);
  }
  std::string model_text;
  rocksdb::Status rs = (*db)->db->Get(rocksdb::ReadOptions(), (*db)->handles[3],
                                      snapshot::kMetaUnseenModelKey, &model_text);
  if (!rs.ok()) {
    return absl::DataLossError(
        absl::StrCat(db_dir, ": meta/", snapshot::kMetaUnseenModelKey, ": ", rs.ToString()));
  }
  absl::StatusOr<UnseenModel> model = snapshot::DecodeUnseenModel(model_text);
  if (!model.ok()) return absl::DataLossError(absl::StrCat(db_dir, ": ", model.status().message()));
  auto reader = std::make_shared<SnapshotReaderImpl>(std::move(*parsed), *model, std::move(*db),
                                                     dir, options);
  stats.open_seconds = absl::ToDoubleSeconds(absl::Now() - t0) - stats.verify_rocksdb_seconds;
  t0 = absl::Now();
  if (options.lookup == LookupMode::kMemory) {
    // A snapshot without an index file (written before it existed): build
    // the index by reading both tables once; for a cuckoo table the iterator
    // sorts the file first (slow: block-based is the format for memory lookups).
    s = reader->BuildIndex();
    if (!s.ok()) return s;
  } else {
    reader->CreateNodeCache();
  }
  // CuckooTable iterators sort the whole table first, so warming a cuckoo
  // snapshot by iteration would cost seconds per million pairs; its file is
  // mmapped and was just read end to end by the digest check instead.
  if (options.lookup == LookupMode::kRocksDb && options.warm &&
      parsed_format != snapshot::TableFormat::kCuckoo) {
    s = reader->Warm();
    if (!s.ok()) return absl::DataLossError(absl::StrCat(db_dir, ": ", s.message()));
  }
  stats.index_seconds = absl::ToDoubleSeconds(absl::Now() - t0);
  stats.index_mapped = false;
  *reader->mutable_load_stats() = stats;
  return std::shared_ptr<const SnapshotReader>(std::move(reader));
}

}  // namespace graphsieve
