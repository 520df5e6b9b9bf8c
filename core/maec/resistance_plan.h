// The route plan of ComputeResistance (resistance.h, which includes this
// header): which route serves each
// component and the list of solve tasks. Internal to core/maec.
//
// Thread-safety: pure functions; PlanComponents runs collectives when
// options.comm is set (every rank calls it).
#ifndef GRAPHSIEVE_CORE_MAEC_RESISTANCE_PLAN_H_
#define GRAPHSIEVE_CORE_MAEC_RESISTANCE_PLAN_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/distributed/communicator.h"
#include "core/maec/graph.h"
#include "core/maec/pair_table.h"
#include "core/maec/resistance_options.h"

namespace graphsieve {
namespace maec_internal {

inline constexpr uint32_t kMaxDenseNodes = 8000;  // 0.5 GB of doubles and ~10^12 flops

enum class Route { kSkip, kDense, kOneSided, kSketch };

struct Task {
  uint32_t component;
  Route kind;           // kDense: whole component; kOneSided: S columns; kSketch: sketch columns
  uint32_t begin, end;  // column range; kOneSided: range of Plan::columns[component]
};

// What ComputeResistance decided per component, and the work list. Two
// phases: the node-row columns [0, sketch_dim) of every PCG component first
// (needed whatever the route), then — once the residual share of the pair
// sketch is measured from them — one-sided columns or the remaining pair
// sketch columns [sketch_dim, pair_k).
struct Plan {
  std::vector<Route> route;           // per component (a phase-1 kOneSided may become kSketch)
  std::vector<uint8_t> s_is_users;    // per component: the solved side S is the users
  std::vector<uint32_t> solved_side;  // per component: |S|
  std::vector<uint64_t> pairs_in;     // per component: pairs inside it, over all ranks
  std::vector<uint8_t>
      pair_sketch;  // per component: its pairs may be (or are) served by the pair sketch
  std::vector<std::vector<uint32_t>> columns;  // one-sided: S positions (inside S) this rank solves
  std::vector<Task> tasks;                     // phase 1, then phase 2 appended by PlanSecondPhase
  size_t phase1_tasks = 0;
  uint32_t next_block = 0;      // round-robin position after phase 1
  int pair_k = 0;               // columns of the pair sketch (ResistanceOptions::PairSketchDim)
  double residual_share = 1.0;  // ρ the pair sketch was sized with
  // Components per route (dense counted in phase 1, the others in phase 2)
  // and the route of the largest component ("none", "dense", ...), for
  // ResistanceResult.
  uint32_t dense_components = 0, one_sided_components = 0, sketch_components = 0;
  std::string largest_route;
};

inline bool Distributed(const ResistanceOptions& o) {
  return o.comm != nullptr && o.comm->size() > 1;
}
inline int Rank(const ResistanceOptions& o) { return o.comm ? o.comm->rank() : 0; }
inline int Ranks(const ResistanceOptions& o) { return o.comm ? o.comm->size() : 1; }

// Stage 1 of ComputeResistance: a route per component (kAuto: dense, else
// one-sided or sketch as RouteFor says, revisited in phase 2) and the phase-1
// tasks: dense components and the node-row sketch columns. In a distributed
// run the pair counts are summed over the ranks and sketch blocks are dealt
// round-robin. Errors: RESOURCE_EXHAUSTED (dense too big).
absl::StatusOr<Plan> PlanComponents(const PairTable& pairs, const PositiveGraph& g,
                                    const ResistanceOptions& o);

// Stage 2: with the measured residual share ρ, the pair sketch's k; kAuto's
// one-sided components that the sketch serves cheaper become sketch ones
// (OneSidedIsCheaper); appends the phase-2 tasks (one-sided columns: this
// rank's users when distributed) and counts the routes.
void PlanSecondPhase(const PositiveGraph& g, const PairIncidence& inc, const ResistanceOptions& o,
                     double residual_share, Plan* plan);

}  // namespace maec_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RESISTANCE_PLAN_H_
