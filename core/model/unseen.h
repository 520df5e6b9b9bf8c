// Scoring pairs the builder never saw (docs/DESIGN.md §2, last paragraph).
//
// The snapshot stores one NodeRecord per node and one UnseenModel per version
// (core/records); the server calls ScoreUnseenPair for a pair of known nodes
// that has no stored rate (RATE_SOURCE_INFERRED). The builder uses the same
// function in its tests, so builder and server cannot drift apart.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CORE_MODEL_UNSEEN_H_
#define GRAPHSIEVE_CORE_MODEL_UNSEEN_H_

#include "core/records/node_record.h"
#include "core/records/unseen_model.h"

namespace graphsieve {

// The rate for an unseen (user, item) pair of known nodes, treated as a
// negative: conductance from the sketch rows (0 across components), min-max
// normalised, one uncertainty and one score propagation step from the node
// sums, t = s^β, then the snapshot's rate rule (rates.h): floor
// min(max(ρt, ϱ), 1) or mixture min(1, ρ(t/h̄ + κ)). Result in (0, 1].
// Methods other than MA-EC: uniform gives α; opt with the built-in pilot's
// rows (model.pilot_dim > 0) the pilot's score σ(b + b_u + b_i + p_u·q_i)
// (core/model/pilot_row.h) through the snapshot's rule; max / mean / product
// with those rows and the stored member fits (model.has_members) the MA-EC
// member's rate (the computation above, by model.maec_member) and the pilot
// member's (by model.pilot_member), combined, then model.combined
// (docs/METHOD.md "The built-in pilot", Serving). Without pilot rows (a
// user's pilot column) or member fits (older snapshots) the pilot-based
// methods have no pilot score for an unseen pair and give the mean of the two
// nodes' mean_rate, clipped to [floor, 1] (floor rule) or (0, 1].
float ScoreUnseenPair(const NodeView& user, const NodeView& item, const UnseenModel& model);

// The rate for a pair with an unknown user and/or item (nullptr), by the same
// rule: an unknown node is a node with no pairs and no positive edge, so the
// pair has no graph evidence (conductance 0) and its propagation step sees
// only the known node's pairs. MA-EC: ScoreUnseenPair with such an empty node
// (both unknown: rule(z₀), z₀ the min-max position of conductance 0 — under
// the mixture rule min(1, ρ(z₀/h̄ + κ))). Other methods: uniform gives α; the
// pilot-based ones the known node's mean_rate (> 0), else α.
float ScoreUnknownNodePair(const NodeView* user, const NodeView* item, const UnseenModel& model);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MODEL_UNSEEN_H_
