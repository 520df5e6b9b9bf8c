// Stage "pilot" of the build job (build_job.h; docs/METHOD.md "The built-in
// pilot"): a pilot-based --method without --pilot_col fits the pilot itself
// (core/model/pilot.h), cross-fitted over --pilot_folds folds of the pairs,
// and the pipeline rates each pair from its cross-fitted score; the model
// fitted on every pair ends each node's stored row, so the server scores
// INFERRED pairs of known nodes with it. Internal to core/offline/.
//
// Over N ranks: every rank's (user, item, instances, positives) all-gathered
// and sorted into the single process's pair order, so every rank holds the
// same data; rank r fits the models m ≡ r (mod N), the models all-gathered;
// each rank scores its own pairs. The rates equal one process's.
//
// Thread-safety: a collective, as RunBuild.
#ifndef GRAPHSIEVE_CORE_OFFLINE_BUILD_PILOT_H_
#define GRAPHSIEVE_CORE_OFFLINE_BUILD_PILOT_H_

#include "absl/status/status.h"
#include "core/distributed/communicator.h"
#include "core/model/pilot.h"
#include "core/offline/build_job.h"

namespace graphsieve {
namespace build_internal {

// A pilot-based --method and no --pilot_col.
bool UsesBuiltInPilot(const BuildOptions& options);

// The pilot's options with the build's --seed and --threads.
PilotOptions BuiltInPilotOptions(const BuildOptions& options);

// Fits the pilot: `pairs->pilot_mean` gets each local pair's cross-fitted
// score, `full` the model on every pair, `cross_fitted_log_loss` the mean
// instance log-loss of the cross-fitted scores over every rank's pairs.
absl::Status FitBuiltInPilot(const BuildOptions& options, Communicator& comm, PairTable* pairs,
                             PilotFactors* full, double* cross_fitted_log_loss);

// Appends each node's pilot row (1 + dim floats) to its stored row and
// records the pilot in the unseen-pair model.
void AttachPilotRows(const PilotFactors& full, PipelineResult* result);

}  // namespace build_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_OFFLINE_BUILD_PILOT_H_
