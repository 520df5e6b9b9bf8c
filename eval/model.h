// Target CTR models of the evaluation, trained with the log-odds correction.
//
// All are logistic models of a (user, item) pair:
//   logistic regression on user/item one-hot:  g = b + w_u + w_i
//   logistic factorisation machine:            g = b + w_u + w_i + <p_u, q_i>
//   DeepFM-style MLP (the paper's target class): the factorisation model plus
//   a one-hidden-layer ReLU network over the concatenated embeddings,
//     g = b + w_u + w_i + <p_u, q_i> + v . relu(W [p_u; q_i] + c)
//   which learns user x item interactions a dot product of the same
//   dimension cannot represent (tests/eval/model_test.cc).
// trained by Adagrad SGD on the objective of docs/DESIGN.md §2.9,
//   sum over kept instances of  y (g - l) - log(1 + exp(g - l)),
// where l = log(pi) is the instance's offset (0 for unsampled data), with an
// L2 penalty (l2 / 2)·||theta||^2 per epoch (applied once at the end of each
// epoch, so it does not grow with the number of instances: a model trained on
// every negative is regularised as much as one trained on a sample) and early
// stopping on the validation log-loss of sigma(g).
// With the offset the model estimates the full-data probability sigma(g).
//
// Thread-safety: Train() mutates; const members may be called concurrently.
#ifndef GRAPHSIEVE_EVAL_MODEL_H_
#define GRAPHSIEVE_EVAL_MODEL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"

namespace graphsieve::eval {

// Column-oriented instances with dense user/item indices.
struct Instances {
  std::vector<uint32_t> user;
  std::vector<uint32_t> item;
  std::vector<uint8_t> label;  // 0/1
  std::vector<float> offset;   // log-odds offset l per instance; empty = all 0
  size_t size() const { return label.size(); }
  // Lengths agree, labels 0/1, indices below the bounds, offsets finite and <= 0.
  absl::Status Validate(uint32_t num_users, uint32_t num_items, const std::string& name) const;
};

enum class ModelKind { kLogistic, kFactorisation, kMlp };
absl::StatusOr<ModelKind> ParseModelKind(std::string_view name);  // "lr" | "fm" | "mlp"
const char* ModelKindName(ModelKind kind);                        // "lr" | "fm" | "mlp"
// One line for reports, e.g. "fm (logistic factorisation, ...)".
const char* ModelKindDescription(ModelKind kind);

struct ModelOptions {
  ModelKind kind = ModelKind::kFactorisation;
  int dim = 16;                      // embedding dimension of fm and mlp (ignored by lr)
  int hidden = 32;                   // hidden ReLU units of mlp
  double learning_rate = 0.05;       // Adagrad step size
  double initial_accumulator = 0.1;  // Adagrad's starting sum of squared gradients
  // Weight of the L2 penalty per epoch on every parameter except the global
  // bias: at the end of each epoch each coordinate takes one proximal Adagrad
  // step theta <- theta / (1 + learning_rate·l2 / sqrt(accumulator)),
  // independent of how many instances updated it.
  double l2 = 1.0;
  double init_std = 0.01;  // std of the embeddings' normal initialisation
  int max_epochs = 30;     // passes over the training instances at most
  int patience = 2;        // stop after this many epochs without a better validation loss
  uint64_t seed = 1;       // initialisation and shuffling
  absl::Status Validate() const;
};

struct TrainSummary {
  int epochs_run = 0;
  int best_epoch = 0;  // 1-based epoch whose parameters were kept
  double best_validation_log_loss = 0.0;
  std::vector<double> validation_log_loss;  // per epoch
};

class CtrModel {
 public:
  // Errors: INVALID_ARGUMENT for bad options or an empty vocabulary.
  static absl::StatusOr<std::unique_ptr<CtrModel>> Create(const ModelOptions& options,
                                                          uint32_t num_users, uint32_t num_items);

  // Trains on `train` (with its offsets), early-stopping on `validation`
  // (offsets ignored). Keeps the parameters of the best validation epoch.
  // Errors: INVALID_ARGUMENT for invalid or empty inputs.
  absl::StatusOr<TrainSummary> Train(const Instances& train, const Instances& validation);

  // The full-data logit g and probability sigma(g) of a pair.
  double Logit(uint32_t user, uint32_t item) const;
  // sigma(g) for every instance (offsets ignored).
  std::vector<double> PredictProbabilities(const Instances& data) const;

 private:
  struct Params {
    double bias = 0.0;
    Eigen::VectorXf user_bias, item_bias;
    Eigen::MatrixXf user_emb, item_emb;  // dim x users, dim x items
    Eigen::MatrixXf w1;                  // mlp: 2*dim x hidden (column h = unit h's weights)
    Eigen::VectorXf b1, w2;              // mlp: hidden
  };
  CtrModel(const ModelOptions& options, uint32_t num_users, uint32_t num_items);
  double LogitOf(const Params& p, uint32_t user, uint32_t item) const;
  void RunEpoch(const Instances& train, int epoch);
  // The epoch's L2 step on every parameter (see ModelOptions::l2).
  void ApplyL2();
  // One Adagrad step of the mlp's layer and its input gradient for the
  // embeddings (added to *gu, *gi). `grad` = d(-objective)/dg.
  void MlpStep(uint32_t user, uint32_t item, float grad, Eigen::VectorXf* gu, Eigen::VectorXf* gi);

  ModelOptions options_;
  uint32_t num_users_, num_items_;
  Params params_;
  // Adagrad accumulators, same shapes as params_.
  Params accum_;
};

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_MODEL_H_
