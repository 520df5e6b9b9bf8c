// VersionOpener::OpenStored reads and checks MANIFEST.json, verifies the
// listed files, then maps the version's index file or opens its RocksDB, and
// returns the reader of the lookup mode asked for: memory_snapshot_reader.h
// (kMemory) or rocksdb_snapshot_reader.h (kRocksDb); Open layers a delta over
// its base, OpenAllParts routes a partitioned version's parts.
#include "core/snapshot/version_opener.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/format.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/memory_snapshot_reader.h"
#include "core/snapshot/partitioned_snapshot_reader.h"
#include "core/snapshot/rocksdb_snapshot_reader.h"
#include "core/snapshot/snapshot_reader_internal.h"
#include "core/snapshot/snapshot_store.h"
#include "rocksdb/db.h"

namespace graphsieve {
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
    std::shared_ptr<std::atomic<int64_t>> open_dbs, SnapshotLoadStats* stats) {
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
                                                       *std::move(index), std::move(open_dbs));
  stats->index_seconds = absl::ToDoubleSeconds(absl::Now() - t0);
  stats->index_mapped = true;
  return reader;
}

std::string CacheKey(const std::string& root, const std::string& version,
                     const SnapshotReaderOptions& o) {
  return absl::StrCat(root, "/", version, "|", LookupModeName(o.lookup), "|", o.partition, "|",
                      o.use_index_file, "|", o.verify_checksums);
}

// Part I of a delta layers over part I of its base: a delta written in
// another part count than its base's is refused before either is opened,
// naming both (the builder writes none; a copied or hand-made one may exist).
// When either manifest cannot be read, the opens below report it.
absl::Status CheckPartCounts(const std::string& root, const std::string& version) {
  auto store = SnapshotStore::Create({root});
  if (!store.ok()) return absl::OkStatus();
  absl::StatusOr<ManifestSummary> delta = ReadPublishedManifest(**store, version);
  if (!delta.ok() || delta->base_version.empty()) return absl::OkStatus();
  absl::StatusOr<ManifestSummary> base = ReadPublishedManifest(**store, delta->base_version);
  if (!base.ok() || base->num_partitions == delta->num_partitions) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "delta version ", version, " is written in ", delta->num_partitions,
      delta->num_partitions == 1 ? " part" : " parts", ", its base ", delta->base_version, " in ",
      base->num_partitions, "; a delta must have its base's part count (build a new delta over ",
      delta->base_version, ")"));
}

}  // namespace

VersionOpener::VersionOpener() : open_dbs_(std::make_shared<std::atomic<int64_t>>(0)) {}

absl::StatusOr<std::shared_ptr<const SnapshotReader>> VersionOpener::OpenStored(
    const std::string& root, const std::string& version,
    const SnapshotReaderOptions& options) const {
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store = SnapshotStore::Create({root});
  if (!store.ok()) return store.status();
  return OpenStored(**store, version, options);
}

absl::StatusOr<std::shared_ptr<const SnapshotReader>> VersionOpener::OpenStored(
    const SnapshotStore& store, const std::string& version,
    const SnapshotReaderOptions& options) const {
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
        OpenMapped(dir, std::move(copy), options, open_dbs_, &stats);
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
  absl::StatusOr<std::unique_ptr<OpenDb>> db = OpenRocksDb(dir, parsed_format, options, open_dbs_);
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

absl::StatusOr<std::shared_ptr<const SnapshotReader>> VersionOpener::OpenAllParts(
    const SnapshotStore& store, const std::string& version, SnapshotReaderOptions options) const {
  absl::StatusOr<ManifestSummary> head = ReadPublishedManifest(store, version);
  if (!head.ok()) return head.status();
  const uint32_t parts = head->num_partitions;
  if (parts <= 1) {
    options.partition = -1;
    return OpenStored(store, version, options);
  }
  std::vector<std::shared_ptr<const SnapshotReader>> readers;
  for (uint32_t p = 0; p < parts; ++p) {
    options.partition = static_cast<int>(p);
    auto reader = OpenStored(store, version, options);
    if (!reader.ok()) {
      return absl::Status(reader.status().code(), absl::StrCat("version ", version, " part ", p,
                                                               ": ", reader.status().message()));
    }
    if ((*reader)->manifest().num_partitions != parts) {
      return absl::DataLossError(absl::StrCat("version ", version, " part ", p, ": written in ",
                                              (*reader)->manifest().num_partitions,
                                              " parts, part 0 says ", parts));
    }
    readers.push_back(*std::move(reader));
  }
  return std::shared_ptr<const SnapshotReader>(
      std::make_shared<PartitionedSnapshotReader>(std::move(readers)));
}

std::shared_ptr<const SnapshotReader> VersionOpener::Register(
    const std::string& key, std::shared_ptr<const SnapshotReader> reader) {
  absl::MutexLock lock(&mu_);
  // Drops the entries of readers nobody holds any more.
  absl::erase_if(bases_, [&key](const auto& kv) { return kv.first != key && kv.second.expired(); });
  std::weak_ptr<const SnapshotReader>& slot = bases_[key];
  if (std::shared_ptr<const SnapshotReader> alive = slot.lock()) return alive;
  slot = reader;
  return reader;
}

absl::StatusOr<std::shared_ptr<const SnapshotReader>> VersionOpener::SharedBase(
    const std::string& root, const std::string& version, const SnapshotReaderOptions& o) {
  const std::string key = CacheKey(root, version, o);
  {
    absl::MutexLock lock(&mu_);
    auto it = bases_.find(key);
    if (it != bases_.end()) {
      if (std::shared_ptr<const SnapshotReader> alive = it->second.lock()) return alive;
    }
  }
  // Opened outside the lock (a checksum pass); two racing opens keep one.
  auto opened = OpenStored(root, version, o);
  if (!opened.ok()) return opened.status();
  return Register(key, *std::move(opened));
}

absl::StatusOr<std::shared_ptr<const SnapshotReader>> VersionOpener::Open(
    const std::string& root, const std::string& version, const SnapshotReaderOptions& options) {
  if (absl::Status s = CheckPartCounts(root, version); !s.ok()) return s;
  auto delta = OpenStored(root, version, options);
  if (!delta.ok()) return delta.status();
  const std::string& base_version = (*delta)->manifest().base_version;
  // A full version is kept as the shared base its deltas will layer over, so
  // the first delta after it maps nothing again and serves from the same index.
  if (base_version.empty()) return Register(CacheKey(root, version, options), *std::move(delta));
  auto base = SharedBase(root, base_version, options);
  if (!base.ok()) {
    return absl::Status(base.status().code(),
                        absl::StrCat("delta version ", version, ": its base ", base_version, ": ",
                                     base.status().message()));
  }
  const ManifestSummary& b = (*base)->manifest();
  if (!b.base_version.empty() || b.version != base_version) {
    return absl::FailedPreconditionError(absl::StrCat("delta version ", version, ": its base ",
                                                      base_version, " is not a full version"));
  }
  return std::shared_ptr<const SnapshotReader>(
      std::make_shared<LayeredSnapshotReader>(std::move(*base), std::move(*delta)));
}

const MemoryIndex* ServingIndex(const SnapshotReader& reader) {
  if (const auto* layered = dynamic_cast<const LayeredSnapshotReader*>(&reader)) {
    return ServingIndex(layered->base());
  }
  const auto* memory = dynamic_cast<const MemorySnapshotReader*>(&reader);
  return memory != nullptr ? &memory->index() : nullptr;
}

std::vector<const MemoryIndex*> ServingIndexes(const SnapshotReader& reader) {
  std::vector<const MemoryIndex*> out;
  if (const auto* layered = dynamic_cast<const LayeredSnapshotReader*>(&reader)) {
    for (const SnapshotReader* layer : {&layered->delta(), &layered->base()}) {
      if (const MemoryIndex* index = ServingIndex(*layer)) out.push_back(index);
    }
  } else if (const MemoryIndex* index = ServingIndex(reader)) {
    out.push_back(index);
  }
  return out;
}

int VersionOpener::SharedBases() const {
  absl::MutexLock lock(&mu_);
  int n = 0;
  for (const auto& [key, weak] : bases_) n += weak.expired() ? 0 : 1;
  return n;
}

}  // namespace graphsieve
