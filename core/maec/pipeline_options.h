// What the MA-EC pipeline computes and how (docs/DESIGN.md §2): the sampling
// method, α, floors, propagation switches and the resistance route.
//
// Thread-safety: plain values; the functions are pure.
#ifndef GRAPHSIEVE_CORE_MAEC_PIPELINE_OPTIONS_H_
#define GRAPHSIEVE_CORE_MAEC_PIPELINE_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/maec/resistance_options.h"

namespace graphsieve {

enum class Method { kMaec, kUniform, kOpt, kMax, kMean, kProduct };

// "maec", "uniform", "opt", "max", "mean", "product". Errors: INVALID_ARGUMENT listing them.
absl::StatusOr<Method> ParseMethod(std::string_view name);
const char* MethodName(Method m);
// The pilot-based methods (opt, max, mean, product).
bool NeedsPilot(Method m);

struct PipelineOptions {
  Method method = Method::kMaec;
  double alpha = 0.2;                  // target mean rate over negative instances
  double floor = 0.01;                 // rate floor ϱ; must be < alpha
  double product_floor = 0.01;         // floor of the product ensemble
  double gamma = 0.5;                  // propagation weight γ in [0, 1)
  bool uncertainty_propagation = true; // docs/DESIGN.md §2.5
  bool score_propagation = true;       // docs/DESIGN.md §2.6
  bool symmetric_normalisation = false;// D^-1/2 A D^-1/2 instead of the edge rule
  bool correct_pilot = false;          // apply §2.5-6 to the pilot score before combining
  double propagation_tolerance = 1e-6; // max |Δ| between iterations
  int propagation_max_iterations = 100;
  ResistanceMethod resistance = ResistanceMethod::kAuto;
  int sketch_dim = 64;                 // k for the sketch (and the node rows kept for unseen pairs)
  double solver_tolerance = 1e-6;      // relative residual of every CG solve
  int solver_max_iterations = 1000;
  int exact_max_nodes = 1000;          // kAuto: dense exact up to this component size
  int64_t one_sided_max_solves = 20000; // kAuto: one-sided exact while a component's smaller side is at most this (else sketch)
  int block_columns = 32;              // right-hand sides per PCG block (one-sided route)
  uint64_t seed = 42;
  int threads = 2;
  std::function<void(const std::string& stage, double fraction)> progress;  // may be empty
  // Distributed run (docs/DESIGN.md §5), not owned; null = one process. The
  // pair table then holds this rank's pairs only; every node sum, the gates'
  // sums and the α fit reduce over all ranks (ResistanceOptions::comm).
  Communicator* comm = nullptr;
  // INVALID_ARGUMENT naming the broken constraint.
  absl::Status Validate() const;
  // The resistance stage's share of these options.
  ResistanceOptions Resistance() const;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_PIPELINE_OPTIONS_H_
