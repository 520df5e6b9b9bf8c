// The built-in pilot of the pilot-based methods (opt, max, mean, product;
// docs/METHOD.md "The built-in pilot"): a logistic factorisation model
// (global bias, a bias and a `dim`-vector per user and per item, as
// graphsieve-eval's fm) fitted on the build's pairs, cross-fitted over K
// folds of the pairs so that no pair's label enters its own score.
//
//   data     one row per pair: user, item, instances n, positives y; the loss
//            is the instances' log-loss Σ n·[−ȳ log σ(g) − (1−ȳ) log(1−σ(g))],
//            ȳ = y/n (the same as training on the instances one by one).
//   sample   every pair with a positive, and a seeded share negative_rate of
//            the all-negative pairs at weight 1/negative_rate (the loss's
//            expectation is unchanged); by default every one of up to 10⁶
//            all-negative pairs, 10⁶ of them on larger logs, at least a tenth.
//   fit      Adagrad (per coordinate) over the sampled pairs, ordered by a
//            seeded hash of the pair and visited in blocks of ~1024 in a new
//            seeded block order each epoch (a pair's place never depends on
//            whether a held-out pair was sampled), one pair at a time, a
//            fixed number of epochs,
//            then per epoch one proximal L2 step per coordinate (as
//            eval/model.cc); sequential, so the factors depend only on the
//            data, the options and the model index.
//   folds    pair p is in fold PilotFold(user_id, item_id, seed, K); model k
//            < K is fitted without fold k and scores fold k; model K on every
//            pair is the one the snapshot stores for INFERRED pairs.
//   threads  the K + 1 fits run in parallel (each is sequential), so the
//            result does not depend on --threads; over MPI ranks each rank
//            fits the models m ≡ rank (mod N) of the same gathered data.
//
// Thread-safety: pure functions of their arguments.
#ifndef GRAPHSIEVE_CORE_MODEL_PILOT_H_
#define GRAPHSIEVE_CORE_MODEL_PILOT_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/records/pair_table.h"

namespace graphsieve {

struct PilotOptions {
  int dim = 16;                      // embedding dimension, in [1, 256]
  int epochs = 8;                    // passes over the training pairs, in [1, 1000]
  int folds = 5;                     // cross-fitting folds K, in [2, 64]
  double learning_rate = 0.05;       // Adagrad step size, in (0, 10]
  double initial_accumulator = 0.1;  // Adagrad's starting sum of squared gradients, > 0
  double l2 = 1.0;                   // proximal L2 weight per epoch (not the global bias), >= 0
  double init_std = 0.01;            // std of the embeddings' normal initialisation, in [0, 1]
  // Share of the all-negative pairs the fit trains on, each kept at weight
  // 1/rate (pairs with a positive are always kept), in [0, 1]; 1 = every
  // pair; 0 = auto: AutoNegativeRate of the data.
  double negative_rate = 0.0;
  uint64_t seed = 42;  // folds, initialisation and shuffling
  int threads = 2;     // fits in parallel (the result does not depend on it)
  // INVALID_ARGUMENT naming the graphsieve-build flag (--pilot_dim, ...).
  absl::Status Validate() const;
};

// The training data: one row per pair, in a fixed (the pair table's) order.
struct PilotData {
  uint32_t num_users = 0, num_items = 0;
  std::vector<uint32_t> user, item;  // indices < num_users / num_items
  std::vector<uint32_t> instances;   // n >= 1
  std::vector<uint32_t> positives;   // y <= n
  std::vector<uint8_t> fold;         // PilotFold of the pair
  size_t size() const { return user.size(); }
  // INVALID_ARGUMENT naming the first bad row.
  absl::Status Validate(int folds) const;
};

// One fitted model. Rows are 1 + dim floats (core/model/pilot_row.h): the
// node's bias, then its embedding.
struct PilotFactors {
  int dim = 0;
  double bias = 0.0;             // global bias b
  std::vector<float> user_rows;  // num_users x (1 + dim)
  std::vector<float> item_rows;  // num_items x (1 + dim)
  const float* UserRow(uint32_t u) const { return user_rows.data() + size_t(u) * (dim + 1); }
  const float* ItemRow(uint32_t i) const { return item_rows.data() + size_t(i) * (dim + 1); }
  double Logit(uint32_t u, uint32_t i) const;
  double Probability(uint32_t u, uint32_t i) const;
};

// The automatic negative_rate: every all-negative pair up to
// kAutoNegativePairs of them, above that that many (the fit's cost is then
// about fixed) but never below a tenth.
inline constexpr double kAutoNegativePairs = 1e6;
double AutoNegativeRate(const PilotData& data);

// The fold of a pair: a hash of its ids and the seed, mod `folds` (the same
// on every rank and for every pair order).
uint32_t PilotFold(uint64_t user_id, uint64_t item_id, uint64_t seed, int folds);

// Fits model `index` (0..folds): index < folds leaves out the pairs of fold
// `index`; index == folds trains on every pair. REQUIRES: data.Validate(folds)
// and options.Validate() are OK.
PilotFactors FitPilotModel(const PilotData& data, const PilotOptions& options, int index);

// A delta's fold-in (docs/METHOD.md "The built-in pilot"): the rows of the
// nodes not marked fixed start afresh and are fitted on the pairs that touch
// them, as a fit would (options.epochs passes, Adagrad, proximal L2), with
// the fixed rows and the global bias held. `data.fold` is not used (0s).
// Errors: INVALID_ARGUMENT when the factors do not match the data.
absl::Status FoldInPilotRows(const PilotData& data, const PilotOptions& options,
                             const std::vector<uint8_t>& user_fixed,
                             const std::vector<uint8_t>& item_fixed, PilotFactors* factors);

// The K + 1 models, those with index ≡ rank (mod ranks) fitted here (on
// options.threads threads), the others left empty (dim 0) for the caller to
// fill from the other ranks (SerializePilotFactors).
absl::StatusOr<std::vector<PilotFactors>> FitPilotModels(const PilotData& data,
                                                         const PilotOptions& options, int rank = 0,
                                                         int ranks = 1);

// Per pair of `data`, the cross-fitted probability: model fold[p]'s score.
// REQUIRES: models.size() == folds + 1, all fitted.
std::vector<float> CrossFittedScores(const PilotData& data,
                                     const std::vector<PilotFactors>& models);

// The mean instance log-loss of `models`' cross-fitted scores (for reports).
double CrossFittedLogLoss(const PilotData& data, const std::vector<float>& scores);

// One process's data from a pair table (its order, folds from its ids).
PilotData PilotDataFromPairs(const PairTable& pairs, const PilotOptions& options);

// The built-in pilot in one call (what graphsieve-build does on one rank):
// every pair's cross-fitted probability, in the table's order, ready for
// `pairs.pilot_mean`; `full` (may be null) gets the model on every pair.
absl::StatusOr<std::vector<float>> CrossFittedPilotScores(const PairTable& pairs,
                                                          const PilotOptions& options,
                                                          PilotFactors* full = nullptr);

// Bytes of a model (between ranks of one build; not a file format).
std::string SerializePilotFactors(const PilotFactors& f);
absl::StatusOr<PilotFactors> ParsePilotFactors(std::string_view bytes);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MODEL_PILOT_H_
