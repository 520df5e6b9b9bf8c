#include "eval/leverage.h"

#include <algorithm>
#include <cmath>

#include "core/maec/rates.h"

namespace graphsieve::eval {

NodeTotals CountNodeTotals(const PairTable& pairs) {
  NodeTotals t;
  t.user_positives.assign(pairs.num_users(), 0.0);
  t.item_positives.assign(pairs.num_items(), 0.0);
  t.user_impressions.assign(pairs.num_users(), 0.0);
  t.item_impressions.assign(pairs.num_items(), 0.0);
  for (size_t p = 0; p < pairs.num_pairs(); ++p) {
    const double positives = static_cast<double>(pairs.instances[p] - pairs.negatives[p]);
    t.user_positives[pairs.pair_user[p]] += positives;
    t.item_positives[pairs.pair_item[p]] += positives;
    t.user_impressions[pairs.pair_user[p]] += pairs.instances[p];
    t.item_impressions[pairs.pair_item[p]] += pairs.instances[p];
  }
  return t;
}

std::vector<double> LeverageOf(const PairTable& pairs, const NodeTotals& totals,
                               absl::Span<const double> q_user, absl::Span<const double> q_item) {
  std::vector<double> h(pairs.num_pairs());
  for (size_t p = 0; p < pairs.num_pairs(); ++p) {
    const uint32_t u = pairs.pair_user[p], i = pairs.pair_item[p];
    const double pu = std::max(totals.user_positives[u], 1.0);
    const double pi = std::max(totals.item_positives[i], 1.0);
    h[p] = std::sqrt(q_user[u] / (pu * pu) + q_item[i] / (pi * pi));
  }
  return h;
}

void ProxyExpectedPositives(const PairTable& pairs, const NodeTotals& totals, ExposureProxy proxy,
                            std::vector<double>* q_user, std::vector<double>* q_item) {
  q_user->assign(pairs.num_users(), 0.0);
  q_item->assign(pairs.num_items(), 0.0);
  const double users = static_cast<double>(std::max<size_t>(pairs.num_users(), 1));
  const double items = static_cast<double>(std::max<size_t>(pairs.num_items(), 1));
  for (size_t u = 0; u < pairs.num_users(); ++u) {
    const double p = totals.user_positives[u], n = std::max(totals.user_impressions[u], 1.0);
    (*q_user)[u] = proxy == ExposureProxy::kOwn ? p : p / n / users;
  }
  for (size_t i = 0; i < pairs.num_items(); ++i) {
    const double p = totals.item_positives[i], n = std::max(totals.item_impressions[i], 1.0);
    (*q_item)[i] = proxy == ExposureProxy::kOwn ? p : p / n / items;
  }
}

std::vector<double> OracleScores(const PairTable& pairs, absl::Span<const uint32_t> pair_of,
                                 absl::Span<const float> train_truth,
                                 absl::Span<const int64_t> test_user,
                                 absl::Span<const int64_t> test_item,
                                 absl::Span<const float> test_truth, bool leverage) {
  std::vector<double> p(pairs.num_pairs(), 0.0), count(pairs.num_pairs(), 0.0);
  for (size_t k = 0; k < pair_of.size(); ++k) {
    p[pair_of[k]] += train_truth[k];
    count[pair_of[k]] += 1.0;
  }
  for (size_t q = 0; q < p.size(); ++q) p[q] = count[q] > 0.0 ? p[q] / count[q] : 0.0;
  if (!leverage) return p;
  std::vector<double> q_user(pairs.num_users(), 0.0), q_item(pairs.num_items(), 0.0);
  for (size_t k = 0; k < test_truth.size(); ++k) {
    if (test_user[k] >= 0) q_user[test_user[k]] += test_truth[k];
    if (test_item[k] >= 0) q_item[test_item[k]] += test_truth[k];
  }
  const std::vector<double> h = LeverageOf(pairs, CountNodeTotals(pairs), q_user, q_item);
  for (size_t q = 0; q < p.size(); ++q) p[q] *= h[q];
  return p;
}

double ScoreCv2(absl::Span<const double> score, absl::Span<const uint32_t> negatives) {
  double w = 0.0, sum = 0.0, sum2 = 0.0;
  for (size_t p = 0; p < score.size(); ++p) {
    w += negatives[p];
    sum += negatives[p] * score[p];
    sum2 += negatives[p] * score[p] * score[p];
  }
  if (w == 0.0 || sum == 0.0) return 0.0;
  const double mean = sum / w;
  return std::max(0.0, sum2 / w - mean * mean) / (mean * mean);
}

double PredictedRecovery(double cv2, double alpha) { return cv2 / ((1.0 + cv2) * (1.0 - alpha)); }

absl::Status FitPerUserMixtureRates(const PairTable& pairs, absl::Span<const double> score,
                                    double alpha, double kappa, std::vector<double>* rates) {
  const size_t n = pairs.num_pairs();
  std::vector<std::vector<uint32_t>> of_user(pairs.num_users());
  for (size_t p = 0; p < n; ++p) of_user[pairs.pair_user[p]].push_back(static_cast<uint32_t>(p));
  rates->assign(n, alpha);
  std::vector<double> s, r;
  std::vector<uint32_t> w;
  for (const std::vector<uint32_t>& group : of_user) {
    s.clear();
    w.clear();
    for (uint32_t p : group) {
      s.push_back(score[p]);
      w.push_back(pairs.negatives[p]);
    }
    absl::StatusOr<RateFit> fit = FitMixtureRates(s, w, alpha, kappa, &r);
    if (!fit.ok()) return fit.status();
    for (size_t k = 0; k < group.size(); ++k) (*rates)[group[k]] = r[k];
  }
  return absl::OkStatus();
}

}  // namespace graphsieve::eval
