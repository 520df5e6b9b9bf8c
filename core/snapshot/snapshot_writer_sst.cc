// WriteSnapshotDir's steps 1 and 2 (snapshot_writer_internal.h): the SST
// files of every column family, the pairs' written by a pool of threads, then
// their ingestion into a fresh RocksDB.
#include <algorithm>
#include <atomic>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/format.h"
#include "core/snapshot/snapshot_writer_internal.h"
#include "rocksdb/db.h"
#include "rocksdb/sst_file_writer.h"

namespace graphsieve {
namespace snapshot_internal {
namespace {

using snapshot::FromRocks;
using snapshot::TableFormat;

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
  snapshot::InitRocksDbDefaults();
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
  snapshot::InitRocksDbDefaults();
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

// How many pairs SST files: at most options.pairs_per_sst_file pairs each
// (each file's bloom filter is built in one piece at Finish, with a random
// write per key: kept to a few MB the filter stays in the cache and the TLB,
// so the cost per pair does not grow with the log), and at least one per
// thread once there are 100,000 pairs per thread; none without pairs (an
// SST file cannot be empty: the pairs table then stays empty).
size_t PairsFileCount(size_t n, const SnapshotWriterOptions& options) {
  if (n == 0) return 0;
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
      part_status[p] =
          WritePairsSst((*files)[p], pairs, rates, n * p / parts, n * (p + 1) / parts, tick);
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

}  // namespace

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

namespace {

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
  absl::Status s;
  if (!staged.pairs.empty()) {  // a version without pairs (allow_no_pairs) has none
    s = FromRocks(db->IngestExternalFile(handles[1], staged.pairs, ingest), "ingest pairs");
  }
  if (s.ok())
    s = FromRocks(db->IngestExternalFile(handles[2], {staged.nodes}, ingest), "ingest nodes");
  if (s.ok())
    s = FromRocks(db->IngestExternalFile(handles[3], {staged.meta}, ingest), "ingest meta");
  if (s.ok() && options.pairs_format == TableFormat::kCuckoo && !staged.pairs.empty()) {
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

}  // namespace

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

}  // namespace snapshot_internal
}  // namespace graphsieve
