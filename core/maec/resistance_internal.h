// What the routes of ComputeResistance (resistance.h) share: the Work state
// of one call, and the sketch routes (resistance_sketch.cc) that the task
// runner and the pair stage of resistance.cc call. Internal to core/maec.
//
// Thread-safety: the tasks of one call write disjoint parts of Work (see
// Work); the collectives (ResidualShare, ReducePhaseTwoColumns) run on every
// rank when options.comm is set.
#ifndef GRAPHSIEVE_CORE_MAEC_RESISTANCE_INTERNAL_H_
#define GRAPHSIEVE_CORE_MAEC_RESISTANCE_INTERNAL_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/maec/block_pcg.h"
#include "core/maec/graph.h"
#include "core/maec/pair_table.h"
#include "core/maec/resistance.h"
#include "core/maec/resistance_options.h"
#include "core/maec/resistance_plan.h"

namespace graphsieve {
namespace maec_internal {

// The state the tasks of one ComputeResistance call share. Tasks write
// disjoint parts of out->sketch, pair_z, out->resistance and diag.
struct Work {
  const PairTable& pairs;
  const PositiveGraph& g;
  const ResistanceOptions& o;
  Plan& plan;
  ResistanceResult* out;
  const PairIncidence& inc;
  std::vector<std::unique_ptr<ComponentLaplacian>> laps;  // PCG components, built once and shared
  std::vector<double> diag;                               // L⁺_ss of the solved side (one-sided)
  // Pair sketch, column blocks of kDistBlock: [block][node][kDistBlock]; every
  // column scaled 1/√sketch_dim like the node rows (distances rescale by
  // sketch_dim/pair_k). Block-major, so phase 2 appends blocks.
  std::vector<float> pair_z;

  // Calls fn(pair, other endpoint node) for every pair at node s.
  template <typename Fn>
  void ForPairsAt(uint32_t s, Fn&& fn) const {
    const uint32_t U = g.num_users;
    if (s < U) {
      for (uint64_t p = inc.user_begin[s]; p < inc.user_begin[s + 1]; ++p)
        fn(p, U + pairs.pair_item[p]);
    } else {
      const uint32_t it = s - U;
      for (uint64_t q = inc.item_begin[it]; q < inc.item_begin[it + 1]; ++q) {
        fn(uint64_t{inc.item_pairs[q]}, pairs.pair_user[inc.item_pairs[q]]);
      }
    }
  }
  float& PairZ(uint32_t node, uint32_t col) {
    return pair_z[(size_t(col / kDistBlock) * g.num_nodes() + node) * kDistBlock +
                  col % kDistBlock];
  }
  static constexpr uint32_t kDistBlock = 32;
};

// Columns [begin, end) of Bᵀ Qᵀ: every edge (u, v), u the user, adds its
// random ±1/√k row to u and subtracts it from v. The signs depend only on
// (seed, u, v, column), so blocking and threads do not change them.
void SketchRhs(const ComponentLaplacian& lap, const PositiveGraph& g, int k, uint32_t begin,
               uint32_t end, uint64_t seed, RowMatrix* rhs);

// Sketch columns [begin, end) of a component: node rows (the first
// sketch_dim columns) and the pair sketch. With the control variate either
// holds z'_v = z_v − (BᵀQᵀ)_v / d_v, the sketch of W^½B(L⁺ − D⁻¹)e_v
// (docs/METHOD.md "Control variate", "Unseen pairs").
void StoreSketchColumns(Work& w, const Task& task, const ComponentLaplacian& lap,
                        const RowMatrix& rhs, const RowMatrix& x);

// The node rows' exact coordinates (ResistanceOptions::unseen_control_variate):
// √(1/d_v) at k for a user, at k + 1 for an item; 0 for a node without a
// positive edge (its own component: the server never measures it).
void NodeRowExactCoordinates(const PositiveGraph& g, const ResistanceOptions& o,
                             ResistanceResult* out);

// ρ, the root mean square over sampled pairs of components the pair sketch
// may serve of (R − exact part) / R, estimated from the phase-1 columns (the
// node rows; their noise only makes ρ larger on average). About 16,384 pairs
// in all, chosen by a hash of (user, item) so that every partition of the
// pairs over ranks samples the same ones; 1 when none was sampled.
double ResidualShare(Work& w);

// ‖Z_u − Z_v‖² of the pair sketch for pairs [begin, end) of sketch components,
// one column block at a time (a block's rows stay in cache); which pairs and
// which rows are looked up once, not per block.
void SketchDistances(Work& w, size_t begin, size_t end);

// Phase-2 pair-sketch columns of every rank into every rank: reduce from the
// block holding column sketch_dim on; that block's phase-1 columns are
// already reduced, so only rank 0 keeps them.
void ReducePhaseTwoColumns(Work& w);

}  // namespace maec_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RESISTANCE_INTERNAL_H_
