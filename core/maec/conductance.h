// The graph half of the MA-EC pipeline (docs/DESIGN.md §2.2–2.4): positive
// graph, effective conductance, hardness and the node sketch rows. It does not
// depend on the method, α or the floor, so an evaluation that compares methods
// computes it once and calls RunPipelineWithConductance (pipeline.h) per method.
//
// Thread-safety: ComputeConductance is a pure function of its inputs (and the
// seed); it uses up to options.threads threads.
#ifndef GRAPHSIEVE_CORE_MAEC_CONDUCTANCE_H_
#define GRAPHSIEVE_CORE_MAEC_CONDUCTANCE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/maec/graph.h"
#include "core/maec/pair_table.h"
#include "core/maec/pipeline_options.h"
#include "core/records/solve_summary.h"

namespace graphsieve {

struct ConductanceResult {
  std::vector<float> geff;          // per pair; empty without PipelineOptions::per_pair_details
  std::vector<float> hardness;      // per pair: geff - label (counterfactual for positives), >= 0
  std::vector<uint32_t> component;  // per node
  int sketch_dim = 0;
  std::vector<float> sketch;  // per node rows (NodeTable::sketch)
  uint32_t num_components = 0;
  uint32_t positive_pairs = 0;
  std::string resistance_route;  // route of the largest component: dense | one-sided | sketch
  std::vector<SolveSummary> solves;
  std::vector<StageTiming> timings;
};

// REQUIRES: options.Validate().ok() — checked where the options enter (the
// builder's flags, RunBuild, the evaluation's per-method options) and only
// asserted here, in debug builds. Errors: ComputeResistance's solver errors
// (FAILED_PRECONDITION naming the component, RESOURCE_EXHAUSTED).
absl::StatusOr<ConductanceResult> ComputeConductance(const PairTable& pairs,
                                                     const PipelineOptions& options);

// The same on a positive graph built by the caller: a distributed build
// (options.comm) passes the global graph while `pairs` holds this rank's
// pairs (docs/DESIGN.md §5). REQUIRES: options.Validate().ok() (as above);
// graph's nodes are pairs' users and items.
absl::StatusOr<ConductanceResult> ComputeConductanceOnGraph(const PairTable& pairs,
                                                            const PositiveGraph& graph,
                                                            const PipelineOptions& options);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_CONDUCTANCE_H_
