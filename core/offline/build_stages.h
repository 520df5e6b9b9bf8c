// Stages of the build job (build_job.cc and the build_*.cc, dist_*.cc next
// to it). Internal to core/offline/.
//
// Thread-safety: as RunBuild (build_job.h).
#ifndef GRAPHSIEVE_CORE_OFFLINE_BUILD_STAGES_H_
#define GRAPHSIEVE_CORE_OFFLINE_BUILD_STAGES_H_

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/distributed/communicator.h"
#include "core/offline/build_job.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_store.h"

namespace graphsieve {
namespace build_internal {

// Opens (creating if missing) the snapshot root, first checking that this
// process may publish there (SnapshotStore::CheckWritableRoot), so that an
// unusable root fails before the log is read; errors name --snapshot_root.
absl::StatusOr<std::unique_ptr<SnapshotStore>> OpenStore(const std::string& root);

// Opens the snapshot root to read it only (a delta's dry run): nothing is
// created; errors name --snapshot_root.
absl::StatusOr<std::unique_ptr<SnapshotStore>> OpenExistingStore(const std::string& root);

// Size of `path` in bytes, 0 when it cannot be stat'ed.
uint64_t FileSizeOrZero(const std::string& path);

// After some input files were parsed into `log` (disk_bytes_done bytes on
// disk), reserves its columns for the files still to come (disk_bytes_left),
// at the rows per disk byte seen so far plus 3%: the reader reserves for one
// file at a time, so without this each later file copies the columns again.
void ReserveForInputsLeft(uint64_t disk_bytes_done, uint64_t disk_bytes_left, ImpressionLog* log);

// Every flag that affects the result, for the manifest and the version id.
nlohmann::json ParametersJson(const BuildOptions& options);

// The manifest's build information (no version yet); `log` gives the row counts.
snapshot::ManifestInfo MakeManifestInfo(const BuildOptions& options, absl::Time created,
                                        const ImpressionLog& log,
                                        const std::vector<snapshot::InputFileInfo>& inputs);

// CURRENT flips to `version` (complete and synced in its temporary
// directory), then retention; recorded as the stage "publish".
absl::Status PublishStage(const BuildOptions& options, const BuildObserver& obs,
                          const SnapshotStore& store, const PublishLock& lock,
                          const std::string& version, BuildReport* report);

// For a pilot-based --method without --pilot_col: a warning naming the
// input's column that looks like a pilot score, or empty.
std::string BuiltInPilotWarning(const BuildOptions& options);

// Fills the report's counts from the pipeline's result.
void RecordPipelineResult(const PairTable& pairs, const PipelineResult& result,
                          BuildReport* report);

// This rank's part of the gates: one rate per pair, every rate finite and in
// (0, 1] ("gate rate-range failed: ..." naming the first pair), every solve
// converged ("gate solver-converged failed: ..."). A delta build runs it over
// its own pairs.
absl::Status CheckRateRangeGate(const PairTable& pairs, const PipelineResult& result);

// The validation gates over every rank's pairs (CheckGates, build_job.h, is
// this over one rank): non-empty, rates in (0, 1] and every solve converged
// on each rank, the mean over negative instances from all-reduced sums.
// `totals` receives the pairs, instances and negative instances of every
// rank. A collective: every rank calls it, and gets the same status.
absl::Status CheckGatesOverRanks(Communicator& comm, const PairTable& pairs,
                                 const PipelineResult& result, double alpha, double tolerance,
                                 uint64_t totals[3]);

// Rank 0 alone: the validation gates, then the optional per-pair CSV (names
// from `log`).
absl::Status GatesAndExportStage(const BuildOptions& options, const BuildObserver& obs,
                                 const PairTable& pairs, const PipelineResult& result,
                                 const ImpressionLog& log, BuildReport* report);

// Under the root's publish lock: writes <version>.tmp, calls `before_publish`
// (may be empty; an error removes the temporary and publishes nothing), then
// flips CURRENT and applies retention. `log` gives the manifest's row counts.
absl::Status WriteAndPublishStage(const BuildOptions& options, const BuildObserver& obs,
                                  SnapshotStore* store, absl::Time created, const PairTable& pairs,
                                  const PipelineResult& result, const ImpressionLog& log,
                                  const std::vector<snapshot::InputFileInfo>& inputs,
                                  BuildReport* report,
                                  const std::function<absl::Status()>& before_publish);

}  // namespace build_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_OFFLINE_BUILD_STAGES_H_
