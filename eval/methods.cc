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
};

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
  return absl::InvalidArgumentError(absl::StrCat("unknown pilot source '", std::string(name),
                                                 "', expected auto, column, lr, fm, mlp or none"));
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

absl::Status ExperimentOptions::Validate() const {
  if (methods.empty()) return absl::InvalidArgumentError("methods is empty");
  for (const std::string& m : methods) {
    if (absl::StatusOr<MethodSpec> s = ParseMethodSpec(m); !s.ok()) return s.status();
  }
  if (alphas.empty()) return absl::InvalidArgumentError("alphas is empty");
  for (double a : alphas) {
    if (!(a > 0.0 && a < 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat("alpha must be in (0, 1), got ", a));
    }
  }
  if (floors.empty()) return absl::InvalidArgumentError("floors is empty");
  for (double f : floors) {
    if (!(f > 0.0 && f < 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat("floor must be in (0, 1), got ", f));
    }
  }
  if (!(pipeline.exposure_power >= 0.0 && pipeline.exposure_power <= 2.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("exposure_power must be in [0, 2], got ", pipeline.exposure_power));
  }
  if (gammas.empty()) return absl::InvalidArgumentError("gammas is empty");
  if (kappas.empty()) return absl::InvalidArgumentError("kappas is empty");
  for (double k : kappas) {
    if (!(k > 0.0 && std::isfinite(k))) {
      return absl::InvalidArgumentError(absl::StrCat("kappa must be > 0, got ", k));
    }
  }
  for (double k : pilot_kappas) {
    if (!(k > 0.0 && std::isfinite(k))) {
      return absl::InvalidArgumentError(absl::StrCat("pilot kappa must be > 0, got ", k));
    }
  }
  for (double g : gammas) {
    if (!(g >= 0.0 && g < 1.0)) {
      return absl::InvalidArgumentError(absl::StrCat("gamma must be in [0, 1), got ", g));
    }
  }
  if (models.empty()) return absl::InvalidArgumentError("models is empty");
  if (pilot_folds < 1 || pilot_folds > 20) {
    return absl::InvalidArgumentError(
        absl::StrCat("pilot_folds must be in [1, 20], got ", pilot_folds));
  }
  if (seeds < 1 || seeds > 100) {
    return absl::InvalidArgumentError(absl::StrCat("seeds must be in [1, 100], got ", seeds));
  }
  if (mode == EvalMode::kDeployed) {
    if (!(later_fraction > 0.0 && later_fraction < 1.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("later_fraction must be in (0, 1), got ", later_fraction));
    }
    for (const std::string& m : methods) {
      if (ParseMethodSpec(m)->is_investigation_variant()) {
        return absl::InvalidArgumentError(
            absl::StrCat("method ", m,
                         " is an investigation variant of the rates; it has no snapshot, so it "
                         "cannot run in deployed mode"));
      }
    }
  }
  if (ndcg_k < 1)
    return absl::InvalidArgumentError(absl::StrCat("ndcg_k must be >= 1, got ", ndcg_k));
  if (absl::Status s = model.Validate(); !s.ok()) return s;
  return split.Validate();
}

}  // namespace graphsieve::eval
