// The positive-rate DEFAULT policy (docs/METHOD.md "Pairs the builder never
// saw"): a pair with one unknown node is rated from the known node's smoothed
// positive rate q = (positives + m·p̄) / (impressions + m) — for a new user, a
// negative's hardness p(click) is about the item's positive rate — mapped by
// the snapshot's rate rule with its own ρ (and h̄), fitted at build time so
// that the mean DEFAULT rate over the training log's negative instances at
// that side's nodes is α (the same closed-form fit as the pair rates,
// core/maec/rates.h). The counts travel in the node record (snapshot format
// 3), the fit in meta/unseen_model (UnseenModel::default_*).
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CORE_SERVING_NODE_DEFAULT_H_
#define GRAPHSIEVE_CORE_SERVING_NODE_DEFAULT_H_

#include "absl/status/status.h"
#include "core/maec/pair_table.h"
#include "core/maec/pipeline.h"
#include "core/maec/unseen.h"

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

// Whether the model holds a fit for a known user (is_item false) or item.
bool HasNodeDefault(const UnseenModel& model, bool is_item);
// q = (positives + m·p̄) / (impressions + m) with the model's m and p̄.
double SmoothedPositiveRate(const NodeRecord& record, const UnseenModel& model);
// The rule applied to q with the side's fit: mixture min(1, ρ(q/h̄ + κ)),
// floor min(max(ρq, ϱ), 1). REQUIRES HasNodeDefault(model, is_item).
double NodeDefaultRate(const NodeRecord& record, bool is_item, const UnseenModel& model);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SERVING_NODE_DEFAULT_H_
