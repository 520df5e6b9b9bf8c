#include "eval/experiment.h"

#include <chrono>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/maec/rates.h"
#include "eval/experiment_internal.h"
#include "eval/leverage.h"
#include "eval/metrics.h"
#include "eval/random.h"

namespace graphsieve::eval {

namespace {

using internal::Append;
using internal::AppendWithTruth;
using internal::CheckBothClasses;
using internal::Config;
using internal::DenseLog;
using internal::Densify;
using internal::InEvalTerms;
using internal::SeedData;

constexpr uint64_t kKeepStream = 0x6b656570ULL;  // "keep"

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

absl::StatusOr<SeedData> PrepareSeed(const ImpressionLog& log, const DenseLog& dense,
                                     const ExperimentOptions& o, uint64_t seed, bool need_pilot,
                                     std::string* pilot_name) {
  SplitOptions split = o.split;
  split.seed = seed;
  absl::StatusOr<std::vector<Part>> parts = SplitByInstance(log.size(), split);
  if (!parts.ok()) return parts.status();
  SeedData s;
  const bool has_pilot = !log.pilot_scores.empty();
  for (size_t i = 0; i < log.size(); ++i) {
    switch ((*parts)[i]) {
      case Part::kTrain:
        AppendWithTruth(dense, i, &s.train, &s.train_truth);
        s.train_log.user_ids.push_back(log.user_ids[i]);
        s.train_log.item_ids.push_back(log.item_ids[i]);
        s.train_log.labels.push_back(log.labels[i]);
        if (has_pilot) s.train_log.pilot_scores.push_back(log.pilot_scores[i]);
        s.train_negatives += log.labels[i] == 0;
        break;
      case Part::kValidation:
        Append(dense.all, i, &s.validation);
        break;
      case Part::kTest:
        AppendWithTruth(dense, i, &s.test, &s.test_truth);
        break;
    }
  }
  for (const auto& [d, name] : {std::pair<const Instances*, const char*>{&s.train, "training"},
                                {&s.validation, "validation"},
                                {&s.test, "test"}}) {
    if (absl::Status st = CheckBothClasses(*d, name); !st.ok()) return st;
  }
  if (need_pilot && (IsTrainedPilot(o.pilot) || (o.pilot == PilotSource::kAuto && !has_pilot))) {
    absl::StatusOr<std::vector<float>> p = internal::TrainPilot(
        o, dense, seed, s.train, s.validation, "the training part", pilot_name);
    if (!p.ok()) return p.status();
    s.train_log.pilot_scores = *std::move(p);
  } else if (need_pilot) {
    *pilot_name = "column (the log's pilot score)";
  }
  if (absl::Status st = internal::IndexTrainingPairs(o.pipeline.threads, &s); !st.ok()) return st;
  return s;
}

std::vector<Config> ExpandGrid(const std::vector<MethodSpec>& specs, const ExperimentOptions& o) {
  // Alpha outermost, so a table reads as one block of methods per alpha.
  std::vector<Config> out;
  for (double alpha : o.alphas) {
    for (const MethodSpec& spec : specs) {
      if (spec.kind == MethodSpec::Kind::kFull) continue;  // always run once per seed
      if (spec.kind == MethodSpec::Kind::kOracle && spec.mixture) {
        for (double kappa : o.kappas) out.push_back({spec, alpha, 0.0, 0.0, kappa});
        continue;
      }
      if (spec.kind == MethodSpec::Kind::kUniform || spec.kind == MethodSpec::Kind::kOracle) {
        out.push_back({spec, alpha, 0.0, 0.0});
        continue;
      }
      std::vector<double> gammas = spec.uses_gamma() ? o.gammas : std::vector<double>{0.0};
      if (spec.mixture) {
        std::vector<double> pilot_kappas = {0.0};  // 0 = the graph member's κ
        if (spec.needs_pilot() && !o.pilot_kappas.empty()) pilot_kappas = o.pilot_kappas;
        for (double kappa : o.kappas) {
          for (double pk : pilot_kappas) {
            for (double gamma : gammas) {
              out.push_back({spec, alpha, 0.0, gamma, kappa,
                             spec.needs_pilot() ? (pk > 0 ? pk : kappa) : 0.0});
            }
          }
        }
        continue;
      }
      for (double floor : o.floors) {
        if (floor >= alpha) continue;
        for (double gamma : gammas) out.push_back({spec, alpha, floor, gamma});
      }
    }
  }
  return out;
}

// The oracle's rates (eval/leverage.h): π ∝ p·h_Q (or p) over the training
// pairs, Q from the measured test's truth, fitted to α with the floor α/100, or
// with the mixture rule π = min(1, ρ(s/s̄ + κ)) (oracle-mix);
// *cv2 the CV² of the score over the negatives.
absl::StatusOr<std::vector<float>> OracleRates(const Config& c, const SeedData& s,
                                               const ExperimentOptions& o, double* cv2) {
  if (s.train_truth.size() != s.train.size() || s.test_truth.size() != s.test.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "method ", c.spec.name,
        " needs the generator's true probabilities of the log and of the test: --truth_col "
        "(graphsieve-gen --truth writes 'true_prob'; with --test, the test file needs it too)"));
  }
  // Dense node index -> pair-table index, through the training instances.
  absl::flat_hash_map<uint32_t, int64_t> user_of, item_of;
  for (size_t k = 0; k < s.train.size(); ++k) {
    user_of[s.train.user[k]] = s.pairs.pair_user[s.pair_of[k]];
    item_of[s.train.item[k]] = s.pairs.pair_item[s.pair_of[k]];
  }
  std::vector<int64_t> test_user(s.test.size(), -1), test_item(s.test.size(), -1);
  for (size_t k = 0; k < s.test.size(); ++k) {
    if (auto u = user_of.find(s.test.user[k]); u != user_of.end()) test_user[k] = u->second;
    if (auto i = item_of.find(s.test.item[k]); i != item_of.end()) test_item[k] = i->second;
  }
  const std::vector<double> score = OracleScores(s.pairs, s.pair_of, s.train_truth, test_user,
                                                 test_item, s.test_truth, c.spec.oracle_leverage);
  *cv2 = ScoreCv2(score, s.pairs.negatives);
  std::vector<double> rates;
  absl::StatusOr<RateFit> fit =
      c.spec.mixture
          ? FitMixtureRates(score, s.pairs.negatives, c.alpha, c.kappa, &rates, o.pipeline.threads)
          : FitRates(score, s.pairs.negatives, c.alpha, c.alpha / 100.0, &rates,
                     o.pipeline.threads);
  if (!fit.ok()) {
    return absl::Status(fit.status().code(),
                        absl::StrCat("method ", c.spec.name, ": ", fit.status().message()));
  }
  return std::vector<float>(rates.begin(), rates.end());
}

// A candidate's transform of the pipeline's final score, refitted by the
// mixture rule (MethodSpec::Transform; docs/EVALUATION.md "Candidates").
absl::StatusOr<std::vector<double>> TransformedRates(const Config& c, const SeedData& s,
                                                     absl::Span<const float> score,
                                                     const ExperimentOptions& o) {
  const NodeTotals totals = CountNodeTotals(s.pairs);
  std::vector<double> t(score.size());
  for (size_t p = 0; p < t.size(); ++p) t[p] = std::max(0.0, static_cast<double>(score[p]));
  using T = MethodSpec::Transform;
  if (c.spec.transform == T::kLeverageOwn || c.spec.transform == T::kLeverageRandom) {
    std::vector<double> q_user, q_item;
    ProxyExpectedPositives(
        s.pairs, totals,
        c.spec.transform == T::kLeverageOwn ? ExposureProxy::kOwn : ExposureProxy::kRandom, &q_user,
        &q_item);
    const std::vector<double> h = LeverageOf(s.pairs, totals, q_user, q_item);
    for (size_t p = 0; p < t.size(); ++p) t[p] *= h[p];
  } else if (c.spec.transform == T::kItemPositives) {
    for (size_t p = 0; p < t.size(); ++p) {
      t[p] = ExposureDiscount(t[p], totals.item_positives[s.pairs.pair_item[p]],
                              c.spec.transform_power);
    }
  }
  const double kappa = c.spec.needs_pilot() && c.pilot_kappa > 0.0 ? c.pilot_kappa : c.kappa;
  std::vector<double> rates;
  if (c.spec.transform == T::kPerUser) {
    if (absl::Status st = FitPerUserMixtureRates(s.pairs, t, c.alpha, kappa, &rates); !st.ok()) {
      return st;
    }
    return rates;
  }
  absl::StatusOr<RateFit> fit =
      FitMixtureRates(t, s.pairs.negatives, c.alpha, kappa, &rates, o.pipeline.threads);
  if (!fit.ok()) return fit.status();
  return rates;
}

// Per pair rates of one configuration.
absl::StatusOr<std::vector<float>> ComputeRates(const Config& c, const SeedData& s,
                                                const ExperimentOptions& o, uint64_t seed,
                                                bool* refused_by_data,
                                                std::vector<uint8_t>* sources, double* oracle_cv2) {
  *refused_by_data = false;
  sources->clear();
  if (c.spec.kind == MethodSpec::Kind::kOracle) return OracleRates(c, s, o, oracle_cv2);
  if (c.spec.kind == MethodSpec::Kind::kFull) return std::vector<float>(s.pairs.num_pairs(), 1.0f);
  if (c.spec.kind == MethodSpec::Kind::kUniform) {
    return std::vector<float>(s.pairs.num_pairs(), static_cast<float>(c.alpha));
  }
  if (o.mode == EvalMode::kDeployed) {
    return internal::ComputeDeployedRates(c, s, o, seed, refused_by_data, sources);
  }
  const PipelineOptions p = internal::PipelineOptionsFor(c, o, seed);
  auto fail = [&](const absl::Status& st) {
    return absl::Status(
        st.code(), absl::StrFormat("method %s (alpha=%g floor=%g gamma=%g kappa=%g/%g): %s",
                                   c.spec.name, c.alpha, c.floor, c.gamma, c.kappa, c.pilot_kappa,
                                   InEvalTerms(st.message(), c.spec)));
  };
  if (absl::Status st = p.Validate(); !st.ok()) return fail(st);
  absl::StatusOr<PipelineResult> r = RunPipeline(s.pairs, p);
  if (!r.ok()) {
    *refused_by_data = absl::IsInvalidArgument(r.status());
    return fail(r.status());
  }
  if (r->rate.size() != s.pairs.num_pairs()) {
    return fail(absl::InternalError(absl::StrCat("pipeline returned ", r->rate.size(),
                                                 " rates for ", s.pairs.num_pairs(), " pairs")));
  }
  if (c.spec.score_power != 1.0) {
    std::vector<double> transformed(r->score.size());
    for (size_t i = 0; i < transformed.size(); ++i) {
      transformed[i] =
          std::pow(std::max(0.0, static_cast<double>(r->score[i])), c.spec.score_power);
    }
    std::vector<double> rates;
    absl::StatusOr<RateFit> fit =
        FitRates(transformed, s.pairs.negatives, c.alpha, c.floor, &rates, o.pipeline.threads);
    if (!fit.ok()) {
      *refused_by_data = absl::IsInvalidArgument(fit.status());
      return fail(fit.status());
    }
    r->rate.assign(rates.begin(), rates.end());
  }
  if (c.spec.transform != MethodSpec::Transform::kNone) {
    absl::StatusOr<std::vector<double>> rates = TransformedRates(c, s, r->score, o);
    if (!rates.ok()) {
      *refused_by_data = absl::IsInvalidArgument(rates.status());
      return fail(rates.status());
    }
    r->rate.assign(rates->begin(), rates->end());
  }
  if (c.spec.item_centred) {
    const std::vector<double> discounted =
        internal::ExposureDiscountedScores(s.pairs, r->score, 0.0, true);
    std::vector<double> rates;
    absl::StatusOr<RateFit> fit = FitMixtureRates(discounted, s.pairs.negatives, c.alpha, c.kappa,
                                                  &rates, o.pipeline.threads);
    if (!fit.ok()) {
      *refused_by_data = absl::IsInvalidArgument(fit.status());
      return fail(fit.status());
    }
    r->rate.assign(rates.begin(), rates.end());
  }
  for (size_t i = 0; i < r->rate.size(); ++i) {
    if (!(r->rate[i] > 0.0f && r->rate[i] <= 1.0f)) {
      return fail(absl::InternalError(
          absl::StrCat("pair ", i, " has rate ", r->rate[i], ", expected (0, 1]")));
    }
  }
  return std::move(r->rate);
}

// Draws the subsample: positives kept, negatives kept when u_i < rate; every
// kept instance carries the offset log(rate of its pair) (the counterfactual
// rate for positives), or 0 for positives under zero_positive_offset.
Instances Subsample(const SeedData& s, const std::vector<float>& rate,
                    const std::vector<uint8_t>& sources, uint64_t seed, bool zero_positive_offset,
                    double floor, RunResult* run) {
  Instances out;
  uint64_t kept_negatives = 0, at_floor = 0, at_one = 0;
  uint64_t by_source[3] = {0, 0, 0};
  if (!sources.empty()) {
    for (size_t i = 0; i < s.train.size(); ++i)
      ++by_source[std::min<uint8_t>(2, sources[s.pair_of[i]])];
    const double n = static_cast<double>(std::max<size_t>(1, s.train.size()));
    run->source_exact = by_source[0] / n;
    run->source_inferred = by_source[1] / n;
    run->source_default = by_source[2] / n;
  }
  double positive_rate_sum = 0.0;
  uint64_t positive_pairs = 0;
  for (size_t i = 0; i < s.train.size(); ++i) {
    const float r = rate[s.pair_of[i]];
    if (s.train.label[i] == 0) {
      at_floor += floor > 0.0 && r <= floor * (1.0 + 1e-5);
      at_one += r >= 1.0f;
      if (UnitFromIndex(seed, kKeepStream, i) >= r) continue;
      ++kept_negatives;
    }
    Append(s.train, i, &out);
    out.offset.push_back(s.train.label[i] == 1 && zero_positive_offset ? 0.0f : std::log(r));
  }
  for (size_t p = 0; p < s.pairs.num_pairs(); ++p) {
    if (s.pairs.label[p]) {
      positive_rate_sum += rate[p];
      ++positive_pairs;
    }
  }
  run->kept_negative_fraction =
      s.train_negatives ? static_cast<double>(kept_negatives) / s.train_negatives : 1.0;
  run->kept_instances = out.size();
  const double negatives = static_cast<double>(std::max<uint64_t>(1, s.train_negatives));
  run->negatives_at_floor = at_floor / negatives;
  run->negatives_at_one = at_one / negatives;
  run->mean_rate_positive_pairs = positive_pairs ? positive_rate_sum / positive_pairs : 1.0;
  return out;
}

absl::Status TrainAndMeasure(const Instances& train, const SeedData& s, const DenseLog& dense,
                             const ExperimentOptions& o, ModelKind kind, uint64_t seed,
                             RunResult* run) {
  ModelOptions m = o.model;
  m.kind = kind;
  m.seed = Mix64(seed) ^ static_cast<uint64_t>(kind);
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<std::unique_ptr<CtrModel>> model =
      CtrModel::Create(m, dense.num_users, dense.num_items);
  if (!model.ok()) return model.status();
  absl::StatusOr<TrainSummary> t = (*model)->Train(train, s.validation);
  if (!t.ok()) return t.status();
  const std::vector<double> p = (*model)->PredictProbabilities(s.test);
  absl::StatusOr<double> auc = Auc(p, s.test.label);
  if (!auc.ok()) return auc.status();
  absl::StatusOr<double> ll = LogLoss(p, s.test.label);
  if (!ll.ok()) return ll.status();
  absl::StatusOr<double> ne = NormalisedEntropy(p, s.test.label);
  if (!ne.ok()) return ne.status();
  absl::StatusOr<double> calibration = Calibration(p, s.test.label);
  if (!calibration.ok()) return calibration.status();
  absl::StatusOr<NdcgResult> ndcg = NdcgAtK(s.test.user, p, s.test.label, o.ndcg_k);
  if (!ndcg.ok()) return ndcg.status();
  run->model = ModelKindName(kind);
  run->auc = *auc;
  run->log_loss = *ll;
  run->normalised_entropy = *ne;
  run->calibration = *calibration;
  run->ndcg = ndcg->ndcg;
  run->epochs = t->epochs_run;
  run->best_epoch = t->best_epoch;
  run->train_seconds = SecondsSince(start);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ExperimentResult> RunExperiment(const ImpressionLog& log, const ExperimentOptions& o,
                                               absl::Span<const int64_t> timestamps,
                                               const Instances* unbiased_test,
                                               const TrueProbabilities* truth) {
  if (absl::Status st = o.Validate(); !st.ok()) return st;
  if (log.size() < kMinLogInstances) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the log has ", log.size(), " instances; need at least ", kMinLogInstances, " to split"));
  }
  const auto start = std::chrono::steady_clock::now();
  std::vector<MethodSpec> specs;
  bool need_pilot = false;
  for (const std::string& name : o.methods) {
    absl::StatusOr<MethodSpec> spec = ParseMethodSpec(name);
    if (!spec.ok()) return spec.status();
    need_pilot |= spec->needs_pilot();
    specs.push_back(*spec);
  }
  if (need_pilot && o.pilot == PilotSource::kNone) {
    return absl::InvalidArgumentError("a requested method needs a pilot score but --pilot=none");
  }
  if (need_pilot && o.pilot == PilotSource::kBuiltIn && o.mode != EvalMode::kDeployed) {
    return absl::InvalidArgumentError(
        "--pilot=builtin: the builder's built-in pilot is fitted by the snapshot builds of "
        "--mode=deployed; use another --pilot in the random mode");
  }
  if (need_pilot && o.pilot == PilotSource::kColumn && log.pilot_scores.empty()) {
    return absl::InvalidArgumentError(
        "--pilot=column but no pilot score column was read: name the log's column with "
        "--pilot-col (graphsieve-gen --pilot writes 'pilot_score')");
  }
  DenseLog dense = Densify(log);
  if (truth != nullptr) {
    if (truth->log.size() != log.size() ||
        (unbiased_test != nullptr && truth->unbiased_test.size() != unbiased_test->size())) {
      return absl::InvalidArgumentError(
          absl::StrCat("the true probabilities do not match the data: ", truth->log.size(), " for ",
                       log.size(), " log instances, ", truth->unbiased_test.size(), " for ",
                       unbiased_test != nullptr ? unbiased_test->size() : 0, " test instances"));
    }
    dense.truth = truth->log;
  }
  ExperimentResult result;
  result.instances = log.size();
  for (uint8_t y : log.labels) result.positives += y;
  result.users = dense.num_users;
  result.items = dense.num_items;
  result.pilot = need_pilot ? "" : "none (no method needs it)";
  const std::vector<Config> grid = ExpandGrid(specs, o);
  for (int k = 0; k < o.seeds; ++k) {
    const uint64_t seed = o.first_seed + static_cast<uint64_t>(k);
    std::string pilot_name;
    absl::StatusOr<SeedData> s = o.mode == EvalMode::kDeployed
                                     ? internal::PrepareDeployedSeed(log, dense, timestamps, o,
                                                                     seed, need_pilot, &pilot_name)
                                     : PrepareSeed(log, dense, o, seed, need_pilot, &pilot_name);
    if (!s.ok()) return s.status();
    if (unbiased_test != nullptr) {
      s->test = *unbiased_test;
      s->test_truth = truth != nullptr ? truth->unbiased_test : std::vector<float>{};
    }
    if (o.mode == EvalMode::kDeployed) {
      result.earlier_instances = s->earlier.size();
      result.later_instances = s->later_instances;
      result.period_split = timestamps.empty() ? "seeded" : "time";
    }
    if (need_pilot) result.pilot = pilot_name;
    result.train_instances = s->train.size();
    result.validation_instances = s->validation.size();
    result.test_instances = s->test.size();
    std::vector<Config> runs;
    if (o.include_full) runs.push_back({*ParseMethodSpec("full"), 1.0, 0.0, 0.0});
    runs.insert(runs.end(), grid.begin(), grid.end());
    for (const Config& c : runs) {
      const auto rate_start = std::chrono::steady_clock::now();
      bool refused_by_data = false;
      std::vector<uint8_t> sources;
      double oracle_cv2 = -1.0;
      absl::StatusOr<std::vector<float>> rate =
          ComputeRates(c, *s, o, seed, &refused_by_data, &sources, &oracle_cv2);
      if (!rate.ok() && refused_by_data) {
        result.skipped.push_back(absl::StrCat("seed ", seed, ": ", rate.status().message()));
        if (o.progress) o.progress(absl::StrCat("skipped: ", result.skipped.back()));
        continue;
      }
      if (!rate.ok()) return rate.status();
      RunResult base;
      base.method = c.spec.name;
      base.alpha = c.alpha;
      base.floor = c.floor;
      base.kappa = c.kappa;
      base.pilot_kappa = c.pilot_kappa;
      base.gamma = c.gamma;
      base.seed = seed;
      base.rate_seconds = SecondsSince(rate_start);
      if (oracle_cv2 >= 0.0) {
        base.oracle_cv2 = oracle_cv2;
        base.predicted_recovery = PredictedRecovery(oracle_cv2, c.alpha);
      }
      const Instances sample =
          Subsample(*s, *rate, sources, seed, o.zero_positive_offset, c.floor, &base);
      for (ModelKind kind : o.models) {
        RunResult run = base;
        if (absl::Status st = TrainAndMeasure(sample, *s, dense, o, kind, seed, &run); !st.ok()) {
          return absl::Status(st.code(),
                              absl::StrCat("method ", c.spec.name, ", model ", ModelKindName(kind),
                                           ", seed ", seed, ": ", st.message()));
        }
        if (o.progress) {
          o.progress(absl::StrFormat(
              "seed %d %-9s a=%.2f floor=%.3f gamma=%.2f kappa=%g/%g %s: auc=%.4f logloss=%.4f "
              "calibration=%.3f ndcg=%.4f "
              "kept=%.3f floor=%.2f one=%.3f (%.1fs rates, %.1fs train, %d epochs)",
              seed, run.method, run.alpha, run.floor, run.gamma, run.kappa, run.pilot_kappa,
              run.model, run.auc, run.log_loss, run.calibration, run.ndcg,
              run.kept_negative_fraction, run.negatives_at_floor, run.negatives_at_one,
              run.rate_seconds, run.train_seconds, run.epochs));
        }
        result.runs.push_back(std::move(run));
      }
    }
  }
  result.seconds = SecondsSince(start);
  return result;
}

}  // namespace graphsieve::eval
