// Writes one complete snapshot version directory (docs/DESIGN.md §3):
//   <dir>/db/            RocksDB, column families pairs / nodes / meta
//   <dir>/index.gsi      the serving index the server maps (memory_index.h)
//   <dir>/MANIFEST.json  parameters, counts, histogram, solver summaries,
//                        XXH3-64 of every file under db/ and of index.gsi
// from a PairTable and the PipelineResult computed on it. Everything is
// fsync'ed before WriteSnapshotDir returns. It does NOT publish: the caller
// writes into SnapshotStore::TempDir(version) and then calls
// SnapshotStore::Publish(version) (snapshot_store.h).
//
// The pairs are bulk-loaded: sorted SST files written by SstFileWriter (at
// most pairs_per_sst_file pairs each, disjoint key ranges, written by up to
// `threads` threads) and ingested with move semantics. For the
// Cuckoo format the ingested block-based files are then compacted into one
// CuckooTable through RocksDB's adaptive table factory (CuckooTable files
// cannot be ingested in RocksDB 7.8).
//
// Thread-safety: a pure function of its inputs; uses up to options.threads
// threads.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_WRITER_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_WRITER_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/records/pair_table.h"
#include "core/records/pipeline_result.h"
#include "core/snapshot/format.h"
#include "core/snapshot/manifest.h"

namespace graphsieve {

struct SnapshotWriterOptions {
  // Layout of the pairs column family (format.h). Block-based is fast to
  // write and to scan (the server's in-memory index is built by a scan);
  // cuckoo is RocksDB's fastest for point reads but slow to build. See
  // docs/SNAPSHOT.md for the measurements.
  snapshot::TableFormat pairs_format = snapshot::TableFormat::kBlockBased;
  int threads = 2;  // SST files written in parallel (>= 1)
  // Pairs per SST file of the pairs table at most: a file's bloom filter is
  // built in one piece at its end, so its size bounds the filter's working
  // set (4M pairs: 5 MB). More files change no key, value or table option;
  // docs/SCALING.md "The write stage" has the measurements.
  size_t pairs_per_sst_file = size_t{1} << 22;
  // Also write the serving index file (index.gsi, memory_index.h) that the
  // server maps; false writes a version as releases before it did.
  bool write_index = true;
  // Which part of a partitioned version this directory is (recorded in the
  // manifest and the index file); the caller passes that part's pairs and nodes.
  uint32_t partition = 0;
  uint32_t num_partitions = 1;
  // Write a version (or a part of one) that stores no pairs, only node
  // records: a delta's part whose users logged nothing new still carries the
  // new and updated item records (every part holds every item's node). false
  // refuses it (INVALID_ARGUMENT): a full build's empty part means more parts
  // than users.
  bool allow_no_pairs = false;
  // Called with (stage, fraction in [0,1]); may be empty.
  std::function<void(const std::string& stage, double fraction)> progress;
  absl::Status Validate() const;
};

struct SnapshotWriteStats {
  uint64_t db_bytes = 0;         // all files under db/
  uint64_t pairs_sst_bytes = 0;  // all .sst files: the pairs tables and the small nodes/meta ones
  uint64_t manifest_bytes = 0;
  size_t files = 0;
  double seconds_check = 0;     // checking the inputs (sizes, key order)
  double seconds_sst = 0;       // writing the SST files (and index.gsi alongside)
  double seconds_ingest = 0;    // open + ingest (+ compaction for cuckoo)
  double seconds_checksum = 0;  // digests, manifest, fsync (the two below and the manifest)
  double seconds_index = 0;     // building and writing index.gsi (inside seconds_sst)
  double seconds_digest = 0;    // XXH3-64 of the files for the manifest
  double seconds_fsync = 0;     // fsync of the version's tree
  uint64_t index_bytes = 0;
};

// Writes the version directory `dir` (must not exist; its parent must).
// REQUIRES: result is RunPipeline(pairs, ...) — sizes are checked
// (INVALID_ARGUMENT naming the field), pairs sorted by (user_id, item_id)
// (checked), info.parameters holds "method", "resistance", "alpha", "floor",
// "gamma", "sketch_dim", "seed".
// On error the partially written `dir` is left for the caller to remove.
absl::StatusOr<SnapshotWriteStats> WriteSnapshotDir(const std::string& dir, const PairTable& pairs,
                                                    const PipelineResult& result,
                                                    const snapshot::ManifestInfo& info,
                                                    const SnapshotWriterOptions& options);

// One version in `num_partitions` parts split by the user (core/io/partition.h):
// <dir>/part-<I>/ for I in [0, num_partitions), each a complete version
// directory (WriteSnapshotDir) of SlicePartition(pairs, result, I, N). With
// num_partitions == 1 it is WriteSnapshotDir(dir, ...): today's layout.
// options.partition/num_partitions are ignored (set per part). Stats are summed.
absl::StatusOr<SnapshotWriteStats> WriteVersionDir(const std::string& dir, const PairTable& pairs,
                                                   const PipelineResult& result,
                                                   const snapshot::ManifestInfo& info,
                                                   const SnapshotWriterOptions& options,
                                                   uint32_t num_partitions);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_WRITER_H_
