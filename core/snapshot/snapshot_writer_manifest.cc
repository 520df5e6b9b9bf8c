// WriteSnapshotDir's steps 3 and 4 (snapshot_writer_internal.h): the
// serving index file index.gsi, then the digests of every file, MANIFEST.json
// and the fsync of the version's tree.
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/format.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/memory_index.h"
#include "core/snapshot/snapshot_writer_internal.h"

namespace graphsieve {
namespace snapshot_internal {

// The layout of every index file this writer writes; the manifest states it
// (storage.serving_index.region_order), so the two are set from this one value.
constexpr RegionOrder kIndexRegionOrder = RegionOrder::kKeyOrdered;

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
      },
      kIndexRegionOrder);
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

namespace {

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
      if (d.ok())
        (*digests)[k] = *d;
      else
        status[k] = d.status();
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

}  // namespace

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
    part.index_key_ordered = kIndexRegionOrder == RegionOrder::kKeyOrdered;
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

}  // namespace snapshot_internal
}  // namespace graphsieve
