// The MA-EC pipeline (docs/DESIGN.md §2): impression log → pair table →
// positive graph → effective conductance → hardness → propagation → rates,
// plus the per-node data that scores pairs the builder never saw (the
// unseen-pair model, core/model/unseen.h).
//
// The pieces live in their own headers, included here for the users of the
// whole pipeline: pair_table.h (BuildPairTable), pipeline_options.h (Method,
// PipelineOptions), conductance.h (the graph half). What it produces, PipelineResult with its node
// records, unseen model and solve summaries, is the stored records' room (core/records/), which the
// snapshot stores without knowing the method.
//
// Thread-safety: RunPipeline is a pure function of its inputs (and the seed);
// it uses up to Options::threads threads internally.
#ifndef GRAPHSIEVE_CORE_MAEC_PIPELINE_H_
#define GRAPHSIEVE_CORE_MAEC_PIPELINE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/maec/conductance.h"
#include "core/maec/pair_table.h"
#include "core/maec/pipeline_options.h"
#include "core/records/pipeline_result.h"

namespace graphsieve {

// REQUIRES: options.Validate().ok() — checked where the options enter (the
// builder's flags, RunBuild, the evaluation's per-method options) and only
// asserted here, in debug builds. Errors: INVALID_ARGUMENT for impossible
// alpha/floor combinations (the message says which values work),
// FAILED_PRECONDITION when a solve did not converge (names the component),
// and when the pilot score is needed but absent.
absl::StatusOr<PipelineResult> RunPipeline(const PairTable& pairs, const PipelineOptions& options);

// The method half: propagation, rates and node records from a conductance
// computed by ComputeConductance(pairs, ...) with the same graph options.
// REQUIRES: as RunPipeline.
absl::StatusOr<PipelineResult> RunPipelineWithConductance(const PairTable& pairs,
                                                          const ConductanceResult& conductance,
                                                          const PipelineOptions& options);
// The same, consuming the conductance: its per-pair columns and node rows
// move into the result or are freed as soon as they are used (the builder's
// memory peak, docs/SCALING.md "Memory per impression"). Same result.
absl::StatusOr<PipelineResult> RunPipelineWithConductance(const PairTable& pairs,
                                                          ConductanceResult&& conductance,
                                                          const PipelineOptions& options);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_PIPELINE_H_
