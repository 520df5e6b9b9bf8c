// Effective resistance of (user, item) pairs on the positive graph
// (docs/DESIGN.md §2.3), by route:
//   dense      L⁺ = (L + J/n)⁻¹ − J/n per component (Cholesky); the reference.
//   one-sided  X = L⁺ E_S for the smaller side S of a component by block PCG;
//              the other side's diagonal from the Laplacian row identity
//              L⁺_vv = (1 − 1/n_c + Σ_{u∼v} L⁺_uv) / deg(v); exact R for every
//              pair with |S| solves (up to the solver tolerance).
//   sketch     Spielman–Srivastava: Z = L⁺ Bᵀ Qᵀ with k random ±1/√k columns,
//              R ≈ ‖Z_u − Z_v‖² (Johnson–Lindenstrauss error ≈ √(2/k)); by
//              default with a control variate: R = 1/d_u + 1/d_v − 2w/(d_u d_v)
//              exactly plus the sketched residual ‖Z'_u − Z'_v‖², Z' = Z − D⁻¹BᵀQᵀ,
//              k sized from the residual's measured share of R.
// Across components R = +inf (G_eff = 0). Node sketch rows are always
// produced, whichever route served the pairs: the server needs them for
// unseen pairs. By default (unseen_control_variate) a row is [z'_v, √(1/d_v)
// in the side's slot], sketch_dim + 2 floats, so that ‖row_u − row_v‖² of a
// user–item non-edge is 1/d_u + 1/d_v + the sketched residual (docs/METHOD.md
// "Pairs the builder never saw"); else the plain z_v, sketch_dim floats.
//
// Thread-safety: pure functions; they use up to options.threads threads.
#ifndef GRAPHSIEVE_CORE_MAEC_RESISTANCE_H_
#define GRAPHSIEVE_CORE_MAEC_RESISTANCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/maec/block_pcg.h"
#include "core/maec/graph.h"
#include "core/maec/pair_table.h"
#include "core/maec/resistance_options.h"
#include "core/records/solve_summary.h"

namespace graphsieve {

struct ResistanceResult {
  std::vector<double> resistance;    // per pair; +inf across components
  int sketch_dim = 0;                // floats per node row (ResistanceOptions::NodeRowDim)
  std::vector<float> sketch;         // node-major rows of sketch_dim floats
  std::vector<SolveSummary> solves;  // one per PCG component + one for all dense ones
  uint32_t dense_components = 0, one_sided_components = 0, sketch_components = 0;
  // The pair sketch (when a component used it): its columns and the residual
  // share ρ of R it was sized with (1 without the control variate).
  int pair_sketch_dim = 0;
  double residual_share = 0.0;
  std::string route;  // route of the largest component ("dense", ...)
};

// REQUIRES: graph was built from pairs. Errors: INVALID_ARGUMENT (options),
// FAILED_PRECONDITION naming the component when a solve does not converge or
// a dense factorisation fails, RESOURCE_EXHAUSTED when `exact` is asked of a
// component too large to hold densely.
absl::StatusOr<ResistanceResult> ComputeResistance(const PairTable& pairs,
                                                   const PositiveGraph& graph,
                                                   const ResistanceOptions& options);

// The exact part of the pair sketch's control variate y = D⁻¹b, b = e_u − e_v
// (docs/METHOD.md "Control variate"): 1/d_u + 1/d_v − 2w_uv/(d_u d_v), with
// d the positive degrees and w_uv = 1 when (u, v) is a positive edge (the
// resistance is of the whole graph, the pair's own edge included). For any
// pair, R(u, v) = this + ‖B(L⁺ − D⁻¹)b‖² ≥ this.
double ControlVariateExactPart(double degree_u, double degree_v, bool edge);

// Dense pseudo-inverse of one component's Laplacian (tests, small graphs).
// Errors: FAILED_PRECONDITION when the factorisation fails.
absl::StatusOr<Eigen::MatrixXd> DensePseudoInverse(const ComponentLaplacian& lap);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RESISTANCE_H_
