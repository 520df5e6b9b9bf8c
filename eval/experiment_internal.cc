// The shared helpers of the experiment's two modes (experiment_internal.h).
#include "eval/experiment_internal.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/maec/rates.h"
#include "eval/random.h"

namespace graphsieve::eval {

namespace internal {

DenseLog Densify(const ImpressionLog& log) {
  DenseLog d;
  absl::flat_hash_map<uint64_t, uint32_t> users, items;
  d.all.user.resize(log.size());
  d.all.item.resize(log.size());
  d.all.label = log.labels;
  for (size_t i = 0; i < log.size(); ++i) {
    d.all.user[i] =
        users.try_emplace(log.user_ids[i], static_cast<uint32_t>(users.size())).first->second;
    d.all.item[i] =
        items.try_emplace(log.item_ids[i], static_cast<uint32_t>(items.size())).first->second;
  }
  d.num_users = static_cast<uint32_t>(users.size());
  d.num_items = static_cast<uint32_t>(items.size());
  return d;
}

void Append(const Instances& from, size_t i, Instances* to) {
  to->user.push_back(from.user[i]);
  to->item.push_back(from.item[i]);
  to->label.push_back(from.label[i]);
}

void AppendWithTruth(const DenseLog& dense, size_t i, Instances* to, std::vector<float>* truth) {
  Append(dense.all, i, to);
  if (!dense.truth.empty()) truth->push_back(dense.truth[i]);
}

absl::Status IndexTrainingPairs(int threads, SeedData* s) {
  absl::StatusOr<PairTable> pairs = BuildPairTable(s->train_log, threads);
  if (!pairs.ok()) return pairs.status();
  s->pairs = *std::move(pairs);
  absl::flat_hash_map<std::pair<uint64_t, uint64_t>, uint32_t> index;
  index.reserve(s->pairs.num_pairs());
  for (size_t p = 0; p < s->pairs.num_pairs(); ++p) {
    index.emplace(std::make_pair(s->pairs.user_ids[s->pairs.pair_user[p]],
                                 s->pairs.item_ids[s->pairs.pair_item[p]]),
                  static_cast<uint32_t>(p));
  }
  s->pair_of.resize(s->train.size());
  for (size_t i = 0; i < s->train.size(); ++i) {
    auto it = index.find(std::make_pair(s->train_log.user_ids[i], s->train_log.item_ids[i]));
    if (it == index.end()) {
      return absl::InternalError(
          absl::StrCat("training instance ", i, " has no pair in the pair table"));
    }
    s->pair_of[i] = it->second;
  }
  return absl::OkStatus();
}

namespace {

ModelKind PilotModelKind(PilotSource source) {
  switch (source) {
    case PilotSource::kTrainFm:
      return ModelKind::kFactorisation;
    case PilotSource::kTrainMlp:
      return ModelKind::kMlp;
    default:
      return ModelKind::kLogistic;  // kTrainLr, and kAuto without a column
  }
}

const char* PilotDescription(PilotSource source) {
  switch (source) {
    case PilotSource::kTrainFm:
      return "fm";
    case PilotSource::kTrainMlp:
      return "mlp";
    default:
      return "lr (one-hot logistic regression)";
  }
}

// Trains one pilot model on `fit` and returns its probabilities for `score`.
absl::StatusOr<std::vector<double>> FitAndScore(const ExperimentOptions& o, const DenseLog& dense,
                                                uint64_t seed, const Instances& fit,
                                                const Instances& validation,
                                                const Instances& score) {
  ModelOptions m = o.model;
  m.kind = PilotModelKind(o.pilot);
  m.seed = Mix64(seed) ^ 0x9170ULL;
  absl::StatusOr<std::unique_ptr<CtrModel>> pilot =
      CtrModel::Create(m, dense.num_users, dense.num_items);
  if (!pilot.ok()) return pilot.status();
  if (absl::StatusOr<TrainSummary> t = (*pilot)->Train(fit, validation); !t.ok()) {
    return absl::Status(t.status().code(), absl::StrCat("pilot model: ", t.status().message()));
  }
  return (*pilot)->PredictProbabilities(score);
}

}  // namespace

absl::StatusOr<std::vector<float>> TrainPilot(const ExperimentOptions& o, const DenseLog& dense,
                                              uint64_t seed, const Instances& train,
                                              const Instances& validation, const char* part,
                                              std::string* name) {
  const int folds = o.pilot_folds;
  *name = absl::StrCat(PilotDescription(o.pilot), " trained on ", part);
  if (folds > 1) {
    absl::StrAppend(name, ", cross-fitted over ", folds,
                    " folds of its pairs (no pair's own label in its score)");
  }
  if (folds <= 1) {
    absl::StatusOr<std::vector<double>> p = FitAndScore(o, dense, seed, train, validation, train);
    if (!p.ok()) return p.status();
    return std::vector<float>(p->begin(), p->end());
  }
  // The fold of a pair: a seeded hash of its dense (user, item), so every
  // impression of a pair lands in the same fold.
  std::vector<int> fold(train.size());
  for (size_t i = 0; i < train.size(); ++i) {
    const uint64_t key = (static_cast<uint64_t>(train.user[i]) << 32) | train.item[i];
    fold[i] = static_cast<int>(Mix64(Mix64(seed ^ 0xf01dULL) ^ key) % static_cast<uint64_t>(folds));
  }
  std::vector<float> out(train.size());
  for (int k = 0; k < folds; ++k) {
    Instances fit, score;
    std::vector<size_t> where;
    for (size_t i = 0; i < train.size(); ++i) {
      if (fold[i] == k) {
        Append(train, i, &score);
        where.push_back(i);
      } else {
        Append(train, i, &fit);
      }
    }
    if (where.empty()) continue;
    const std::string fit_name = absl::StrCat("pilot fold ", k, " training");
    if (absl::Status st = CheckBothClasses(fit, fit_name); !st.ok()) return st;
    absl::StatusOr<std::vector<double>> p = FitAndScore(o, dense, seed + k, fit, validation, score);
    if (!p.ok()) return p.status();
    for (size_t j = 0; j < where.size(); ++j) out[where[j]] = static_cast<float>((*p)[j]);
  }
  return out;
}

PipelineOptions PipelineOptionsFor(const Config& c, const ExperimentOptions& o, uint64_t seed) {
  PipelineOptions p = o.pipeline;
  p.method = c.spec.method;
  p.alpha = c.alpha;
  p.floor = c.floor;
  p.gamma = c.spec.uses_gamma() ? c.gamma : p.gamma;
  p.uncertainty_propagation = c.spec.uncertainty_propagation;
  p.score_propagation = c.spec.score_propagation;
  p.correct_pilot = c.spec.correct_pilot;
  // A method named with its discount (maec-prop-mix-exp1) has it; the others take --exposure_power.
  if (c.spec.exposure_power != 0.0) p.exposure_power = c.spec.exposure_power;
  p.seed = seed;
  // The rate rule (core/maec/rates.h): the floor ϱ, or the mixture rule's κ
  // with the pilot member's own κ when the grid gives one.
  p.rate_rule = c.spec.mixture ? RateRule::kMixture : RateRule::kFloor;
  if (c.spec.mixture) {
    p.kappa = c.kappa;
    if (c.pilot_kappa > 0.0) p.pilot_kappa = c.pilot_kappa;
  }
  return p;
}

std::string InEvalTerms(absl::string_view message, const MethodSpec& spec) {
  const std::string mixture = absl::StrCat(spec.name, "-mix");
  const std::string instead = ParseMethodSpec(mixture).ok()
                                  ? absl::StrCat("--methods=", mixture)
                                  : "a *-mix method in --methods, e.g. maec-prop-mix";
  return absl::StrReplaceAll(message, {{"--rate-rule=mixture", instead}});
}

absl::Status CheckBothClasses(const Instances& d, const std::string& name) {
  uint64_t pos = 0;
  for (uint8_t y : d.label) pos += y;
  if (pos == 0 || pos == d.size()) {
    return absl::InvalidArgumentError(absl::StrCat("the ", name, " part has ", pos,
                                                   " positives of ", d.size(),
                                                   " instances; need both classes "
                                                   "(is the log too small?)"));
  }
  return absl::OkStatus();
}

std::vector<double> ExposureDiscountedScores(const PairTable& pairs, absl::Span<const float> score,
                                             double power, bool item_centred) {
  const size_t P = pairs.num_pairs();
  std::vector<double> num(pairs.num_items(), 0.0), den(pairs.num_items(), 0.0);
  for (size_t p = 0; p < P; ++p) {
    const uint32_t i = pairs.pair_item[p];
    if (item_centred) {
      num[i] += pairs.negatives[p] * std::max(0.0, static_cast<double>(score[p]));
      den[i] += pairs.negatives[p];
    } else {
      den[i] += pairs.instances[p];
    }
  }
  std::vector<double> out(P);
  for (size_t p = 0; p < P; ++p) {
    const uint32_t i = pairs.pair_item[p];
    const double s = std::max(0.0, static_cast<double>(score[p]));
    if (item_centred) {
      const double m = den[i] > 0.0 ? num[i] / den[i] : 0.0;
      out[p] = m > 0.0 ? s / m : s;
    } else {
      out[p] = ExposureDiscount(s, den[i], power);  // the pipeline's discount (core/maec/rates.h)
    }
  }
  return out;
}

}  // namespace internal

}  // namespace graphsieve::eval
