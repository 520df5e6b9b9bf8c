// The build-time fit of the positive-rate DEFAULT policy (node_default.h,
// docs/METHOD.md "Pairs the builder never saw"): the per-node counts and, per
// side, ρ (and h̄) fitted so that the mean DEFAULT rate over the training
// log's negative instances at that side's nodes is α (the same closed-form
// fit as the pair rates, core/maec/rates.h).
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CORE_MODEL_NODE_DEFAULT_FIT_H_
#define GRAPHSIEVE_CORE_MODEL_NODE_DEFAULT_FIT_H_

#include "absl/status/status.h"
#include "core/records/node_record.h"
#include "core/records/pair_table.h"
#include "core/records/pipeline_result.h"
#include "core/records/unseen_model.h"

namespace graphsieve {

struct NodeDefaultOptions {
  // m: pseudo-impressions at the global positive rate p̄, so a node seen a
  // few times is not rated as extreme. Not tuned (docs/EVALUATION.md).
  double smoothing_impressions = 20.0;
  absl::Status Validate() const;
};

// Fills every node's `positives` (instances − negatives of its pairs) and
// `impressions` (instances of its pairs), saturated at 2^32 − 1, from the
// pair table the pipeline ran on. REQUIRES the pipeline's node order (users
// 0..U−1, then items). Errors: INVALID_ARGUMENT when the table does not have
// U + I records.
absl::Status CountNodeImpressions(const PairTable& pairs, NodeTable* nodes);

// Fits model->default_* from the node records' counts (see the file comment).
// Leaves the fit at 0 (the policy then falls back to node-mean) for method
// `uniform`, a log without positives or impressions, and a floor-rule fit
// that cannot reach α. Errors: INVALID_ARGUMENT for bad options.
absl::Status FitNodeDefault(const NodeTable& nodes, const NodeDefaultOptions& options,
                            UnseenModel* model);

// CountNodeImpressions, then FitNodeDefault on result->model. What the
// builder runs after the pipeline (single-process and, on the gathered
// table, MPI builds).
absl::Status AttachNodeDefault(const PairTable& pairs, const NodeDefaultOptions& options,
                               PipelineResult* result);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MODEL_NODE_DEFAULT_FIT_H_
