// The oracle rate and the leverage rules of graphsieve-eval (docs/EVALUATION.md
// "The limit: the oracle rate" and "Candidates").
//
// With the log-odds offset a per-pair rate π changes only the variance of the
// corrected estimator. For a test distribution Q the variance-optimal rate is
// π ∝ p·h_Q: p the pair's click probability, h_Q its leverage under Q's
// exposure, for per-node parameters about
//   h_Q = √(Q_u / P_u² + Q_i / P_i²),
// P a node's training positives, Q its expected positives under the test's
// exposure. Its recovery of the full − uniform gap is at most
//   R* = CV² / ((1 + CV²)(1 − α)),
// CV the coefficient of variation of p·h_Q over the negative instances.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_EVAL_LEVERAGE_H_
#define GRAPHSIEVE_EVAL_LEVERAGE_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/records/pair_table.h"

namespace graphsieve::eval {

// Per user and item index of a pair table: training positives and impressions.
struct NodeTotals {
  std::vector<double> user_positives, item_positives;
  std::vector<double> user_impressions, item_impressions;
};
NodeTotals CountNodeTotals(const PairTable& pairs);

// Per pair: h = √(q_user[u] / max(P_u, 1)² + q_item[i] / max(P_i, 1)²).
// REQUIRES: q_user.size() == pairs.num_users(), q_item.size() == pairs.num_items().
std::vector<double> LeverageOf(const PairTable& pairs, const NodeTotals& totals,
                               absl::Span<const double> q_user, absl::Span<const double> q_item);

// Q from the training log alone, for the deployable leverage rules:
//   kOwn     a test that shares the log's exposure: Q ∝ P, so h ∝ √(1/P_u + 1/P_i);
//   kRandom  a uniformly exposed test: each user shown alike (1/U of it), each item
//            alike (1/I), so Q_u ∝ (P_u/n_u)/U and Q_i ∝ (P_i/n_i)/I (n = impressions).
enum class ExposureProxy { kOwn, kRandom };
void ProxyExpectedPositives(const PairTable& pairs, const NodeTotals& totals, ExposureProxy proxy,
                            std::vector<double>* q_user, std::vector<double>* q_item);

// The oracle's score per pair: p̄·h_Q, p̄ the mean of `train_truth` over the
// pair's training instances (pair_of[k] is instance k's pair), Q_u and Q_i the
// sums of `test_truth` over the test instances of the user and item
// (test_user/test_item: pair-table indices, -1 for a node training never shows).
// With leverage false: p̄ alone.
// REQUIRES: pair_of and train_truth, and test_user, test_item and test_truth, agree in length.
std::vector<double> OracleScores(const PairTable& pairs, absl::Span<const uint32_t> pair_of,
                                 absl::Span<const float> train_truth,
                                 absl::Span<const int64_t> test_user,
                                 absl::Span<const int64_t> test_item,
                                 absl::Span<const float> test_truth, bool leverage);

// The coefficient of variation² of `score` over the negative instances
// (weights `negatives`), and R* = CV² / ((1 + CV²)(1 − α)).
// Returns 0 when there are no negatives or the mean score is 0.
// REQUIRES: score.size() == negatives.size(), α in (0, 1).
double ScoreCv2(absl::Span<const double> score, absl::Span<const uint32_t> negatives);
double PredictedRecovery(double cv2, double alpha);

// The per-user budget: for each user, the mixture rule fitted on that user's
// pairs alone, so the mean rate over each user's negative instances is α
// (a user without negatives gets α on every pair).
// Errors: FitMixtureRates's (a negative or non-finite score).
absl::Status FitPerUserMixtureRates(const PairTable& pairs, absl::Span<const double> score,
                                    double alpha, double kappa, std::vector<double>* rates);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_LEVERAGE_H_
