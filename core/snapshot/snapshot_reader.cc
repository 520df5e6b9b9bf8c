// SnapshotReader::Open (snapshot_reader.h): reads and checks MANIFEST.json,
// verifies the listed files, then maps the version's index file or opens its
// RocksDB, and returns the reader of the lookup mode asked for:
// memory_snapshot_reader.h (kMemory) or rocksdb_snapshot_reader.h (kRocksDb).
#include "core/snapshot/snapshot_reader.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/format.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/memory_snapshot_reader.h"
#include "core/snapshot/rocksdb_snapshot_reader.h"
#include "core/snapshot/snapshot_reader_internal.h"
#include "core/snapshot/snapshot_store.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"

namespace graphsieve {
namespace {

// The OpenDb instances open in the process (OpenRocksDbInstances()).
std::atomic<int64_t> open_rocksdb_instances{0};

}  // namespace

namespace snapshot_internal {

OpenDb::~OpenDb() {
  if (db == nullptr) return;
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  db->Close();
  open_rocksdb_instances.fetch_sub(1, std::memory_order_relaxed);
}

absl::StatusOr<std::unique_ptr<OpenDb>> OpenRocksDb(const std::string& dir,
                                                    snapshot::TableFormat format,
                                                    const SnapshotReaderOptions& options,
                                                    bool scan_only) {
  snapshot::InitRocksDbDefaults();
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
      {snapshot::kPairsCf, snapshot::PairsCfOptions(format, false, out->cache, scan_only)},
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

}  // namespace snapshot_internal

namespace {

using snapshot_internal::MemorySnapshotReader;
using snapshot_internal::OpenDb;
using snapshot_internal::OpenRocksDb;
using snapshot_internal::RocksDbSnapshotReader;

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

// kMemory over a version with an index file: map it (its bytes were checked
// against the manifest by VerifyFiles); RocksDB is not opened.
absl::StatusOr<std::shared_ptr<MemorySnapshotReader>> OpenMapped(
    const std::string& dir, snapshot::ParsedManifest parsed, const SnapshotReaderOptions& options,
    SnapshotLoadStats* stats) {
  const absl::Time t0 = absl::Now();
  const std::string path = absl::StrCat(dir, "/", parsed.index_path);
  IndexFileInfo info;
  MapFileOptions map;
  map.verify = options.verify_checksums;
  map.check_file_xxh3 = options.verify_checksums;
  map.huge_pages = options.index_huge_pages;
  map.region_order = parsed.index_key_ordered ? RegionOrder::kKeyOrdered : RegionOrder::kInsertion;
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
    return absl::DataLossError(absl::StrCat(
        path, ": partition ", info.partition, " of ", info.num_partitions, ", the manifest says ",
        parsed.summary.partition, " of ", parsed.summary.num_partitions));
  }
  absl::StatusOr<UnseenModel> model = snapshot::DecodeUnseenModel(info.unseen_model);
  if (!model.ok()) return absl::DataLossError(absl::StrCat(path, ": ", model.status().message()));
  auto reader = std::make_shared<MemorySnapshotReader>(std::move(parsed), *model, dir, options,
                                                       *std::move(index));
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
    absl::StatusOr<std::shared_ptr<MemorySnapshotReader>> reader =
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
  auto rocks = std::make_unique<RocksDbSnapshotReader>(std::move(*parsed), *model, std::move(*db),
                                                       dir, options);
  stats.open_seconds = absl::ToDoubleSeconds(absl::Now() - t0) - stats.verify_rocksdb_seconds;
  t0 = absl::Now();
  if (options.lookup == LookupMode::kMemory) {
    // A snapshot without an index file (written before it existed): build
    // the index by reading both tables once; for a cuckoo table the iterator
    // sorts the file first (slow: block-based is the format for memory lookups).
    absl::StatusOr<std::unique_ptr<MemorySnapshotReader>> reader =
        MemorySnapshotReader::BuildFrom(std::move(rocks));
    if (!reader.ok()) return reader.status();
    stats.index_seconds = absl::ToDoubleSeconds(absl::Now() - t0);
    *(*reader)->mutable_load_stats() = stats;
    return std::shared_ptr<const SnapshotReader>(*std::move(reader));
  }
  // CuckooTable iterators sort the whole table first, so warming a cuckoo
  // snapshot by iteration would cost seconds per million pairs; its file is
  // mmapped and was just read end to end by the digest check instead.
  if (options.warm && parsed_format != snapshot::TableFormat::kCuckoo) {
    s = rocks->Warm();
    if (!s.ok()) return absl::DataLossError(absl::StrCat(db_dir, ": ", s.message()));
  }
  stats.index_seconds = absl::ToDoubleSeconds(absl::Now() - t0);
  stats.index_mapped = false;
  *rocks->mutable_load_stats() = stats;
  return std::shared_ptr<const SnapshotReader>(std::move(rocks));
}

}  // namespace graphsieve
