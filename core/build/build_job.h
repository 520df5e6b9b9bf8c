// The offline build job behind graphsieve-build: read the impression logs,
// run the MA-EC pipeline, check the validation gates, optionally export the
// per-pair CSV, write the snapshot and publish it atomically (docs/DESIGN.md §3,
// docs/SNAPSHOT.md).
//
// Thread-safety: RunBuild is a function of its options; two RunBuild calls
// on the same snapshot root serialise on the root's publish lock.
#ifndef GRAPHSIEVE_CORE_BUILD_BUILD_JOB_H_
#define GRAPHSIEVE_CORE_BUILD_BUILD_JOB_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/io/log_reader.h"
#include "core/maec/pipeline.h"
#include "core/snapshot/format.h"
#include "nlohmann/json.hpp"

namespace graphsieve {

struct BuildOptions {
  std::vector<std::string> inputs;  // log files, read in order and concatenated
  LogReaderOptions reader;          // columns, label rule, delimiter, id mode, bad rows
  PipelineOptions pipeline;         // method, alpha, floor, gamma, resistance, seed, threads
  std::string snapshot_root;        // where versions are published; empty only with dry_run
  int keep_versions = 5;            // retention: newest N (plus CURRENT and pinned ones)
  snapshot::TableFormat pairs_format = snapshot::TableFormat::kBlockBased;
  // Parts of the version, split by core/io/partition.h (docs/SNAPSHOT.md
  // "Partitioned versions"); 1 = one unpartitioned version directory.
  int partitions = 1;
  std::string export_csv;           // empty = no export
  bool dry_run = false;             // compute + gates (+ export) but publish nothing
  double lock_timeout_seconds = 0;  // wait this long for another publisher to finish
  double gate_tolerance = 1e-6;     // |mean rate over negatives − alpha| allowed
  // Validates with messages that name the command-line flag.
  absl::Status Validate() const;
};

// Stage progress (graphsieve-build shows it on the terminal).
struct BuildObserver {
  std::function<void(const std::string& stage)> stage_started;
  std::function<void(const std::string& stage, double fraction, uint64_t items)> progress;
  std::function<void(const std::string& stage, double seconds)> stage_done;
};

struct BuildReport {
  std::string version;  // empty when nothing was published
  std::string snapshot_dir;
  bool published = false;
  uint64_t instances = 0, negative_instances = 0, pairs = 0, positive_pairs = 0;
  uint64_t users = 0, items = 0, components = 0;
  uint64_t rows_read = 0, bad_rows_skipped = 0, input_bytes = 0;
  double achieved_negative_mean_rate = 0;
  std::string resistance_route;
  uint64_t db_bytes = 0;
  double db_bytes_per_pair = 0;
  std::vector<StageTiming> timings;  // read, pair table, pipeline, gates, export, write, publish
  // The write stage's parts (check, sst, ingest, index, digest, fsync; wall
  // seconds, SnapshotWriteStats), for benchmarks: JSON "write_seconds".
  std::vector<StageTiming> write_timings;
  // CPU seconds (user + system of the process, all threads) per stage, in
  // the order of `timings`: JSON "stage_cpu_seconds". On a shared machine
  // they compare across runs where wall seconds do not.
  std::vector<StageTiming> stage_cpu;
  std::vector<std::string> deleted_versions;
  std::vector<std::string> removed_temporaries;
  std::vector<std::string> warnings;
  // Distributed build (dist_build.h), on rank 0: one object per rank with
  // rank, pairs, instances, wall_seconds, cpu_seconds, peak_rss_bytes. Null otherwise.
  nlohmann::json ranks;
  nlohmann::json ToJson() const;
};

// A failed validation gate: FAILED_PRECONDITION whose message starts with
// "gate <name> failed:". Other errors keep their codes (INVALID_ARGUMENT for
// bad input naming file/line/column, DATA_LOSS, ...).
absl::StatusOr<BuildReport> RunBuild(const BuildOptions& options, const BuildObserver& observer);

// The gates alone (exposed for tests): non-empty, finite rates in (0, 1],
// mean over negative instances within `tolerance` of alpha, every solve converged.
absl::Status CheckGates(const PairTable& pairs, const PipelineResult& result, double alpha,
                        double tolerance);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_BUILD_BUILD_JOB_H_
