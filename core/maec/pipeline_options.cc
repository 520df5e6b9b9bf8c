#include "core/maec/pipeline_options.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace graphsieve {

absl::StatusOr<Method> ParseMethod(std::string_view name) {
  for (Method m : {Method::kMaec, Method::kUniform, Method::kOpt, Method::kMax, Method::kMean,
                   Method::kProduct}) {
    if (name == MethodName(m)) return m;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown method '", std::string(name),
                   "': expected maec, uniform, opt, max, mean or product"));
}

const char* MethodName(Method m) {
  switch (m) {
    case Method::kMaec:
      return "maec";
    case Method::kUniform:
      return "uniform";
    case Method::kOpt:
      return "opt";
    case Method::kMax:
      return "max";
    case Method::kMean:
      return "mean";
    case Method::kProduct:
      return "product";
  }
  return "?";
}

bool NeedsPilot(Method m) {
  return m == Method::kOpt || m == Method::kMax || m == Method::kMean || m == Method::kProduct;
}

ResistanceOptions PipelineOptions::Resistance() const {
  ResistanceOptions r;
  r.method = resistance;
  r.sketch_dim = sketch_dim;
  r.unseen_control_variate = unseen_control_variate;
  r.solver_tolerance = solver_tolerance;
  r.solver_max_iterations = solver_max_iterations;
  r.exact_max_nodes = exact_max_nodes;
  r.one_sided_max_solves = one_sided_max_solves;
  r.block_columns = block_columns;
  r.seed = seed;
  r.threads = threads;
  r.comm = comm;
  return r;
}

absl::Status PipelineOptions::Validate() const {
  auto bad = [](auto&&... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  if (!(alpha >= kMinAlpha && alpha <= 1.0)) {
    return bad("alpha must be in [", kMinAlpha, ", 1], got ", alpha);
  }
  if (rate_rule == RateRule::kFloor) {
    // The floor rule cannot reach α at or below a floor.
    for (auto [name, value] : {std::pair{"floor", floor},
                               {"pilot_floor", PilotFloor()},
                               {"product_floor", product_floor}}) {
      if (!(value >= 0.0 && value < alpha)) {
        return bad(name, " must be in [0, alpha) = [0, ", alpha, ") with rate rule 'floor', got ",
                   value, " (rate rule 'mixture' reaches every alpha)");
      }
    }
  } else {
    for (auto [name, value] : {std::pair{"kappa", kappa},
                               {"pilot_kappa", PilotKappa()},
                               {"product_kappa", product_kappa}}) {
      if (!(value > 0.0 && value <= 1e6)) return bad(name, " must be in (0, 1e6], got ", value);
    }
  }
  if (!(score_power > 0.0 && score_power <= 4.0))
    return bad("score_power must be in (0, 4], got ", score_power);
  if (!(exposure_power >= 0.0 && exposure_power <= 2.0))
    return bad("exposure_power must be in [0, 2], got ", exposure_power);
  if (!(gamma >= 0.0 && gamma < 1.0)) return bad("gamma must be in [0, 1), got ", gamma);
  if (!(propagation_tolerance > 0.0))
    return bad("propagation_tolerance must be > 0, got ", propagation_tolerance);
  if (propagation_max_iterations < 0) {
    return bad("propagation_max_iterations must be >= 0, got ", propagation_max_iterations);
  }
  if (threads < 1 || threads > 256) return bad("threads must be in [1, 256], got ", threads);
  return Resistance().Validate();
}

}  // namespace graphsieve
