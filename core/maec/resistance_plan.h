// The route plan of ComputeResistance (resistance.h): which route serves each
// component and the list of solve tasks. Internal to core/maec.
//
// Thread-safety: pure functions; PlanComponents runs collectives when
// options.comm is set (every rank calls it).
#ifndef GRAPHSIEVE_CORE_MAEC_RESISTANCE_PLAN_H_
#define GRAPHSIEVE_CORE_MAEC_RESISTANCE_PLAN_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/dist/communicator.h"
#include "core/maec/graph.h"
#include "core/maec/pair_table.h"
#include "core/maec/resistance.h"
#include "core/maec/resistance_options.h"

namespace graphsieve {
namespace maec_internal {

inline constexpr uint32_t kMaxDenseNodes = 8000;  // 0.5 GB of doubles and ~10^12 flops

enum class Route { kSkip, kDense, kOneSided, kSketch };

struct Task {
  uint32_t component;
  Route kind;          // kDense: whole component; kOneSided: S columns; kSketch: sketch columns
  uint32_t begin, end; // column range; kOneSided: range of Plan::columns[component]
};

// What ComputeResistance decided per component, and the work list.
struct Plan {
  std::vector<Route> route;         // per component
  std::vector<uint8_t> s_is_users;  // per component: the solved side S is the users
  std::vector<std::vector<uint32_t>> columns;  // one-sided: S positions (inside S) this rank solves
  std::vector<Task> tasks;
  int pair_k = 0;                   // columns of the pair sketch (ResistanceOptions::PairSketchDim)
};

inline bool Distributed(const ResistanceOptions& o) { return o.comm != nullptr && o.comm->size() > 1; }
inline int Rank(const ResistanceOptions& o) { return o.comm ? o.comm->rank() : 0; }
inline int Ranks(const ResistanceOptions& o) { return o.comm ? o.comm->size() : 1; }

// Stage 1 of ComputeResistance: a route per component (kAuto: dense, then
// one-sided while cheaper than the pair sketch), then the tasks. In a
// distributed run the pair counts are summed over the ranks, sketch blocks
// are dealt round-robin and the one-sided columns are this rank's users.
// Counts the routes into `out`. Errors: RESOURCE_EXHAUSTED (dense too big).
absl::StatusOr<Plan> PlanComponents(const PairTable& pairs, const PositiveGraph& g, const PairIncidence& inc,
                                    const ResistanceOptions& o, ResistanceResult* out);

}  // namespace maec_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RESISTANCE_PLAN_H_
