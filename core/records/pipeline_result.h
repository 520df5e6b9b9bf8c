// What the method computes for one build and the snapshot stores
// (docs/DESIGN.md §2, §3): per pair the rate (and the quantities it came
// from), per node the records and sketch rows, the unseen-pair constants, and
// the summaries the manifest records. Produced by RunPipeline
// (core/maec/pipeline.h); written by the snapshot writer (core/snapshot).
//
// Thread-safety: a plain value.
#ifndef GRAPHSIEVE_CORE_RECORDS_PIPELINE_RESULT_H_
#define GRAPHSIEVE_CORE_RECORDS_PIPELINE_RESULT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/records/node_record.h"
#include "core/records/solve_summary.h"
#include "core/records/unseen_model.h"

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
  // Per node: users 0..U-1 then items U..U+I-1 (node_record.h).
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

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_RECORDS_PIPELINE_RESULT_H_
