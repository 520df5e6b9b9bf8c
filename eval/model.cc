#include "eval/model.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "eval/metrics.h"
#include "eval/random.h"

namespace graphsieve::eval {
namespace {

double Sigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

}  // namespace

absl::Status Instances::Validate(uint32_t num_users, uint32_t num_items,
                                 const std::string& name) const {
  if (user.size() != label.size() || item.size() != label.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": users, items and labels differ in length (", user.size(), ", ",
                     item.size(), ", ", label.size(), ")"));
  }
  if (!offset.empty() && offset.size() != label.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(name, ": ", offset.size(), " offsets for ", label.size(), " instances"));
  }
  for (size_t i = 0; i < label.size(); ++i) {
    if (label[i] > 1) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": instance ", i, " has label ",
                                                     static_cast<int>(label[i]), ", expected 0/1"));
    }
    if (user[i] >= num_users || item[i] >= num_items) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": instance ", i, " has user ", user[i],
                                                     " / item ", item[i], " outside ", num_users,
                                                     " users / ", num_items, " items"));
    }
    if (!offset.empty() && !(std::isfinite(offset[i]) && offset[i] <= 0.0f)) {
      return absl::InvalidArgumentError(absl::StrCat(name, ": instance ", i, " has offset ",
                                                     offset[i], ", expected log(rate) <= 0"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelKind> ParseModelKind(std::string_view name) {
  if (name == "lr") return ModelKind::kLogistic;
  if (name == "fm") return ModelKind::kFactorisation;
  if (name == "mlp") return ModelKind::kMlp;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown model '", std::string(name),
                   "', expected lr (logistic regression), fm "
                   "(logistic factorisation) or mlp (factorisation + ReLU layer, DeepFM-style)"));
}

const char* ModelKindName(ModelKind kind) {
  switch (kind) {
    case ModelKind::kLogistic:
      return "lr";
    case ModelKind::kFactorisation:
      return "fm";
    case ModelKind::kMlp:
      return "mlp";
  }
  return "?";
}

const char* ModelKindDescription(ModelKind kind) {
  switch (kind) {
    case ModelKind::kLogistic:
      return "lr (one-hot logistic regression)";
    case ModelKind::kFactorisation:
      return "fm (logistic factorisation, user+item embeddings + biases)";
    case ModelKind::kMlp:
      return "mlp (DeepFM-style: fm + a ReLU hidden layer over the concatenated embeddings)";
  }
  return "?";
}

absl::Status ModelOptions::Validate() const {
  if (kind != ModelKind::kLogistic && (dim < 1 || dim > 1024)) {
    return absl::InvalidArgumentError(absl::StrCat("dim must be in [1, 1024], got ", dim));
  }
  if (kind == ModelKind::kMlp && (hidden < 1 || hidden > 4096)) {
    return absl::InvalidArgumentError(absl::StrCat("hidden must be in [1, 4096], got ", hidden));
  }
  if (!(learning_rate > 0.0 && learning_rate <= 10.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("learning_rate must be in (0, 10], got ", learning_rate));
  }
  if (!(initial_accumulator > 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("initial_accumulator must be > 0, got ", initial_accumulator));
  }
  if (!(l2 >= 0.0 && l2 <= 1e6)) {
    return absl::InvalidArgumentError(absl::StrCat("l2 must be in [0, 1e6], got ", l2));
  }
  if (!(init_std >= 0.0 && init_std <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("init_std must be in [0, 1], got ", init_std));
  }
  if (max_epochs < 1) {
    return absl::InvalidArgumentError(absl::StrCat("max_epochs must be >= 1, got ", max_epochs));
  }
  if (patience < 1) {
    return absl::InvalidArgumentError(absl::StrCat("patience must be >= 1, got ", patience));
  }
  return absl::OkStatus();
}

CtrModel::CtrModel(const ModelOptions& options, uint32_t num_users, uint32_t num_items)
    : options_(options), num_users_(num_users), num_items_(num_items) {
  const int dim = options.kind == ModelKind::kLogistic ? 0 : options.dim;
  const int hidden = options.kind == ModelKind::kMlp ? options.hidden : 0;
  params_.user_bias = Eigen::VectorXf::Zero(num_users);
  params_.item_bias = Eigen::VectorXf::Zero(num_items);
  params_.user_emb.resize(dim, num_users);
  params_.item_emb.resize(dim, num_items);
  SplitMix64 rng(Mix64(options.seed) ^ 0x1417ULL);
  for (Eigen::Index c = 0; c < params_.user_emb.size(); ++c) {
    params_.user_emb.data()[c] = static_cast<float>(options.init_std * rng.Normal());
  }
  for (Eigen::Index c = 0; c < params_.item_emb.size(); ++c) {
    params_.item_emb.data()[c] = static_cast<float>(options.init_std * rng.Normal());
  }
  // He initialisation of the hidden layer; small output weights so the
  // network starts near the factorisation model; a small positive unit bias
  // keeps the units alive while the embeddings are still near 0.
  params_.w1.resize(2 * dim, hidden);
  const double w1_std = hidden > 0 ? std::sqrt(2.0 / (2.0 * dim)) : 0.0;
  for (Eigen::Index c = 0; c < params_.w1.size(); ++c) {
    params_.w1.data()[c] = static_cast<float>(w1_std * rng.Normal());
  }
  params_.b1 = Eigen::VectorXf::Constant(hidden, 0.01f);
  params_.w2.resize(hidden);
  for (Eigen::Index c = 0; c < params_.w2.size(); ++c) {
    params_.w2[c] = static_cast<float>(rng.Normal() / std::sqrt(std::max(1, hidden)));
  }
  const float a0 = static_cast<float>(options.initial_accumulator);
  accum_.bias = a0;
  accum_.user_bias = Eigen::VectorXf::Constant(num_users, a0);
  accum_.item_bias = Eigen::VectorXf::Constant(num_items, a0);
  accum_.user_emb = Eigen::MatrixXf::Constant(dim, num_users, a0);
  accum_.item_emb = Eigen::MatrixXf::Constant(dim, num_items, a0);
  accum_.w1 = Eigen::MatrixXf::Constant(2 * dim, hidden, a0);
  accum_.b1 = Eigen::VectorXf::Constant(hidden, a0);
  accum_.w2 = Eigen::VectorXf::Constant(hidden, a0);
}

absl::StatusOr<std::unique_ptr<CtrModel>> CtrModel::Create(const ModelOptions& options,
                                                           uint32_t num_users, uint32_t num_items) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (num_users == 0 || num_items == 0) {
    return absl::InvalidArgumentError(absl::StrCat("a model needs users and items, got ", num_users,
                                                   " users and ", num_items, " items"));
  }
  return std::unique_ptr<CtrModel>(new CtrModel(options, num_users, num_items));
}

double CtrModel::LogitOf(const Params& p, uint32_t user, uint32_t item) const {
  double g = p.bias + p.user_bias[user] + p.item_bias[item];
  const Eigen::Index dim = p.user_emb.rows();
  if (dim == 0) return g;
  const auto pu = p.user_emb.col(user);
  const auto qi = p.item_emb.col(item);
  g += pu.dot(qi);
  for (Eigen::Index h = 0; h < p.w2.size(); ++h) {
    const float z = p.b1[h] + p.w1.col(h).head(dim).dot(pu) + p.w1.col(h).tail(dim).dot(qi);
    if (z > 0.0f) g += static_cast<double>(p.w2[h]) * z;
  }
  return g;
}

void CtrModel::MlpStep(uint32_t user, uint32_t item, float grad, Eigen::VectorXf* gu,
                       Eigen::VectorXf* gi) {
  const Eigen::Index dim = params_.user_emb.rows();
  const float lr = static_cast<float>(options_.learning_rate);
  const auto pu = params_.user_emb.col(user);
  const auto qi = params_.item_emb.col(item);
  for (Eigen::Index h = 0; h < params_.w2.size(); ++h) {
    auto w = params_.w1.col(h);
    const float z = params_.b1[h] + w.head(dim).dot(pu) + w.tail(dim).dot(qi);
    if (z <= 0.0f) continue;  // ReLU: no gradient through an inactive unit
    const float delta = grad * params_.w2[h];
    // Input gradient first, with the weights of this step.
    *gu += delta * w.head(dim);
    *gi += delta * w.tail(dim);
    const float g2 = grad * z;
    accum_.w2[h] += g2 * g2;
    params_.w2[h] -= lr * g2 / std::sqrt(accum_.w2[h]);
    const float gb = delta;
    accum_.b1[h] += gb * gb;
    params_.b1[h] -= lr * gb / std::sqrt(accum_.b1[h]);
    auto acc = accum_.w1.col(h);
    for (Eigen::Index k = 0; k < 2 * dim; ++k) {
      const float x = k < dim ? pu[k] : qi[k - dim];
      const float gw = delta * x;
      acc[k] += gw * gw;
      w[k] -= lr * gw / std::sqrt(acc[k]);
    }
  }
}

double CtrModel::Logit(uint32_t user, uint32_t item) const { return LogitOf(params_, user, item); }

std::vector<double> CtrModel::PredictProbabilities(const Instances& data) const {
  std::vector<double> out(data.size());
  for (size_t i = 0; i < data.size(); ++i) out[i] = Sigmoid(Logit(data.user[i], data.item[i]));
  return out;
}

void CtrModel::RunEpoch(const Instances& train, int epoch) {
  const size_t n = train.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  SplitMix64 rng(Mix64(options_.seed) ^ Mix64(static_cast<uint64_t>(epoch) + 0x5eedULL));
  for (size_t i = n - 1; i > 0; --i) std::swap(order[i], order[rng.Below(i + 1)]);
  const float lr = static_cast<float>(options_.learning_rate);
  const bool factorised = params_.user_emb.rows() > 0;
  const bool mlp = params_.w2.size() > 0;
  Eigen::VectorXf gu, gi;
  for (uint32_t idx : order) {
    const uint32_t u = train.user[idx], v = train.item[idx];
    const double offset = train.offset.empty() ? 0.0 : train.offset[idx];
    // d(-objective)/dg = sigma(g - l) - y
    const float grad =
        static_cast<float>(Sigmoid(LogitOf(params_, u, v) - offset) - train.label[idx]);
    accum_.bias += static_cast<double>(grad) * grad;
    params_.bias -= lr * grad / std::sqrt(accum_.bias);
    const float g_u = grad;
    accum_.user_bias[u] += g_u * g_u;
    params_.user_bias[u] -= lr * g_u / std::sqrt(accum_.user_bias[u]);
    const float g_v = grad;
    accum_.item_bias[v] += g_v * g_v;
    params_.item_bias[v] -= lr * g_v / std::sqrt(accum_.item_bias[v]);
    if (factorised) {
      gu = grad * params_.item_emb.col(v);
      gi = grad * params_.user_emb.col(u);
      if (mlp) MlpStep(u, v, grad, &gu, &gi);
      accum_.user_emb.col(u).array() += gu.array().square();
      accum_.item_emb.col(v).array() += gi.array().square();
      params_.user_emb.col(u).array() -= lr * gu.array() / accum_.user_emb.col(u).array().sqrt();
      params_.item_emb.col(v).array() -= lr * gi.array() / accum_.item_emb.col(v).array().sqrt();
    }
  }
}

void CtrModel::ApplyL2() {
  const float step = static_cast<float>(options_.learning_rate * options_.l2);
  if (step == 0.0f) return;
  auto shrink = [step](auto& param, const auto& accum) {
    param.array() /= 1.0f + step / accum.array().sqrt();
  };
  shrink(params_.user_bias, accum_.user_bias);
  shrink(params_.item_bias, accum_.item_bias);
  shrink(params_.user_emb, accum_.user_emb);
  shrink(params_.item_emb, accum_.item_emb);
  shrink(params_.w1, accum_.w1);
  shrink(params_.b1, accum_.b1);
  shrink(params_.w2, accum_.w2);
}

absl::StatusOr<TrainSummary> CtrModel::Train(const Instances& train, const Instances& validation) {
  if (absl::Status s = train.Validate(num_users_, num_items_, "training set"); !s.ok()) return s;
  if (absl::Status s = validation.Validate(num_users_, num_items_, "validation set"); !s.ok()) {
    return s;
  }
  if (train.size() == 0) return absl::InvalidArgumentError("training set is empty");
  if (validation.size() == 0) return absl::InvalidArgumentError("validation set is empty");
  // Start the bias at the corrected base rate: mean label with offsets undone approximately.
  double positives = 0.0, weighted = 0.0;
  for (size_t i = 0; i < train.size(); ++i) {
    const double w = train.offset.empty() ? 1.0 : std::exp(-static_cast<double>(train.offset[i]));
    positives += train.label[i];
    weighted += train.label[i] ? 1.0 : w;
  }
  const double base = std::clamp(positives / std::max(weighted, 1.0), 1e-6, 1.0 - 1e-6);
  params_.bias = std::log(base / (1.0 - base));

  TrainSummary summary;
  summary.best_validation_log_loss = std::numeric_limits<double>::infinity();
  Params best = params_;
  int since_best = 0;
  for (int epoch = 1; epoch <= options_.max_epochs; ++epoch) {
    RunEpoch(train, epoch);
    ApplyL2();
    absl::StatusOr<double> loss = LogLoss(PredictProbabilities(validation), validation.label);
    if (!loss.ok()) return loss.status();
    summary.validation_log_loss.push_back(*loss);
    summary.epochs_run = epoch;
    if (*loss < summary.best_validation_log_loss - 1e-7) {
      summary.best_validation_log_loss = *loss;
      summary.best_epoch = epoch;
      best = params_;
      since_best = 0;
    } else if (++since_best >= options_.patience) {
      break;
    }
  }
  params_ = std::move(best);
  return summary;
}

}  // namespace graphsieve::eval
