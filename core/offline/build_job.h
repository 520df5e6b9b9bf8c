// The build job (docs/DESIGN.md §3 and §5, docs/SNAPSHOT.md): read the
// impression logs, run the MA-EC pipeline, check the validation gates,
// optionally export the per-pair CSV, write the snapshot and publish it
// atomically. One driver runs the stages over a Communicator
// (core/distributed/communicator.h); the single-process build is the one-rank
// communicator, `mpirun -np N graphsieve-build <the same flags>` runs it on
// every rank with an MPI communicator and publishes one version.
//
//   open       rank 0 opens (creating if missing) the snapshot root
//   read       rank r parses the --input files k with k mod N == r (whole
//              files: give at least N files to use every rank's reader),
//              digesting them for the manifest on a thread of its own
//   pair_table rows go to rank PartitionOfUser(user, N) (core/io/partition.h);
//              a pair table per rank with global user/item indices
//   pilot      (a pilot-based --method without --pilot_col) the built-in
//              pilot fitted, cross-fitted over folds of the pairs: every
//              rank's pairs all-gathered, the fits split over ranks, the
//              models all-gathered (build_pilot.h)
//   pipeline   the positive pairs all-gathered (every rank holds the graph);
//              resistance columns split across ranks; node sums, the
//              hardness range and the α fit (one global ρ, exact) all-reduced
//   export     (--export, N > 1) the gates over every rank's pairs, then each
//              rank writes its users' rows to <FILE>.part-<r>-of-<N> (the
//              names of its users routed to it in "read"), rank 0 joins the
//              parts into FILE by concatenation in rank order (export_csv.h)
//   gather     rates streamed to rank 0 in chunks; per-node counts and the
//              DEFAULT fit there
//   gates, export, write, publish
//              on rank 0 (export: one rank only), which flips CURRENT only
//              after every rank has confirmed success (an agreement round)
// With one rank every exchange is a no-op: the table is already whole and in
// order. With --partitions P a multiple of N > 1 (with or without --export, no
// --dry_run) there is no gather: every rank checks the gates on its pairs (the
// negative mean all-reduced) and writes parts p ≡ rank (mod N) of the version
// into rank 0's <version>.tmp/ on the shared snapshot root; rank 0 publishes
// after the agreement (dist_parts.h).
// A failure on any rank publishes nothing and leaves CURRENT as it was; an
// error (bad row: file and line) is returned on every rank, prefixed with the
// rank that hit it when N > 1. After a gather rank 0 holds every pair's rate
// at the end (~17 bytes per pair), the other ranks only their own pairs.
//
// Thread-safety: RunBuild is a collective (every rank calls it once with the
// same options); two builds on the same snapshot root serialise on the root's
// publish lock.
#ifndef GRAPHSIEVE_CORE_OFFLINE_BUILD_JOB_H_
#define GRAPHSIEVE_CORE_OFFLINE_BUILD_JOB_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/distributed/communicator.h"
#include "core/io/log_reader.h"
#include "core/maec/pipeline.h"
#include "core/maec/pipeline_options.h"
#include "core/model/pilot.h"
#include "core/snapshot/format.h"
#include "nlohmann/json.hpp"

namespace graphsieve {

// The largest --sketch_dim a build accepts (the snapshot stores a row of
// about that many floats per node).
inline constexpr int kMaxSketchDim = 4096;

struct BuildOptions {
  std::vector<std::string> inputs;  // log files, read in order and concatenated
  LogReaderOptions reader;          // columns, label rule, delimiter, id mode, bad rows
  PipelineOptions pipeline;         // method, alpha, floor, gamma, resistance, seed, threads
  // The built-in pilot (build_pilot.h), fitted when a pilot-based method has
  // no reader.pilot_column; its seed and threads are the pipeline's.
  PilotOptions pilot;
  std::string snapshot_root;  // where versions are published; empty only with dry_run
  int keep_versions = 5;      // retention: newest N (plus CURRENT and pinned ones)
  snapshot::TableFormat pairs_format = snapshot::TableFormat::kBlockBased;
  // Parts of the version, split by core/io/partition.h (docs/SNAPSHOT.md
  // "Partitioned versions"); 1 = one unpartitioned version directory.
  int partitions = 1;
  std::string export_csv;           // empty = no export
  bool dry_run = false;             // compute + gates (+ export) but publish nothing
  double lock_timeout_seconds = 0;  // wait this long for another publisher to finish
  // |mean rate over negatives − alpha| allowed; the smallest alpha accepted is
  // its size (kMinAlpha, core/maec/pipeline_options.h).
  double gate_tolerance = kMinAlpha;
  // Where the rule came from, when graphsieve-eval tune chose it (its flag file
  // sets --tune_rule, --tune_date, --tune_report_digest): recorded in the
  // manifest's "tune" object (docs/SNAPSHOT.md). All empty = not recorded;
  // they do not change any rate.
  std::string tune_rule, tune_date, tune_report_digest;
  // Validates with messages that name the command-line flag.
  absl::Status Validate() const;
  absl::Status ValidateTuneProvenance() const;  // the tune_* fields (part of Validate)
};

// Stage progress (graphsieve-build shows it on the terminal; its test-only
// build, tests/distributed/build_testing_main.cc, kills a rank from
// stage_done). Every rank calls its own observer; stage_done once the stage
// has succeeded on every rank.
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
  // The first rows skipped under --max_bad_rows, as the reader said why
  // ("log.csv:17: expected 3 fields ..."), in rank order; at most
  // kMaxBadRowExamples. JSON "bad_row_examples".
  std::vector<std::string> bad_row_examples;
  static constexpr size_t kMaxBadRowExamples = 10;
  double achieved_negative_mean_rate = 0;
  std::string resistance_route;
  uint64_t db_bytes = 0;
  double db_bytes_per_pair = 0;
  std::vector<StageTiming> timings;  // the stages above that ran, in order
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
  // The built-in pilot (build_pilot.h), when fitted: the mean instance
  // log-loss of its cross-fitted scores over every pair (JSON "pilot").
  bool built_in_pilot = false;
  double pilot_cross_fitted_log_loss = 0;
  // A build over several ranks, on rank 0: one object per rank with rank,
  // pairs, instances, wall_seconds, cpu_seconds, peak_rss_bytes. Null otherwise.
  nlohmann::json ranks;
  nlohmann::json ToJson() const;
};

// The build library's entry: options are validated here first
// (options.Validate(): INVALID_ARGUMENT naming the command-line flag); the
// pipeline stages inside (RunPipeline, ComputeConductance) only assert them in
// debug builds. A failed validation gate: FAILED_PRECONDITION whose message starts with
// "gate <name> failed:" (after "rank R: " on several ranks). Other errors
// keep their codes (INVALID_ARGUMENT for bad input naming file/line/column,
// DATA_LOSS, ...). The report's counts are global on every rank;
// version/published and the per-rank resource table are filled on rank 0.
absl::StatusOr<BuildReport> RunBuild(const BuildOptions& options, const BuildObserver& observer,
                                     Communicator& comm);

// The single-process build: RunBuild over a one-rank communicator.
absl::StatusOr<BuildReport> RunBuild(const BuildOptions& options, const BuildObserver& observer);

// The process's peak resident set size so far (getrusage), in bytes.
uint64_t PeakRssBytes();

// The gates alone (exposed for tests): non-empty, finite rates in (0, 1],
// mean over negative instances within `tolerance` of alpha, every solve converged.
absl::Status CheckGates(const PairTable& pairs, const PipelineResult& result, double alpha,
                        double tolerance);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_OFFLINE_BUILD_JOB_H_
