// Effective resistance of (user, item) pairs on the positive graph
// (docs/DESIGN.md §2.3), by route:
//   dense      L⁺ = (L + J/n)⁻¹ − J/n per component (Cholesky); the reference.
//   one-sided  X = L⁺ E_S for the smaller side S of a component by block PCG;
//              the other side's diagonal from the Laplacian row identity
//              L⁺_vv = (1 − 1/n_c + Σ_{u∼v} L⁺_uv) / deg(v); exact R for every
//              pair with |S| solves (up to the solver tolerance).
//   sketch     Spielman–Srivastava: Z = L⁺ Bᵀ Qᵀ with k random ±1/√k columns,
//              R ≈ ‖Z_u − Z_v‖² (Johnson–Lindenstrauss error ≈ √(2/k)).
// Across components R = +inf (G_eff = 0). Node sketch rows (k = sketch_dim)
// are always produced, whichever route served the pairs: the server needs
// them for unseen pairs.
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
#include "core/maec/solve_summary.h"

namespace graphsieve {

struct ResistanceResult {
  std::vector<double> resistance;       // per pair; +inf across components
  int sketch_dim = 0;
  std::vector<float> sketch;            // node-major rows of sketch_dim floats
  std::vector<SolveSummary> solves;     // one per PCG component + one for all dense ones
  uint32_t dense_components = 0, one_sided_components = 0, sketch_components = 0;
  std::string route;                    // route of the largest component ("dense", ...)
};

// REQUIRES: graph was built from pairs. Errors: INVALID_ARGUMENT (options),
// FAILED_PRECONDITION naming the component when a solve does not converge or
// a dense factorisation fails, RESOURCE_EXHAUSTED when `exact` is asked of a
// component too large to hold densely.
absl::StatusOr<ResistanceResult> ComputeResistance(const PairTable& pairs,
                                                   const PositiveGraph& graph,
                                                   const ResistanceOptions& options);

// Dense pseudo-inverse of one component's Laplacian (tests, small graphs).
// Errors: FAILED_PRECONDITION when the factorisation fails.
absl::StatusOr<Eigen::MatrixXd> DensePseudoInverse(const ComponentLaplacian& lap);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RESISTANCE_H_
