// What the MA-EC pipeline computes and how (docs/DESIGN.md §2): the sampling
// method, α, floors, propagation switches and the resistance route.
//
// Thread-safety: plain values; the functions are pure.
#ifndef GRAPHSIEVE_CORE_MAEC_PIPELINE_OPTIONS_H_
#define GRAPHSIEVE_CORE_MAEC_PIPELINE_OPTIONS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/maec/method.h"
#include "core/maec/rates.h"
#include "core/maec/resistance_options.h"
#include "core/records/unseen_model.h"

namespace graphsieve {

// "maec", "uniform", "opt", "max", "mean", "product". Errors: INVALID_ARGUMENT listing them.
absl::StatusOr<Method> ParseMethod(std::string_view name);
const char* MethodName(Method m);
// The pilot-based methods (opt, max, mean, product).
bool NeedsPilot(Method m);

// The smallest α accepted. Rates are float32 and the build's negative-mean
// gate allows |mean − α| ≤ its tolerance (BuildOptions::gate_tolerance, the
// same size): below this the gate could not tell a right fit from a wrong
// one, and far below it the rates underflow to 0.
inline constexpr double kMinAlpha = 1e-6;

struct PipelineOptions {
  Method method = Method::kMaec;
  double alpha = 0.2;  // target mean rate over negative instances, in [kMinAlpha, 1]
  // How a score becomes a rate (rates.h, docs/METHOD.md "Rate rules"):
  //   kFloor    π = min(max(ρs, ϱ), 1); α can be unreachable (the error says so)
  //   kMixture  π = min(1, ρ(s/h̄ + κ)); every α ∈ (0, 1] is reachable
  // Default: the mixture rule with κ = 0.1, chosen on evidence (docs/EVALUATION.md
  // "Verdict": best worst case over MovieLens and the preference-driven log, in
  // today's and the deployed mode); it reaches every α on every log.
  RateRule rate_rule = RateRule::kMixture;
  double floor = 0.01;  // floor rule: ϱ of the MA-EC score; must be < alpha
  std::optional<double>
      pilot_floor;  // floor rule: ϱ of the pilot score (opt and its ensemble member); unset = floor
  double product_floor = 0.01;        // floor rule: floor of the product ensemble
  double kappa = 1.0;                 // mixture: uniform share κ of the MA-EC score, > 0
  std::optional<double> pilot_kappa;  // mixture: κ of the pilot score; unset = kappa
  double product_kappa = 0.25;        // mixture: κ of the product ensemble's refit
  // Rates are made from t = s^β of the MA-EC score s (either rule; the pilot
  // score is a probability and is used as it is). β in (0, 1]; 1 = s itself.
  double score_power = 1.0;
  // Exposure discount η (MA-EC, mixture or floor): the rate score of pair
  // (u, i) is t(s) / n_i^η, n_i = the item's impressions in the log, so an
  // item's negatives are not kept more often just because the log shows the
  // item more (docs/METHOD.md "Exposure discount"). η in [0, 2]; 0 = off.
  double exposure_power = 0.0;
  // A positive pair's rate is its counterfactual rate: the rate it would get
  // as a negative (docs/METHOD.md "Counterfactual positives"). false = the
  // label-dependent rate of earlier versions (for measurement only).
  bool counterfactual_positives = true;
  double gamma = 0.5;                    // propagation weight γ in [0, 1)
  bool uncertainty_propagation = true;   // docs/DESIGN.md §2.5
  bool score_propagation = true;         // docs/DESIGN.md §2.6
  bool symmetric_normalisation = false;  // D^-1/2 A D^-1/2 instead of the edge rule
  bool correct_pilot = false;            // apply §2.5-6 to the pilot score before combining
  double propagation_tolerance = 1e-6;   // max |Δ| between iterations
  int propagation_max_iterations = 100;
  ResistanceMethod resistance = ResistanceMethod::kAuto;
  int sketch_dim = 64;  // k for the sketch (and the node rows kept for unseen pairs)
  // Node rows for unseen pairs with the control variate (ResistanceOptions::
  // unseen_control_variate): sketch_dim + 2 floats; false = plain rows.
  bool unseen_control_variate = true;
  double solver_tolerance = 1e-6;  // relative residual of every CG solve
  int solver_max_iterations = 1000;
  int exact_max_nodes = 1000;            // kAuto: dense exact up to this component size
  int64_t one_sided_max_solves = 20000;  // kAuto: one-sided exact while a component's smaller side
                                         // is at most this (else sketch)
  int block_columns = 32;                // right-hand sides per PCG block (one-sided route)
  // PipelineResult's per-pair columns besides `rate` (geff, hardness,
  // uncertainty, propagated_score, score). false = left empty: a build that
  // exports nothing needs only the rates, and the pipeline's peak memory per
  // pair is then ≈ 16 bytes lower (docs/SCALING.md "Memory per impression").
  // The rates and node records are the same either way.
  bool per_pair_details = true;
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
  // Floats per stored node row (ResistanceOptions::NodeRowDim).
  int NodeRowDim() const { return Resistance().NodeRowDim(); }
  double PilotFloor() const { return pilot_floor.value_or(floor); }
  double PilotKappa() const { return pilot_kappa.value_or(kappa); }
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_PIPELINE_OPTIONS_H_
