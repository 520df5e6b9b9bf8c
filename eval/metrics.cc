#include "eval/metrics.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace graphsieve::eval {
namespace {

absl::Status CheckLabels(absl::Span<const uint8_t> labels) {
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] > 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("label ", i, " is ", static_cast<int>(labels[i]), ", expected 0/1"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckScores(absl::Span<const double> scores, size_t n_labels) {
  if (scores.size() != n_labels) {
    return absl::InvalidArgumentError(
        absl::StrCat("scores and labels differ in length: ", scores.size(), " vs ", n_labels));
  }
  for (size_t i = 0; i < scores.size(); ++i) {
    if (!std::isfinite(scores[i])) {
      return absl::InvalidArgumentError(absl::StrCat("score ", i, " is not finite: ", scores[i]));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<double> Auc(absl::Span<const double> scores, absl::Span<const uint8_t> labels) {
  if (absl::Status s = CheckScores(scores, labels.size()); !s.ok()) return s;
  if (absl::Status s = CheckLabels(labels); !s.ok()) return s;
  const size_t n = scores.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return scores[a] < scores[b]; });
  // Sum of the (average, 1-based) ranks of the positives.
  double positive_rank_sum = 0.0;
  uint64_t positives = 0;
  size_t i = 0;
  while (i < n) {
    size_t j = i;
    while (j + 1 < n && scores[order[j + 1]] == scores[order[i]]) ++j;
    const double average_rank = 0.5 * (static_cast<double>(i + 1) + static_cast<double>(j + 1));
    for (size_t t = i; t <= j; ++t) {
      if (labels[order[t]] == 1) {
        positive_rank_sum += average_rank;
        ++positives;
      }
    }
    i = j + 1;
  }
  const uint64_t negatives = n - positives;
  if (positives == 0 || negatives == 0) {
    return absl::InvalidArgumentError(absl::StrCat("AUC is undefined with ", positives,
                                                   " positives and ", negatives, " negatives"));
  }
  const double p = static_cast<double>(positives);
  return (positive_rank_sum - p * (p + 1.0) / 2.0) / (p * static_cast<double>(negatives));
}

absl::StatusOr<double> LogLoss(absl::Span<const double> probabilities,
                               absl::Span<const uint8_t> labels) {
  if (probabilities.size() != labels.size()) {
    return absl::InvalidArgumentError(absl::StrCat("probabilities and labels differ in length: ",
                                                   probabilities.size(), " vs ", labels.size()));
  }
  if (labels.empty()) return absl::InvalidArgumentError("log-loss of an empty set is undefined");
  if (absl::Status s = CheckLabels(labels); !s.ok()) return s;
  constexpr double kEps = 1e-12;
  double total = 0.0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const double p = probabilities[i];
    if (!(p >= 0.0 && p <= 1.0)) {
      return absl::InvalidArgumentError(
          absl::StrCat("probability ", i, " is ", p, ", expected a value in [0, 1]"));
    }
    const double q = std::clamp(p, kEps, 1.0 - kEps);
    total -= labels[i] ? std::log(q) : std::log1p(-q);
  }
  return total / static_cast<double>(labels.size());
}

absl::StatusOr<double> Calibration(absl::Span<const double> probabilities,
                                   absl::Span<const uint8_t> labels) {
  // LogLoss checks lengths, emptiness, labels and the probabilities' range.
  if (absl::StatusOr<double> ll = LogLoss(probabilities, labels); !ll.ok()) return ll.status();
  double predicted = 0.0;
  uint64_t positives = 0;
  for (size_t i = 0; i < labels.size(); ++i) {
    predicted += probabilities[i];
    positives += labels[i];
  }
  if (positives == 0) {
    return absl::InvalidArgumentError("calibration is undefined: the test has no positive");
  }
  return predicted / static_cast<double>(positives);
}

absl::StatusOr<double> NormalisedEntropy(absl::Span<const double> probabilities,
                                         absl::Span<const uint8_t> labels) {
  absl::StatusOr<double> ll = LogLoss(probabilities, labels);
  if (!ll.ok()) return ll.status();
  uint64_t positives = 0;
  for (uint8_t y : labels) positives += y;
  if (positives == 0 || positives == labels.size()) {
    return absl::InvalidArgumentError(absl::StrCat("normalised entropy is undefined with ",
                                                   positives, " positives of ", labels.size(),
                                                   " instances"));
  }
  const double y = static_cast<double>(positives) / static_cast<double>(labels.size());
  return *ll / -(y * std::log(y) + (1.0 - y) * std::log1p(-y));
}

absl::StatusOr<NdcgResult> NdcgAtK(absl::Span<const uint32_t> users,
                                   absl::Span<const double> scores,
                                   absl::Span<const uint8_t> labels, int k) {
  if (k < 1) return absl::InvalidArgumentError(absl::StrCat("NDCG cutoff k must be >= 1, got ", k));
  if (users.size() != labels.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("users and labels differ in length: ", users.size(), " vs ", labels.size()));
  }
  if (absl::Status s = CheckScores(scores, labels.size()); !s.ok()) return s;
  if (absl::Status s = CheckLabels(labels); !s.ok()) return s;
  // Group the impressions by user, keeping input order inside a user (stable sort).
  std::vector<uint32_t> order(users.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(),
                   [&](uint32_t a, uint32_t b) { return users[a] < users[b]; });
  std::vector<double> discount(k);
  for (int r = 0; r < k; ++r) discount[r] = 1.0 / std::log2(static_cast<double>(r) + 2.0);
  NdcgResult result;
  double sum = 0.0;
  std::vector<uint32_t> group;
  size_t i = 0;
  while (i < order.size()) {
    size_t j = i;
    while (j < order.size() && users[order[j]] == users[order[i]]) ++j;
    group.assign(order.begin() + i, order.begin() + j);
    uint64_t positives = 0;
    for (uint32_t idx : group) positives += labels[idx];
    if (positives == 0) {
      ++result.users_skipped;
    } else {
      std::stable_sort(group.begin(), group.end(),
                       [&](uint32_t a, uint32_t b) { return scores[a] > scores[b]; });
      double dcg = 0.0, ideal = 0.0;
      const size_t top = std::min<size_t>(group.size(), static_cast<size_t>(k));
      for (size_t r = 0; r < top; ++r) {
        dcg += labels[group[r]] * discount[r];
        if (r < positives) ideal += discount[r];
      }
      sum += dcg / ideal;
      ++result.users_counted;
    }
    i = j;
  }
  if (result.users_counted == 0) {
    return absl::InvalidArgumentError("NDCG is undefined: no user has a positive impression");
  }
  result.ndcg = sum / static_cast<double>(result.users_counted);
  return result;
}

}  // namespace graphsieve::eval
