// Scoring pairs the builder never saw (docs/DESIGN.md §2, last paragraph).
//
// DRAFT CONTRACT shared by core/maec (produces it), core/snapshot (stores it)
// and server/ (uses it). The snapshot stores one NodeRecord per node and one
// UnseenModel per version; the server calls ScoreUnseenPair for a pair of known
// nodes that has no stored rate (RATE_SOURCE_INFERRED). The builder uses the
// same function in its tests, so builder and server cannot drift apart.
//
// Thread-safety: everything here is immutable after construction.
#ifndef GRAPHSIEVE_CORE_MAEC_UNSEEN_H_
#define GRAPHSIEVE_CORE_MAEC_UNSEEN_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace graphsieve {

// Per node data (users 0..U-1, then items). With symmetric_normalisation the
// two sums are Σ x_q / √d_q (d_q = neighbours of pair q), the node sums that
// operator uses.
struct NodeRecord {
  uint32_t component = 0;        // connected component in the positive graph
  uint32_t degree = 0;           // pairs (positive and negative) at this node
  float sum_uncertainty = 0.0f;  // Σ propagated uncertainty B̂ over its pairs
  float sum_score = 0.0f;        // Σ propagated score over its pairs
  float mean_rate = 0.0f;        // mean rate over its negative instances (default policy)
  // Instances at the node and how many were positive, saturated at 2^32 - 1
  // (snapshot format 3; 0 when read from an older snapshot). The server's
  // positive-rate DEFAULT policy (core/serving/node_default.h) rates a pair
  // with an unknown partner from them.
  uint32_t positives = 0;
  uint32_t impressions = 0;
};

struct NodeTable {
  std::vector<uint64_t> ids;     // original id per node
  std::vector<uint8_t> is_item;  // 0 user, 1 item
  std::vector<NodeRecord> records;
  int sketch_dim = 0;  // floats per row: k, or k + 2 with the control variate
  // Row-major, ids.size() x sketch_dim; ‖row_u − row_v‖² ≈ R_eff of a user–item
  // non-edge (docs/METHOD.md "Pairs the builder never saw").
  std::vector<float> sketch;
  absl::Span<const float> SketchRow(size_t node) const {
    return absl::MakeConstSpan(sketch.data() + node * sketch_dim, sketch_dim);
  }
};

// Global constants of one snapshot. Stored in the snapshot's meta.
struct UnseenModel {
  int method = 0;                    // Method enum value (pipeline_options.h)
  int rate_rule = 0;                 // RateRule enum value (rates.h): 0 floor, 1 mixture
  double alpha = 0.2, floor = 0.01;  // floor: ϱ of the floor rule
  double kappa = 0.0;                // mixture: uniform share κ
  double score_mean = 0.0;           // mixture: h̄, mean of t(s) over the negative instances
  double score_power = 1.0;          // MA-EC: rates from t(s) = s^β (rates.h ScorePower)
  double rho = 1.0;                  // rate scale ρ
  double gamma = 0.5;
  double geff_min = 0.0, geff_max = 1.0;  // min-max normalisation of the hardness h = G_eff − G
                                          // over the seen pairs (h = G_eff for a negative pair)
  bool uncertainty_propagation = true;
  bool score_propagation = true;
  bool symmetric_normalisation = false;
  int sketch_dim = 0;
  // The positive-rate DEFAULT policy's fit (core/serving/node_default.h,
  // docs/METHOD.md "Pairs the builder never saw"); 0 = not fitted (older
  // snapshots, uniform): the policy falls back to node-mean.
  double default_prior = 0.0;                              // p̄ = Σ positives / Σ impressions
  double default_smoothing = 0.0;                          // m pseudo-impressions at p̄
  double default_user_rho = 0.0, default_user_mean = 0.0;  // known user, unknown item
  double default_item_rho = 0.0, default_item_mean = 0.0;  // known item, unknown user
};

// One known node as the server sees it.
struct NodeView {
  NodeRecord record;
  absl::Span<const float> sketch;  // sketch_dim floats
};

// The rate for an unseen (user, item) pair of known nodes, treated as a
// negative: conductance from the sketch rows (0 across components), min-max
// normalised, one uncertainty and one score propagation step from the node
// sums, t = s^β, then the snapshot's rate rule (rates.h): floor
// min(max(ρt, ϱ), 1) or mixture min(1, ρ(t/h̄ + κ)). Result in (0, 1].
// Methods other than MA-EC: uniform gives α; the pilot-based ones (opt, max,
// mean, product) have no pilot score for an unseen pair and give the mean of
// the two nodes' mean_rate, clipped to [floor, 1] (floor rule) or (0, 1].
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

#endif  // GRAPHSIEVE_CORE_MAEC_UNSEEN_H_
