// Internal to graphsieve_snapshot: the stages of WriteSnapshotDir
// (snapshot_writer.h), shared by the driver (snapshot_writer.cc), the SST
// files and their ingestion (snapshot_writer_sst.cc), and index.gsi and the
// manifest with its digests (snapshot_writer_manifest.cc). Not a public
// interface.
//
// Thread-safety: pure functions of their inputs; each uses up to
// options.threads threads.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_WRITER_INTERNAL_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_WRITER_INTERNAL_H_

#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/records/pair_table.h"
#include "core/records/pipeline_result.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_writer.h"

namespace graphsieve {
namespace snapshot_internal {

inline double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

inline void Report(const SnapshotWriterOptions& options, const std::string& stage,
                   double fraction) {
  if (options.progress) options.progress(stage, fraction);
}

// The SST files written into the staging directory, ready to be ingested.
struct StagedFiles {
  std::vector<std::string> pairs;  // disjoint, ascending key ranges
  std::string nodes;
  std::string meta;
};

// Defined in snapshot_writer_sst.cc.

// Step 1: every column family's SST files under `staging`, and meanwhile
// `first_task` on the calling thread (WritePairsParallel).
absl::Status WriteStagedFiles(const std::string& staging, const PairTable& pairs,
                              const PipelineResult& result, const snapshot::ManifestInfo& info,
                              const SnapshotWriterOptions& options,
                              const std::function<absl::Status()>& first_task, StagedFiles* staged);

// Step 2: a fresh RocksDB at `db_dir` holding the staged files.
absl::Status IngestIntoFreshDb(const std::string& db_dir, const StagedFiles& staged,
                               const SnapshotWriterOptions& options);

// Defined in snapshot_writer_manifest.cc.

// Step 3: the serving index file, built from the same arrays the RocksDB
// tables were written from; `index_digest` gets its size and XXH3-64.
absl::Status WriteIndexFile(const std::string& dir, const PairTable& pairs,
                            const PipelineResult& result, const SnapshotWriterOptions& options,
                            SnapshotWriteStats* stats, snapshot::FileDigest* index_digest);

// Step 4: digests of every file under db/ (index.gsi's, `index_digest`, was
// taken while it was written), MANIFEST.json, fsync of the tree.
absl::Status WriteManifestAndSync(const std::string& dir, const PairTable& pairs,
                                  const PipelineResult& result, const snapshot::ManifestInfo& info,
                                  const SnapshotWriterOptions& options,
                                  const snapshot::FileDigest& index_digest,
                                  SnapshotWriteStats* stats);

}  // namespace snapshot_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_WRITER_INTERNAL_H_
