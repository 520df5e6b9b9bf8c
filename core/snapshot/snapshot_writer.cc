#include "core/snapshot/snapshot_writer.h"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/partition_split.h"
#include "core/snapshot/snapshot_store.h"
#include "rocksdb/db.h"
#include "rocksdb/sst_file_writer.h"

namespace graphsieve {
namespace {

using snapshot::FromRocks;
using snapshot::TableFormat;

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

absl::Status CheckInputs(const PairTable& pairs, const PipelineResult& result) {
  const size_t n = pairs.num_pairs();
  auto mismatch = [&](const char* field, size_t got, size_t want) {
    return absl::InvalidArgumentError(
        absl::StrCat("snapshot writer: ", field, " has ", got, " entries, expected ", want));
  };
  if (pairs.pair_item.size() != n) return mismatch("pairs.pair_item", pairs.pair_item.size(), n);
  if (result.rate.size() != n) return mismatch("result.rate", result.rate.size(), n);
  const size_t nodes = pairs.num_users() + pairs.num_items();
  const NodeTable& t = result.nodes;
  if (t.ids.size() != nodes) return mismatch("result.nodes.ids", t.ids.size(), nodes);
  if (t.is_item.size() != nodes) return mismatch("result.nodes.is_item", t.is_item.size(), nodes);
  if (t.records.size() != nodes) return mismatch("result.nodes.records", t.records.size(), nodes);
  if (t.sketch_dim < 0) return absl::InvalidArgumentError("snapshot writer: negative sketch_dim");
  if (t.sketch.size() != nodes * static_cast<size_t>(t.sketch_dim)) {
    return mismatch("result.nodes.sketch", t.sketch.size(), nodes * t.sketch_dim);
  }
  if (result.model.sketch_dim != t.sketch_dim) {
    return absl::InvalidArgumentError(absl::StrCat("snapshot writer: model.sketch_dim ",
                                                   result.model.sketch_dim, " != nodes.sketch_dim ",
                                                   t.sketch_dim));
  }
  for (size_t i = 0; i < n; ++i) {
    if (pairs.pair_user[i] >= pairs.num_users() || pairs.pair_item[i] >= pairs.num_items()) {
      return absl::InvalidArgumentError(
          absl::StrCat("snapshot writer: pair ", i, " has a node index out of range"));
    }
    if (i > 0) {
      uint64_t pu = pairs.user_ids[pairs.pair_user[i - 1]], cu = pairs.user_ids[pairs.pair_user[i]];
      uint64_t pi = pairs.item_ids[pairs.pair_item[i - 1]], ci = pairs.item_ids[pairs.pair_item[i]];
      if (!(pu < cu || (pu == cu && pi < ci))) {
        return absl::InvalidArgumentError(absl::StrCat(
            "snapshot writer: pair ", i, " (", cu, ",", ci, ") is not after (", pu, ",", pi,
            "): pairs must be sorted by (user_id, item_id) without duplicates"));
      }
    }
  }
  return absl::OkStatus();
}

// Writes pairs [begin, end) into one SST file.
absl::Status WritePairsSst(const std::string& path, const PairTable& pairs,
                           const std::vector<float>& rates, size_t begin, size_t end,
                           const std::function<void(size_t)>& tick) {
  rocksdb::Options options = snapshot::PairsSstWriterOptions();
  // Write-back starts every 8 MB (sync_file_range) instead of all at the
  // file's closing fsync, so the disk works while the next keys are encoded.
  rocksdb::EnvOptions env_options;
  env_options.bytes_per_sync = 8 << 20;
  // The pages stay cached (invalidate_page_cache = false): the manifest's
  // digests read every file back right after, and a server opens it next.
  rocksdb::SstFileWriter writer(env_options, options, /*column_family=*/nullptr,
                                /*invalidate_page_cache=*/false);
  absl::Status s = FromRocks(writer.Open(path), path);
  if (!s.ok()) return s;
  char key[snapshot::kPairKeyBytes];
  char value[snapshot::kPairValueBytes];
  for (size_t i = begin; i < end; ++i) {
    snapshot::EncodePairKey(pairs.user_ids[pairs.pair_user[i]], pairs.item_ids[pairs.pair_item[i]],
                            key);
    snapshot::EncodeRate(rates[i], value);
    s = FromRocks(
        writer.Put(rocksdb::Slice(key, sizeof(key)), rocksdb::Slice(value, sizeof(value))), path);
    if (!s.ok()) return s;
    if (tick && ((i - begin) & 0xfffff) == 0xfffff) tick(1 << 20);
  }
  return FromRocks(writer.Finish(), path);
}

absl::Status WriteNodesSst(const std::string& path, const NodeTable& nodes) {
  std::vector<size_t> order(nodes.ids.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (nodes.is_item[a] != nodes.is_item[b]) return nodes.is_item[a] < nodes.is_item[b];
    return nodes.ids[a] < nodes.ids[b];
  });
  rocksdb::Options options;
  options.table_factory = snapshot::SmallCfOptions(nullptr).table_factory;
  options.compression = rocksdb::kNoCompression;
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  absl::Status s = FromRocks(writer.Open(path), path);
  if (!s.ok()) return s;
  char key[snapshot::kNodeKeyBytes];
  for (size_t k = 0; k < order.size(); ++k) {
    size_t i = order[k];
    if (k > 0 && nodes.is_item[order[k - 1]] == nodes.is_item[i] &&
        nodes.ids[order[k - 1]] == nodes.ids[i]) {
      return absl::InvalidArgumentError(absl::StrCat("snapshot writer: node id ", nodes.ids[i],
                                                     " appears twice on the ",
                                                     nodes.is_item[i] ? "item" : "user", " side"));
    }
    snapshot::EncodeNodeKey(nodes.is_item[i] != 0, nodes.ids[i], key);
    std::string value = snapshot::EncodeNodeValue(
        nodes.records[i], nodes.sketch_dim > 0 ? nodes.SketchRow(i) : absl::Span<const float>());
    s = FromRocks(writer.Put(rocksdb::Slice(key, sizeof(key)), value), path);
    if (!s.ok()) return s;
  }
  if (order.empty()) {
    // SstFileWriter refuses to finish an empty file; an empty node table
    // means an empty snapshot, which the builder's gates reject anyway.
    return absl::InvalidArgumentError("snapshot writer: no nodes");
  }
  return FromRocks(writer.Finish(), path);
}

absl::Status WriteMetaSst(const std::string& path, const PipelineResult& result,
                          const snapshot::ManifestInfo& info) {
  rocksdb::Options options;
  options.table_factory = snapshot::SmallCfOptions(nullptr).table_factory;
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  absl::Status s = FromRocks(writer.Open(path), path);
  if (!s.ok()) return s;
  // Keys in ascending order.
  std::vector<std::pair<std::string, std::string>> kv = {
      {"format_version", std::to_string(snapshot::kFormatVersion)},
      {snapshot::kMetaUnseenModelKey, snapshot::EncodeUnseenModel(result.model)},
      {"version", info.version},
  };
  std::sort(kv.begin(), kv.end());
  for (const auto& [k, v] : kv) {
    s = FromRocks(writer.Put(k, v), path);
    if (!s.ok()) return s;
  }
  return FromRocks(writer.Finish(), path);
}

void Report(const SnapshotWriterOptions& options, const std::string& stage, double fraction) {
  if (options.progress) options.progress(stage, fraction);
}

// The SST files written into the staging directory, ready to be ingested.
struct StagedFiles {
  std::vector<std::string> pairs;  // disjoint, ascending key ranges
  std::string nodes;
  std::string meta;
};

// How many pairs SST files: at most options.pairs_per_sst_file pairs each
// (each file's bloom filter is built in one piece at Finish, with a random
// write per key: kept to a few MB the filter stays in the cache and the TLB,
// so the cost per pair does not grow with the log), and at least one per
// thread once there are 100,000 pairs per thread.
size_t PairsFileCount(size_t n, const SnapshotWriterOptions& options) {
  const size_t per_file = options.pairs_per_sst_file;
  const size_t by_size = (n + per_file - 1) / per_file;
  const size_t by_threads = std::min<size_t>(options.threads, std::max<size_t>(1, n / 100000));
  return std::max<size_t>({1, by_size, by_threads});
}

// Pairs split into contiguous key ranges of equal size, one SST file each;
// `threads` workers take the next file in turn. The calling thread first
// runs `first_task` (may be empty: the serving index), so that single-threaded
// work overlaps the other workers' files instead of following them.
absl::Status WritePairsParallel(const std::string& staging, const PairTable& pairs,
                                const std::vector<float>& rates,
                                const SnapshotWriterOptions& options,
                                const std::function<absl::Status()>& first_task,
                                std::vector<std::string>* files) {
  const size_t n = pairs.num_pairs();
  const size_t parts = PairsFileCount(n, options);
  files->assign(parts, "");
  for (size_t p = 0; p < parts; ++p) (*files)[p] = absl::StrFormat("%s/pairs-%06d.sst", staging, p);
  std::vector<absl::Status> part_status(parts);
  std::atomic<size_t> written{0}, next{0};
  std::atomic<bool> failed{false};
  // Progress is reported from the calling thread only (the callback need not
  // be thread-safe); the others just count.
  auto work = [&](bool reports) {
    auto tick = [&](size_t k) {
      size_t w = written.fetch_add(k) + k;
      if (reports) Report(options, "write pairs", std::min(1.0, static_cast<double>(w) / n));
    };
    for (size_t p = next.fetch_add(1); p < parts && !failed; p = next.fetch_add(1)) {
      part_status[p] = WritePairsSst((*files)[p], pairs, rates, n * p / parts,
                                     n * (p + 1) / parts, tick);
      if (!part_status[p].ok()) failed = true;
    }
  };
  absl::Status first_status;
  {
    std::vector<std::thread> workers;
    const size_t threads = std::min<size_t>(options.threads, parts + (first_task ? 1 : 0));
    for (size_t t = 1; t < threads; ++t) workers.emplace_back(work, false);
    if (first_task) first_status = first_task();
    if (!first_status.ok()) failed = true;
    work(true);
    for (auto& w : workers) w.join();
  }
  if (!first_status.ok()) return first_status;
  for (const absl::Status& ps : part_status) {
    if (!ps.ok()) return ps;
  }
  return absl::OkStatus();
}

// Step 1: every column family's SST files under `staging`, and meanwhile
// `first_task` on the calling thread (WritePairsParallel).
absl::Status WriteStagedFiles(const std::string& staging, const PairTable& pairs,
                              const PipelineResult& result, const snapshot::ManifestInfo& info,
                              const SnapshotWriterOptions& options,
                              const std::function<absl::Status()>& first_task,
                              StagedFiles* staged) {
  absl::Status s =
      WritePairsParallel(staging, pairs, result.rate, options, first_task, &staged->pairs);
  if (!s.ok()) return s;
  staged->nodes = staging + "/nodes.sst";
  staged->meta = staging + "/meta.sst";
  s = WriteNodesSst(staged->nodes, result.nodes);
  if (!s.ok()) return s;
  s = WriteMetaSst(staged->meta, result, info);
  if (!s.ok()) return s;
  Report(options, "write pairs", 1.0);
  return absl::OkStatus();
}

rocksdb::DBOptions FreshDbOptions(int threads) {
  rocksdb::DBOptions db_options;
  db_options.create_if_missing = true;
  db_options.create_missing_column_families = true;
  db_options.info_log = snapshot::NullLogger();
  db_options.max_background_jobs = std::max(2, threads);
  db_options.max_subcompactions = static_cast<uint32_t>(threads);
  db_options.use_fsync = true;
  db_options.allow_mmap_reads = true;  // CuckooTable (the compaction output is re-opened)
  db_options.max_manifest_file_size = 64 << 20;
  return db_options;
}

// Destroys the handles, then closes the database; the first error wins.
absl::Status CloseDb(const std::string& db_dir, std::unique_ptr<rocksdb::DB> db,
                     std::vector<rocksdb::ColumnFamilyHandle*>& handles) {
  absl::Status first;
  for (auto* h : handles) {
    absl::Status c = FromRocks(db->DestroyColumnFamilyHandle(h), db_dir);
    if (first.ok()) first = c;
  }
  handles.clear();
  absl::Status c = FromRocks(db->Close(), db_dir);
  if (first.ok()) first = c;
  return first;
}

// Ingests (moves) the staged files; for cuckoo, compacts the pairs into one
// CuckooTable. `handles` are default, pairs, nodes, meta.
absl::Status IngestStaged(rocksdb::DB* db, const std::vector<rocksdb::ColumnFamilyHandle*>& handles,
                          const StagedFiles& staged, const SnapshotWriterOptions& options) {
  rocksdb::IngestExternalFileOptions ingest;
  ingest.move_files = true;
  ingest.allow_global_seqno = true;
  ingest.write_global_seqno = false;
  absl::Status s =
      FromRocks(db->IngestExternalFile(handles[1], staged.pairs, ingest), "ingest pairs");
  if (s.ok())
    s = FromRocks(db->IngestExternalFile(handles[2], {staged.nodes}, ingest), "ingest nodes");
  if (s.ok())
    s = FromRocks(db->IngestExternalFile(handles[3], {staged.meta}, ingest), "ingest meta");
  if (s.ok() && options.pairs_format == TableFormat::kCuckoo) {
    Report(options, "compact pairs", 0.0);
    rocksdb::CompactRangeOptions cro;
    cro.bottommost_level_compaction = rocksdb::BottommostLevelCompaction::kForce;
    cro.exclusive_manual_compaction = true;
    cro.max_subcompactions = static_cast<uint32_t>(options.threads);
    s = FromRocks(db->CompactRange(cro, handles[1], nullptr, nullptr), "compact pairs");
    Report(options, "compact pairs", 1.0);
  }
  return s;
}

// Step 2: a fresh RocksDB at `db_dir` holding the staged files.
absl::Status IngestIntoFreshDb(const std::string& db_dir, const StagedFiles& staged,
                               const SnapshotWriterOptions& options) {
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
      {rocksdb::kDefaultColumnFamilyName, snapshot::SmallCfOptions(nullptr)},
      {snapshot::kPairsCf,
       snapshot::PairsCfOptions(options.pairs_format, /*for_write=*/true, nullptr)},
      {snapshot::kNodesCf, snapshot::SmallCfOptions(nullptr)},
      {snapshot::kMetaCf, snapshot::SmallCfOptions(nullptr)},
  };
  std::vector<rocksdb::ColumnFamilyHandle*> handles;
  rocksdb::DB* raw = nullptr;
  absl::Status s = FromRocks(
      rocksdb::DB::Open(FreshDbOptions(options.threads), db_dir, cfs, &handles, &raw), db_dir);
  if (!s.ok()) return s;
  std::unique_ptr<rocksdb::DB> db(raw);
  s = IngestStaged(db.get(), handles, staged, options);
  absl::Status c = CloseDb(db_dir, std::move(db), handles);
  if (!s.ok()) return s;
  return c;
}

// Step 3: the serving index file, built from the same arrays the RocksDB
// tables were written from; `index_digest` gets its size and XXH3-64.
absl::Status WriteIndexFile(const std::string& dir, const PairTable& pairs,
                            const PipelineResult& result, const SnapshotWriterOptions& options,
                            SnapshotWriteStats* stats, snapshot::FileDigest* index_digest) {
  const auto t0 = std::chrono::steady_clock::now();
  Report(options, "write index", 0.0);
  const NodeTable& nodes = result.nodes;
  absl::StatusOr<std::unique_ptr<const MemoryIndex>> index = MemoryIndex::Build(
      nodes.sketch_dim, pairs.num_pairs(),
      [&](const MemoryIndex::NodeSink& fn) {
        for (size_t i = 0; i < nodes.ids.size(); ++i) {
          fn(nodes.is_item[i] != 0, nodes.ids[i], nodes.records[i],
             nodes.sketch_dim > 0 ? nodes.SketchRow(i) : absl::Span<const float>());
        }
        return absl::OkStatus();
      },
      [&](const MemoryIndex::PairSink& fn) {
        for (size_t i = 0; i < pairs.num_pairs(); ++i) {
          fn(pairs.user_ids[pairs.pair_user[i]], pairs.item_ids[pairs.pair_item[i]],
             result.rate[i]);
        }
        return absl::OkStatus();
      });
  if (!index.ok()) {
    return absl::InternalError(absl::StrCat("snapshot writer: index: ", index.status().message()));
  }
  IndexFileInfo info;
  info.partition = options.partition;
  info.num_partitions = options.num_partitions;
  info.unseen_model = snapshot::EncodeUnseenModel(result.model);
  const std::string path = absl::StrCat(dir, "/", snapshot::kIndexFile);
  absl::Status s = (*index)->WriteFile(path, info, &index_digest->xxh3);
  struct stat st;
  if (s.ok() && ::stat(path.c_str(), &st) != 0) {
    s = absl::InternalError(absl::StrCat("stat ", path, ": ", std::strerror(errno)));
  }
  if (s.ok()) index_digest->size_bytes = static_cast<uint64_t>(st.st_size);
  stats->seconds_index = SecondsSince(t0);
  Report(options, "write index", 1.0);
  return s;
}

// Size and XXH3-64 of every file in `paths`, read by up to `threads`
// threads (the files were just written: the reads come from the page cache).
absl::Status DigestFiles(const std::vector<std::string>& paths, int threads,
                         std::vector<snapshot::FileDigest>* digests) {
  digests->assign(paths.size(), {});
  std::vector<absl::Status> status(paths.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t k = next.fetch_add(1); k < paths.size(); k = next.fetch_add(1)) {
      absl::StatusOr<snapshot::FileDigest> d = snapshot::DigestFile(paths[k]);
      if (d.ok()) (*digests)[k] = *d; else status[k] = d.status();
    }
  };
  std::vector<std::thread> workers;
  for (int t = 1; t < std::min<int>(threads, static_cast<int>(paths.size())); ++t) {
    workers.emplace_back(work);
  }
  work();
  for (auto& w : workers) w.join();
  for (const absl::Status& st : status) {
    if (!st.ok()) return st;
  }
  return absl::OkStatus();
}

// Step 4: digests of every file under db/ (index.gsi's, `index_digest`, was
// taken while it was written), MANIFEST.json, fsync of the tree.
absl::Status WriteManifestAndSync(const std::string& dir, const PairTable& pairs,
                                  const PipelineResult& result, const snapshot::ManifestInfo& info,
                                  const SnapshotWriterOptions& options,
                                  const snapshot::FileDigest& index_digest,
                                  SnapshotWriteStats* stats) {
  Report(options, "checksum", 0.0);
  auto t0 = std::chrono::steady_clock::now();
  const std::string db_dir = absl::StrCat(dir, "/", snapshot::kDbDir);
  absl::StatusOr<std::vector<std::string>> files = snapshot::ListFilesRecursive(db_dir);
  if (!files.ok()) return files.status();
  std::vector<std::string> paths;
  for (const std::string& rel : *files) paths.push_back(db_dir + "/" + rel);
  std::vector<snapshot::FileDigest> digests;
  absl::Status s = DigestFiles(paths, options.threads, &digests);
  if (!s.ok()) return s;
  std::vector<snapshot::ManifestFileEntry> entries;
  for (size_t k = 0; k < files->size(); ++k) {
    const std::string& rel = (*files)[k];
    const snapshot::FileDigest& d = digests[k];
    entries.push_back({absl::StrCat(snapshot::kDbDir, "/", rel), d.size_bytes, d.xxh3});
    stats->db_bytes += d.size_bytes;
    if (rel.size() > 4 && rel.compare(rel.size() - 4, 4, ".sst") == 0) {
      stats->pairs_sst_bytes += d.size_bytes;
    }
  }
  snapshot::ManifestPartInfo part;
  part.partition = options.partition;
  part.num_partitions = options.num_partitions;
  if (options.write_index) {
    entries.push_back({snapshot::kIndexFile, index_digest.size_bytes, index_digest.xxh3});
    part.index_path = snapshot::kIndexFile;
    part.index_bytes = index_digest.size_bytes;
    stats->index_bytes = index_digest.size_bytes;
  }
  stats->seconds_digest = SecondsSince(t0);
  stats->files = entries.size();
  nlohmann::json manifest =
      snapshot::BuildManifest(pairs, result, info, options.pairs_format, entries, part);
  const std::string text = manifest.dump(2) + "\n";
  stats->manifest_bytes = text.size();
  s = snapshot::WriteFileAtomic(absl::StrCat(dir, "/", snapshot::kManifestFile), text);
  if (!s.ok()) return s;
  t0 = std::chrono::steady_clock::now();
  s = snapshot::FsyncTree(dir);
  stats->seconds_fsync = SecondsSince(t0);
  return s;
}

}  // namespace

absl::Status SnapshotWriterOptions::Validate() const {
  if (num_partitions < 1 || partition >= num_partitions) {
    return absl::InvalidArgumentError(absl::StrCat("partition ", partition, " of ", num_partitions,
                                                   ": need 0 <= partition < num_partitions"));
  }
  if (threads < 1 || threads > 256) {
    return absl::InvalidArgumentError(absl::StrCat("threads must be in [1, 256], got ", threads));
  }
  if (pairs_per_sst_file < 1) return absl::InvalidArgumentError("pairs_per_sst_file must be >= 1");
  return absl::OkStatus();
}

absl::StatusOr<SnapshotWriteStats> WriteSnapshotDir(const std::string& dir, const PairTable& pairs,
                                                    const PipelineResult& result,
                                                    const snapshot::ManifestInfo& info,
                                                    const SnapshotWriterOptions& options) {
  absl::Status s = options.Validate();
  if (!s.ok()) return s;
  auto t0 = std::chrono::steady_clock::now();
  s = CheckInputs(pairs, result);
  if (!s.ok()) return s;
  SnapshotWriteStats stats;
  stats.seconds_check = SecondsSince(t0);
  if (pairs.num_pairs() == 0) return absl::InvalidArgumentError("snapshot writer: no pairs");
  if (::mkdir(dir.c_str(), 0755) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create snapshot directory ", dir, ": ", std::strerror(errno)));
  }
  const std::string staging = absl::StrCat(dir, "/staging");
  if (::mkdir(staging.c_str(), 0755) != 0) {
    return absl::InternalError(absl::StrCat("mkdir ", staging, ": ", std::strerror(errno)));
  }
  // The serving index (one thread) is written while the other threads write
  // the pairs' SST files; seconds_index overlaps seconds_sst.
  StagedFiles staged;
  snapshot::FileDigest index_digest;
  std::function<absl::Status()> index_task;
  if (options.write_index) {
    index_task = [&] { return WriteIndexFile(dir, pairs, result, options, &stats, &index_digest); };
  }
  t0 = std::chrono::steady_clock::now();
  s = WriteStagedFiles(staging, pairs, result, info, options, index_task, &staged);
  if (!s.ok()) return s;
  stats.seconds_sst = SecondsSince(t0);

  t0 = std::chrono::steady_clock::now();
  s = IngestIntoFreshDb(absl::StrCat(dir, "/", snapshot::kDbDir), staged, options);
  if (!s.ok()) return s;
  s = snapshot::RemoveTree(staging);
  if (!s.ok()) return s;
  stats.seconds_ingest = SecondsSince(t0);

  t0 = std::chrono::steady_clock::now();
  s = WriteManifestAndSync(dir, pairs, result, info, options, index_digest, &stats);
  if (!s.ok()) return s;
  stats.seconds_checksum = SecondsSince(t0);
  Report(options, "checksum", 1.0);
  return stats;
}

absl::StatusOr<SnapshotWriteStats> WriteVersionDir(const std::string& dir, const PairTable& pairs,
                                                   const PipelineResult& result,
                                                   const snapshot::ManifestInfo& info,
                                                   const SnapshotWriterOptions& options,
                                                   uint32_t num_partitions) {
  if (num_partitions < 1 || num_partitions > 4096) {
    return absl::InvalidArgumentError(
        absl::StrCat("partitions must be in [1, 4096], got ", num_partitions));
  }
  SnapshotWriterOptions part_options = options;
  part_options.partition = 0;
  part_options.num_partitions = 1;
  if (num_partitions == 1) return WriteSnapshotDir(dir, pairs, result, info, part_options);
  if (::mkdir(dir.c_str(), 0755) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot create snapshot directory ", dir, ": ", std::strerror(errno)));
  }
  SnapshotWriteStats total;
  for (uint32_t p = 0; p < num_partitions; ++p) {
    PartSlice slice = SlicePartition(pairs, result, p, num_partitions);
    if (slice.pairs.num_pairs() == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "partition ", p, " of ", num_partitions, " holds no pairs (", pairs.num_users(),
          " users in all): use fewer partitions"));
    }
    part_options.partition = p;
    part_options.num_partitions = num_partitions;
    absl::StatusOr<SnapshotWriteStats> w = WriteSnapshotDir(
        absl::StrCat(dir, "/", SnapshotStore::PartDirName(p)), slice.pairs, slice.result, info,
        part_options);
    if (!w.ok()) return w.status();
    total.db_bytes += w->db_bytes;
    total.pairs_sst_bytes += w->pairs_sst_bytes;
    total.manifest_bytes += w->manifest_bytes;
    total.files += w->files;
    total.seconds_check += w->seconds_check;
    total.seconds_sst += w->seconds_sst;
    total.seconds_digest += w->seconds_digest;
    total.seconds_fsync += w->seconds_fsync;
    total.seconds_ingest += w->seconds_ingest;
    total.seconds_checksum += w->seconds_checksum;
    total.seconds_index += w->seconds_index;
    total.index_bytes += w->index_bytes;
  }
  absl::Status s = snapshot::FsyncTree(dir);
  if (!s.ok()) return s;
  return total;
}

}  // namespace graphsieve
