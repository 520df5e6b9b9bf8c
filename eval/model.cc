#include "eval/model.h"

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
    return absl::InvalidArgumentError(absl::StrCat(name, ": users, items and labels differ in length (",
                                                   user.size(), ", ", item.size(), ", ",
                                                   label.size(), ")"));
  }
  if (!offset.empty() && offset.size() != label.size()) {
    return absl::InvalidArgumentError(absl::StrCat(name, ": ", offset.size(),
                                                   " offsets for ", label.size(), " instances"));
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
      return absl::InvalidArgumentError(absl::StrCat(
          name, ": instance ", i, " has offset ", offset[i], ", expected log(rate) <= 0"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<ModelKind> ParseModelKind(std::string_view name) {
  if (name == "lr") return ModelKind::kLogistic;
  if (name == "fm") return ModelKind::kFactorisation;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown model '", std::string(name), "', expected lr (logistic regression) or fm "
                   "(logistic factorisation)"));
}

const char* ModelKindName(ModelKind kind) {
  return kind == ModelKind::kLogistic ? "lr" : "fm";
}

absl::Status ModelOptions::Validate() const {
  if (kind == ModelKind::kFactorisation && (dim < 1 || dim > 1024)) {
    return absl::InvalidArgumentError(absl::StrCat("dim must be in [1, 1024], got ", dim));
  }
  if (!(learning_rate > 0.0 && learning_rate <= 10.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("learning_rate must be in (0, 10], got ", learning_rate));
  }
  if (!(initial_accumulator > 0.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("initial_accumulator must be > 0, got ", initial_accumulator));
  }
  if (!(l2 >= 0.0 && l2 < 1.0)) {
    return absl::InvalidArgumentError(absl::StrCat("l2 must be in [0, 1), got ", l2));
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
  const int dim = options.kind == ModelKind::kFactorisation ? options.dim : 0;
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
  const float a0 = static_cast<float>(options.initial_accumulator);
  accum_.bias = a0;
  accum_.user_bias = Eigen::VectorXf::Constant(num_users, a0);
  accum_.item_bias = Eigen::VectorXf::Constant(num_items, a0);
  accum_.user_emb = Eigen::MatrixXf::Constant(dim, num_users, a0);
  accum_.item_emb = Eigen::MatrixXf::Constant(dim, num_items, a0);
}

absl::StatusOr<std::unique_ptr<CtrModel>> CtrModel::Create(const ModelOptions& options,
                                                           uint32_t num_users,
                                                           uint32_t num_items) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (num_users == 0 || num_items == 0) {
    return absl::InvalidArgumentError(absl::StrCat("a model needs users and items, got ",
                                                   num_users, " users and ", num_items, " items"));
  }
  return std::unique_ptr<CtrModel>(new CtrModel(options, num_users, num_items));
}

double CtrModel::LogitOf(const Params& p, uint32_t user, uint32_t item) const {
  double g = p.bias + p.user_bias[user] + p.item_bias[item];
  if (p.user_emb.rows() > 0) g += p.user_emb.col(user).dot(p.item_emb.col(item));
  return g;
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
  const float l2 = static_cast<float>(options_.l2);
  const bool factorised = params_.user_emb.rows() > 0;
  Eigen::VectorXf gu, gi;
  for (uint32_t idx : order) {
    const uint32_t u = train.user[idx], v = train.item[idx];
    const double offset = train.offset.empty() ? 0.0 : train.offset[idx];
    // d(-objective)/dg = sigma(g - l) - y
    const float grad = static_cast<float>(Sigmoid(LogitOf(params_, u, v) - offset) - train.label[idx]);
    accum_.bias += static_cast<double>(grad) * grad;
    params_.bias -= lr * grad / std::sqrt(accum_.bias);
    const float g_u = grad + l2 * params_.user_bias[u];
    accum_.user_bias[u] += g_u * g_u;
    params_.user_bias[u] -= lr * g_u / std::sqrt(accum_.user_bias[u]);
    const float g_v = grad + l2 * params_.item_bias[v];
    accum_.item_bias[v] += g_v * g_v;
    params_.item_bias[v] -= lr * g_v / std::sqrt(accum_.item_bias[v]);
    if (factorised) {
      gu = grad * params_.item_emb.col(v) + l2 * params_.user_emb.col(u);
      gi = grad * params_.user_emb.col(u) + l2 * params_.item_emb.col(v);
      accum_.user_emb.col(u).array() += gu.array().square();
      accum_.item_emb.col(v).array() += gi.array().square();
      params_.user_emb.col(u).array() -= lr * gu.array() / accum_.user_emb.col(u).array().sqrt();
      params_.item_emb.col(v).array() -= lr * gi.array() / accum_.item_emb.col(v).array().sqrt();
    }
  }
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
