// The constants a snapshot stores to score pairs the builder never saw
// (docs/DESIGN.md §2, last paragraph): produced by the method (core/maec),
// stored in the snapshot's meta (core/snapshot), read by the scorer
// (ScoreUnseenPair, core/model/unseen.h) and the DEFAULT policy.
//
// Thread-safety: a plain value.
#ifndef GRAPHSIEVE_CORE_RECORDS_UNSEEN_MODEL_H_
#define GRAPHSIEVE_CORE_RECORDS_UNSEEN_MODEL_H_

namespace graphsieve {

// One rate rule and its fit (core/maec/rate_rule.h): the rule (0 floor,
// 1 mixture), its floor ϱ (floor rule) or uniform share κ (mixture), and the
// fitted ρ and h̄ (mixture; 0 for the floor rule).
struct RuleFit {
  int rule = 0;
  double floor = 0.0, kappa = 0.0, rho = 1.0, score_mean = 0.0;
};

// Global constants of one snapshot. Stored in the snapshot's meta.
struct UnseenModel {
  // The largest stored `method` value (Method::kProduct; pipeline_options.h
  // asserts it).
  static constexpr int kMaxMethod = 5;
  int method = 0;                    // Method enum value (core/maec/pipeline_options.h)
  int rate_rule = 0;                 // RateRule enum value (core/maec/rates.h): 0 floor, 1 mixture
  double alpha = 0.2, floor = 0.01;  // floor: ϱ of the floor rule
  double kappa = 0.0;                // mixture: uniform share κ
  double score_mean = 0.0;           // mixture: h̄, mean of t(s) over the negative instances
  double score_power = 1.0;          // MA-EC: rates from t(s) = s^β (core/maec/rates.h)
  double exposure_power = 0.0;  // MA-EC and the MA-EC member of max/mean/product: t(s) / n_i^η,
                                // n_i = the item's impressions
  double rho = 1.0;             // rate scale ρ
  double gamma = 0.5;
  double geff_min = 0.0, geff_max = 1.0;  // min-max normalisation of the hardness h = G_eff − G
                                          // over the seen pairs (h = G_eff for a negative pair)
  bool uncertainty_propagation = true;
  bool score_propagation = true;
  bool symmetric_normalisation = false;
  int sketch_dim = 0;  // floats per stored node row: the graph's row, then the pilot's
  // The built-in pilot (core/model/pilot_row.h, docs/SNAPSHOT.md "Pilot
  // factors"): its embedding dimension (0 = none: no pilot row) and global
  // bias. A node row ends with 1 + pilot_dim floats (the node's bias, then its
  // embedding); the graph's part is the first sketch_dim − (1 + pilot_dim).
  int pilot_dim = 0;
  double pilot_bias = 0.0;
  // max / mean / product (docs/METHOD.md "Per ensemble member"): the MA-EC
  // member's fit, the pilot member's, and the refit of their combination
  // (mean: the identity, ρ 1 under the floor rule with ϱ 0). The fields
  // above (rate_rule, floor, kappa, rho, score_mean) keep what they held
  // before these existed. false = not stored (older snapshots): INFERRED
  // pairs get the mean of the two nodes' mean_rate.
  bool has_members = false;
  RuleFit maec_member, pilot_member, combined;
  int PilotRowFloats() const { return pilot_dim > 0 ? pilot_dim + 1 : 0; }
  int GraphRowFloats() const { return sketch_dim - PilotRowFloats(); }
  // The positive-rate DEFAULT policy's fit (core/model/node_default.h,
  // docs/METHOD.md "Pairs the builder never saw"); 0 = not fitted (older
  // snapshots, uniform): the policy falls back to node-mean.
  double default_prior = 0.0;                              // p̄ = Σ positives / Σ impressions
  double default_smoothing = 0.0;                          // m pseudo-impressions at p̄
  double default_user_rho = 0.0, default_user_mean = 0.0;  // known user, unknown item
  double default_item_rho = 0.0, default_item_mean = 0.0;  // known item, unknown user
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_RECORDS_UNSEEN_MODEL_H_
