// Propagation over the line graph of all pairs (docs/DESIGN.md §2.5–2.6), computed on
// the bipartite pair graph in O(pairs) per step through per-node sums.
//
// Two pairs are neighbours when they share a user or an item. With
// d_p = deg(u) + deg(v) − 2 neighbours of pair p = (u, v) (degrees count ALL
// pairs, positive and negative), one step is
//   edge rule:  (S x)_p = (m(u) + m(v) − 2 x_p) / d_p,  m(w) = Σ_{q ∋ w} x_q
//   symmetric:  (S x)_p = (m'(u) + m'(v) − 2 x_p/√d_p) / √d_p,  m'(w) = Σ_{q ∋ w} x_q/√d_q
// (the −2 x_p removes p itself from both endpoint sums: the paper prints
// −2Z_n, the erratum). A pair without neighbours (d_p = 0) maps to itself.
// The iteration is x⁽ᵗ⁺¹⁾ = (1−γ) x⁽⁰⁾ + γ S x⁽ᵗ⁾, x⁽⁰⁾ the input, until
// max |x⁽ᵗ⁺¹⁾ − x⁽ᵗ⁾| ≤ tolerance or the iteration cap.
//
// Thread-safety: pure functions using up to `threads` threads.
#ifndef GRAPHSIEVE_CORE_MAEC_PROPAGATION_H_
#define GRAPHSIEVE_CORE_MAEC_PROPAGATION_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/maec/pair_table.h"

namespace graphsieve {

class Communicator;  // core/distributed/communicator.h

// Distributed builds (docs/DESIGN.md §5): with a communicator the pair table
// is this rank's share and every node sum (degrees, m, the self-influence
// sums) and the convergence test reduce over all ranks, so each rank's pairs
// get the values a single process would compute.

struct PropagationOptions {
  double gamma = 0.5;       // weight of the neighbours, in [0, 1)
  double tolerance = 1e-6;  // max |Δ| between two iterates
  int max_iterations = 100;
  bool symmetric = false;  // D^-1/2 A D^-1/2 instead of the edge rule
  int threads = 2;
  Communicator* comm = nullptr;  // distributed build; not owned
};

struct PropagationReport {
  int iterations = 0;
  double last_change = 0.0;  // max |Δ| of the last iteration
  bool converged = false;
};

// Pairs at every node, users 0..U-1 then items U..U+I-1.
std::vector<uint32_t> NodeDegrees(const PairTable& pairs, Communicator* comm = nullptr);

// The per-node sums the operator uses (m, or m' when symmetric).
// REQUIRES: x.size() == pairs.num_pairs(), degrees from NodeDegrees(pairs).
std::vector<double> PropagationNodeSums(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                                        absl::Span<const double> x, bool symmetric, int threads,
                                        Communicator* comm = nullptr);

// Runs the iteration; x holds x⁽⁰⁾ on entry and the result on return.
// REQUIRES: as PropagationNodeSums, and pairs sorted by user (the PairTable
// invariant, pair_table.h: each pass walks the users' runs of pairs).
PropagationReport Propagate(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                            const PropagationOptions& options, std::vector<double>* x);

// Self-influence of every pair: the diagonal of M = (1−γ)(I − γS)⁻¹, the
// linear map from x⁽⁰⁾ to the fixed point. Changing x⁽⁰⁾_p alone by Δ changes
// the fixed point at p by M_pp·Δ (docs/METHOD.md "Counterfactual positives").
// Computed from the exact first terms of M_pp = (1−γ) Σ_t γ^t (S^t)_pp:
//   (S⁰)_pp = 1, (S¹)_pp = 0,
//   (S²)_pp = (1/d_p) Σ_{q∼p} 1/d_q,
//   (S³)_pp = (1/d_p) Σ_{w ∈ {u, v}} [(Σ_{q∋w, q≠p} 1/d_q)² − Σ_{q∋w, q≠p} 1/d_q²]
// (a triangle of the line graph through p has all three pairs at one node:
// the pair graph is bipartite). The edge rule and the symmetric operator are
// similar matrices, so both have these diagonals. The omitted tail is
// between 0 and γ⁴·max_{q∼p} 1/d_q (S is row-stochastic). A pair without
// neighbours (d_p = 0) maps to itself: M_pp = 1.
std::vector<double> SelfInfluence(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                                  double gamma, Communicator* comm = nullptr);

// The same values at the positive pairs (label 1) only, in pair order: what
// the counterfactual of positive pairs reads, without a value per pair.
std::vector<double> SelfInfluenceOfPositives(const PairTable& pairs,
                                             absl::Span<const uint32_t> degrees, double gamma,
                                             Communicator* comm = nullptr);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_PROPAGATION_H_
