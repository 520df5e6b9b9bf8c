// Method names, pilot sources and option validation of the experiment.
#include <cmath>

#include "absl/strings/str_cat.h"
#include "eval/experiment.h"

namespace graphsieve::eval {
namespace {

struct NamedSpec {
  const char* name;
  MethodSpec::Kind kind;
  Method method;
  bool uncertainty, score, correct_pilot;
  double score_power = 1.0;
  bool mixture = false;
  double exposure_power = 0.0;
  bool item_centred = false;
  MethodSpec::Transform transform = MethodSpec::Transform::kNone;
  double transform_power = 0.0;
};

using T = MethodSpec::Transform;

constexpr NamedSpec kSpecs[] = {
    {"full", MethodSpec::Kind::kFull, Method::kUniform, false, false, false},
    {"uniform", MethodSpec::Kind::kUniform, Method::kUniform, false, false, false},
    {"opt", MethodSpec::Kind::kPipeline, Method::kOpt, false, false, false},
    {"opt-prop", MethodSpec::Kind::kPipeline, Method::kOpt, false, false, true},
    {"maec", MethodSpec::Kind::kPipeline, Method::kMaec, false, false, false},
    {"maec-u", MethodSpec::Kind::kPipeline, Method::kMaec, true, false, false},
    {"maec-prop", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false},
    {"max", MethodSpec::Kind::kPipeline, Method::kMax, true, true, false},
    {"max-raw", MethodSpec::Kind::kPipeline, Method::kMax, false, false, false},
    {"maec-prop-sqrt", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 0.5},
    {"opt-sqrt", MethodSpec::Kind::kPipeline, Method::kOpt, false, false, false, 0.5},
    {"mean", MethodSpec::Kind::kPipeline, Method::kMean, true, true, false},
    {"product", MethodSpec::Kind::kPipeline, Method::kProduct, true, true, false},
    {"maec-mix", MethodSpec::Kind::kPipeline, Method::kMaec, false, false, false, 1.0, true},
    {"maec-u-mix", MethodSpec::Kind::kPipeline, Method::kMaec, true, false, false, 1.0, true},
    {"maec-prop-mix", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0, true},
    {"opt-mix", MethodSpec::Kind::kPipeline, Method::kOpt, false, false, false, 1.0, true},
    {"max-mix", MethodSpec::Kind::kPipeline, Method::kMax, true, true, false, 1.0, true},
    {"max-raw-mix", MethodSpec::Kind::kPipeline, Method::kMax, false, false, false, 1.0, true},
    // The default rule with the item's exposure discounted (graphsieve-build --exposure_power), and
    // the item-centred investigation variant (offline only).
    {"maec-prop-mix-exp0.5", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0,
     true, 0.5},
    {"maec-prop-mix-exp1", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0, true,
     1.0},
    {"maec-prop-mix-item", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0, true,
     0.0, true},
    // The limit (eval/leverage.h) and the candidates (docs/EVALUATION.md "Candidates").
    {"oracle", MethodSpec::Kind::kOracle, Method::kUniform, false, false, false},
    {"oracle-p", MethodSpec::Kind::kOracle, Method::kUniform, false, false, false},
    {"oracle-mix", MethodSpec::Kind::kOracle, Method::kUniform, false, false, false, 1.0, true},
    {"maec-prop-mix-lev", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0, true,
     0.0, false, T::kLeverageOwn},
    {"maec-prop-mix-levr", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0, true,
     0.0, false, T::kLeverageRandom},
    {"opt-mix-lev", MethodSpec::Kind::kPipeline, Method::kOpt, false, false, false, 1.0, true, 0.0,
     false, T::kLeverageOwn},
    {"opt-mix-levr", MethodSpec::Kind::kPipeline, Method::kOpt, false, false, false, 1.0, true, 0.0,
     false, T::kLeverageRandom},
    {"maec-prop-mix-pos0.1", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0,
     true, 0.0, false, T::kItemPositives, 0.1},
    {"maec-prop-mix-pos0.2", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0,
     true, 0.0, false, T::kItemPositives, 0.2},
    {"maec-prop-mix-pos0.3", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0,
     true, 0.0, false, T::kItemPositives, 0.3},
    {"maec-prop-mix-pos0.4", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0,
     true, 0.0, false, T::kItemPositives, 0.4},
    {"maec-prop-mix-user", MethodSpec::Kind::kPipeline, Method::kMaec, true, true, false, 1.0, true,
     0.0, false, T::kPerUser},
};

}  // namespace

bool MethodSpec::needs_pilot() const {
  return kind == Kind::kPipeline && method != Method::kMaec && method != Method::kUniform;
}

bool MethodSpec::uses_gamma() const {
  return kind == Kind::kPipeline && (uncertainty_propagation || score_propagation || correct_pilot);
}

absl::StatusOr<MethodSpec> ParseMethodSpec(std::string_view name) {
  for (const NamedSpec& n : kSpecs) {
    if (name == n.name) {
      MethodSpec s;
      s.kind = n.kind;
      s.name = n.name;
      s.method = n.method;
      s.uncertainty_propagation = n.uncertainty;
      s.score_propagation = n.score;
      s.correct_pilot = n.correct_pilot;
      s.score_power = n.score_power;
      s.mixture = n.mixture;
      s.exposure_power = n.exposure_power;
      s.item_centred = n.item_centred;
      s.transform = n.transform;
      s.transform_power = n.transform_power;
      s.oracle_leverage = std::string_view(n.name) != "oracle-p";
      return s;
    }
  }
  return absl::InvalidArgumentError(absl::StrCat("unknown method '", std::string(name),
                                                 "', expected one of ", MethodSpecNames()));
}

std::string MethodSpecNames() {
  std::string out;
  for (const NamedSpec& n : kSpecs) absl::StrAppend(&out, out.empty() ? "" : ",", n.name);
  return out;
}

absl::StatusOr<PilotSource> ParsePilotSource(std::string_view name) {
  if (name == "auto") return PilotSource::kAuto;
  if (name == "column") return PilotSource::kColumn;
  if (name == "lr") return PilotSource::kTrainLr;
  if (name == "fm") return PilotSource::kTrainFm;
  if (name == "mlp") return PilotSource::kTrainMlp;
  if (name == "none") return PilotSource::kNone;
  if (name == "builtin") return PilotSource::kBuiltIn;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown pilot source '", std::string(name),
                   "', expected auto, column, lr, fm, mlp, builtin or none"));
}

bool IsTrainedPilot(PilotSource source) {
  return source == PilotSource::kTrainLr || source == PilotSource::kTrainFm ||
         source == PilotSource::kTrainMlp;
}

absl::StatusOr<EvalMode> ParseEvalMode(std::string_view name) {
  if (name == "random") return EvalMode::kRandom;
  if (name == "deployed") return EvalMode::kDeployed;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown mode '", std::string(name), "', expected random or deployed"));
}

const char* EvalModeName(EvalMode mode) {
  return mode == EvalMode::kDeployed ? "deployed" : "random";
}

// Errors name the graphsieve-eval flag each option comes from (eval/main.cc).
absl::Status ExperimentOptions::Validate() const {
  auto bad = [](auto&&... parts) { return absl::InvalidArgumentError(absl::StrCat(parts...)); };
  if (methods.empty()) return bad("--methods is empty");
  for (const std::string& m : methods) {
    if (absl::StatusOr<MethodSpec> s = ParseMethodSpec(m); !s.ok()) {
      return bad("--methods: ", s.status().message());
    }
  }
  // A grid flag: not empty, every value in range.
  auto grid = [&](const char* flag, const std::vector<double>& values, bool allow_empty,
                  auto in_range, const char* range) -> absl::Status {
    if (values.empty() && !allow_empty) return bad("--", flag, " is empty");
    for (double v : values) {
      if (!in_range(v)) return bad("--", flag, ": ", v, " is not in ", range);
    }
    return absl::OkStatus();
  };
  auto open_unit = [](double v) { return v > 0.0 && v < 1.0; };
  auto positive = [](double v) { return v > 0.0 && std::isfinite(v); };
  for (absl::Status s : {
           grid("alphas", alphas, false, open_unit, "(0, 1)"),
           grid("floors", floors, false, open_unit, "(0, 1)"),
           grid(
               "gammas", gammas, false, [](double v) { return v >= 0.0 && v < 1.0; }, "[0, 1)"),
           grid("kappas", kappas, false, positive, "(0, inf)"),
           grid("pilot_kappas", pilot_kappas, true, positive, "(0, inf)"),
       }) {
    if (!s.ok()) return s;
  }
  if (models.empty()) return bad("--models is empty");
  if (pilot_folds < 1 || pilot_folds > 20) {
    return bad("--pilot_folds must be in [1, 20], got ", pilot_folds);
  }
  if (seeds < 1 || seeds > 100) return bad("--seeds must be in [1, 100], got ", seeds);
  if (mode == EvalMode::kDeployed) {
    if (!(later_fraction > 0.0 && later_fraction < 1.0)) {
      return bad("--later_fraction must be in (0, 1), got ", later_fraction);
    }
    for (const std::string& m : methods) {
      if (ParseMethodSpec(m)->is_investigation_variant()) {
        return bad("--methods: ", m,
                   " is an investigation variant of the rates; it has no snapshot, so it "
                   "cannot run in deployed mode");
      }
    }
  }
  if (ndcg_k < 1) return bad("--ndcg_k must be >= 1, got ", ndcg_k);
  // Every model setting, whichever models run (the mlp checks them all), and
  // the pipeline's own settings (threads, sketch_dim, score_power,
  // exposure_power) under a rule every configuration can take: checked here,
  // before anything is trained, not when the first model or method uses them.
  // Their fields carry the names of the flags that set them.
  ModelOptions every_model = model;
  every_model.kind = ModelKind::kMlp;
  if (absl::Status s = every_model.Validate(); !s.ok()) return bad("--", s.message());
  PipelineOptions any_rule = pipeline;
  any_rule.alpha = 0.5;
  any_rule.rate_rule = RateRule::kMixture;
  any_rule.kappa = 1.0;
  any_rule.gamma = 0.5;
  if (absl::Status s = any_rule.Validate(); !s.ok()) return bad("--", s.message());
  return split.Validate();
}

}  // namespace graphsieve::eval
