// The positive-rate DEFAULT policy's serve-time formula (docs/METHOD.md
// "Pairs the builder never saw"): a pair with one unknown node is rated from
// the known node's smoothed positive rate q = (positives + m·p̄) /
// (impressions + m) — for a new user, a negative's hardness p(click) is about
// the item's positive rate — mapped by the snapshot's rate rule with its own
// ρ (and h̄). The counts travel in the node record (snapshot format 3), the
// fit in meta/unseen_model (UnseenModel::default_*), made at build time by
// node_default_fit.h.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CORE_MODEL_NODE_DEFAULT_H_
#define GRAPHSIEVE_CORE_MODEL_NODE_DEFAULT_H_

#include "core/records/node_record.h"
#include "core/records/unseen_model.h"

namespace graphsieve {

// Whether the model holds a fit for a known user (is_item false) or item.
bool HasNodeDefault(const UnseenModel& model, bool is_item);
// q = (positives + m·p̄) / (impressions + m) with the model's m and p̄.
double SmoothedPositiveRate(const NodeRecord& record, const UnseenModel& model);
// The rule applied to q with the side's fit: mixture min(1, ρ(q/h̄ + κ)),
// floor min(max(ρq, ϱ), 1). REQUIRES HasNodeDefault(model, is_item).
double NodeDefaultRate(const NodeRecord& record, bool is_item, const UnseenModel& model);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MODEL_NODE_DEFAULT_H_
