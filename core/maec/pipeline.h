// The MA-EC pipeline (docs/DESIGN.md §2): impression log → pair table →
// positive graph → effective conductance → hardness → propagation → rates,
// plus the per-node data that scores pairs the builder never saw (unseen.h).
//
// The pieces live in their own headers, included here for the users of the
// whole pipeline: pair_table.h (PairTable), pipeline_options.h (Method,
// PipelineOptions), solve_summary.h (SolveSummary, StageTiming),
// conductance.h (the graph half), unseen.h (NodeTable, UnseenModel).
//
// Shared by builder/, server/ (via unseen.h) and eval/. Renaming or removing a
// field must be done together with its users.
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
#include "core/maec/solve_summary.h"
#include "core/maec/unseen.h"

namespace graphsieve {

struct PipelineResult {
  // Per pair, same order as PairTable.
  std::vector<float> geff;         // effective conductance over the positive graph
  std::vector<float> hardness;     // geff - direct conductance
  std::vector<float> uncertainty;  // propagated uncertainty B̂ of the MA-EC prediction (own labels)
  std::vector<float> propagated_score;  // propagated MA-EC score Ẑ with every pair's own label:
                                        // what the node sums hold (NodeRecord::sum_score)
  std::vector<float> score;  // final score the rate was made from; for a positive pair its
                             // counterfactual score (docs/METHOD.md "Counterfactual positives")
  std::vector<float> rate;   // sampling rate in (0, 1]
  // Per node: users 0..U-1 then items U..U+I-1 (unseen.h).
  NodeTable nodes;
  UnseenModel model;  // constants needed to score unseen pairs
  double achieved_negative_mean_rate = 0.0;
  uint32_t num_components = 0;
  uint32_t positive_pairs = 0;
  std::vector<SolveSummary> solves;
  int uncertainty_iterations = 0;
  int score_iterations = 0;
  bool uncertainty_converged = true;  // false: stopped at propagation_max_iterations
  bool score_converged = true;
  std::string resistance_route;  // route of the largest component
  double rho = 0.0;              // final rate scale (also in model)
  std::vector<StageTiming> timings;
};

// REQUIRES: options.Validate().ok(). Errors: INVALID_ARGUMENT for impossible
// alpha/floor combinations (the message says which values work),
// FAILED_PRECONDITION when a solve did not converge (names the component),
// and when the pilot score is needed but absent.
absl::StatusOr<PipelineResult> RunPipeline(const PairTable& pairs, const PipelineOptions& options);

// The method half: propagation, rates and node records from a conductance
// computed by ComputeConductance(pairs, ...) with the same graph options.
absl::StatusOr<PipelineResult> RunPipelineWithConductance(const PairTable& pairs,
                                                          const ConductanceResult& conductance,
                                                          const PipelineOptions& options);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_PIPELINE_H_
