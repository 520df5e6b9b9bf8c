// Test metrics of a CTR model: AUC, log-loss, normalised entropy, calibration
// and per-user NDCG@k.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_EVAL_METRICS_H_
#define GRAPHSIEVE_EVAL_METRICS_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace graphsieve::eval {

// Area under the ROC curve: the probability that a random positive scores
// above a random negative, ties counting one half (average ranks).
// Errors: INVALID_ARGUMENT on length mismatch, a non-finite score, a label
// other than 0/1, or when either class is absent (AUC undefined).
absl::StatusOr<double> Auc(absl::Span<const double> scores, absl::Span<const uint8_t> labels);

// Mean negative log-likelihood of 0/1 labels under probabilities, each clipped
// to [1e-12, 1 - 1e-12]. Errors: INVALID_ARGUMENT on length mismatch, empty
// input, a probability outside [0, 1] or NaN, a label other than 0/1.
absl::StatusOr<double> LogLoss(absl::Span<const double> probabilities,
                               absl::Span<const uint8_t> labels);

// Calibration on a test: the mean predicted probability over the observed
// click rate (1 = calibrated; > 1 over-predicts). Errors: as LogLoss, and
// INVALID_ARGUMENT when the test has no positive (the ratio is undefined).
absl::StatusOr<double> Calibration(absl::Span<const double> probabilities,
                                   absl::Span<const uint8_t> labels);

// Normalised entropy: the log-loss over the entropy of the test's own click
// rate, -(ȳ log ȳ + (1 - ȳ) log(1 - ȳ)), i.e. log-loss relative to always
// predicting the base rate (< 1 = better than that). Errors: as LogLoss, and
// INVALID_ARGUMENT when the test lacks a class (the base entropy is 0).
absl::StatusOr<double> NormalisedEntropy(absl::Span<const double> probabilities,
                                         absl::Span<const uint8_t> labels);

struct NdcgResult {
  double ndcg = 0.0;           // mean over the users counted
  uint64_t users_counted = 0;  // users with at least one positive impression
  uint64_t users_skipped = 0;  // users whose impressions are all negative (NDCG undefined)
};

// Per user: rank that user's impressions by score (descending; ties broken by
// input order), DCG@k = sum over the top k of (2^y - 1) / log2(rank + 1), divided
// by the ideal DCG@k; averaged over users with at least one positive.
// Errors: INVALID_ARGUMENT on length mismatch, k < 1, non-finite score, bad
// label, or no user with a positive.
absl::StatusOr<NdcgResult> NdcgAtK(absl::Span<const uint32_t> users,
                                   absl::Span<const double> scores,
                                   absl::Span<const uint8_t> labels, int k);

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_METRICS_H_
