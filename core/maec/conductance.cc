// ComputeConductance (conductance.h): positive graph → effective resistance →
// hardness, timed per stage.
#include "core/maec/conductance.h"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <utility>

#include "core/maec/graph.h"
#include "core/maec/parallel.h"
#include "core/maec/resistance.h"
#include "core/maec/stage_clock.h"

namespace graphsieve {

namespace {

// Resistance and hardness into *out (whose timings `clock` records).
absl::Status Conductance(const PairTable& pairs, const PositiveGraph& graph,
                         const PipelineOptions& o, maec_internal::StageClock& clock,
                         ConductanceResult* out) {
  ConductanceResult& c = *out;
  c.component = graph.component;
  c.num_components = graph.num_components;
  c.positive_pairs = static_cast<uint32_t>(graph.num_edges);
  absl::StatusOr<ResistanceResult> r = ComputeResistance(pairs, graph, o.Resistance());
  if (!r.ok()) return r.status();
  c.sketch_dim = r->sketch_dim;
  c.sketch = std::move(r->sketch);
  c.solves = std::move(r->solves);
  c.resistance_route = r->route;
  clock.Done("resistance");

  if (o.per_pair_details) c.geff.resize(pairs.num_pairs());  // else only the hardness is needed
  c.hardness.resize(pairs.num_pairs());
  const bool geff = o.per_pair_details;
  maec_internal::ParallelChunks(pairs.num_pairs(), o.threads, [&](int, size_t begin, size_t end) {
    for (size_t p = begin; p < end; ++p) {
      const double res = r->resistance[p];
      const double g = std::isfinite(res) && res > 0.0 ? 1.0 / res : 0.0;
      if (geff) c.geff[p] = static_cast<float>(g);
      // A positive edge is in parallel with the rest of the graph: G_eff − 1
      // is the conductance of the graph without it (0 for a bridge).
      c.hardness[p] = static_cast<float>(std::max(0.0, g - pairs.label[p]));
    }
  });
  clock.Done("hardness");
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ConductanceResult> ComputeConductance(const PairTable& pairs,
                                                     const PipelineOptions& o) {
  assert(o.Validate().ok() && "PipelineOptions are validated where they enter (conductance.h)");
  ConductanceResult c;
  maec_internal::StageClock clock(&c.timings, o);
  absl::StatusOr<PositiveGraph> graph = BuildPositiveGraph(pairs);
  if (!graph.ok()) return graph.status();
  clock.Done("graph");
  if (absl::Status s = Conductance(pairs, *graph, o, clock, &c); !s.ok()) return s;
  return c;
}

absl::StatusOr<ConductanceResult> ComputeConductanceOnGraph(const PairTable& pairs,
                                                            const PositiveGraph& graph,
                                                            const PipelineOptions& o) {
  assert(o.Validate().ok() && "PipelineOptions are validated where they enter (conductance.h)");
  if (graph.num_users != pairs.num_users() || graph.num_items != pairs.num_items()) {
    return absl::InvalidArgumentError("positive graph and pair table have different nodes");
  }
  ConductanceResult c;
  maec_internal::StageClock clock(&c.timings, o);
  if (absl::Status s = Conductance(pairs, graph, o, clock, &c); !s.ok()) return s;
  return c;
}

}  // namespace graphsieve
