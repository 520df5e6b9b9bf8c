#include "gen/click_model.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"

namespace graphsieve {
namespace gen_internal {
namespace {

// Independent random streams (the third Rng argument is the user/item index).
enum Stream : uint64_t {
  kUserRank = 1,
  kItemRank = 2,
  kUserParams = 3,
  kItemParams = 4,
  kCalibration = 5,
  kUserRows = 6,
  kUserPilot = 7,
  kUserShuffle = 8,
  kUserPolicy = 9,       // kPreference: the previous model's noise per (user, item)
  kUserPolicyRows = 10,  // kPreference: repeats and labels
  kPolicyCalibration = 11,
  kTestExposure = 12,  // the randomly exposed test draw, per test instance
  kTestPilot = 13,     // its pilot noise
  kUserArrival = 14,   // churn: arrival day within the user's slot
  kItemBirth = 15,     // churn: publication day within the item's slot
  kChurnCalibration = 16,
  kUserTimes = 17,  // churn: the times of a user's instances
  kTestTime = 18,   // churn: the time of a test instance
};

constexpr double kSecondsPerDay = 86400.0;

// Zipf weights on a seeded random rank order, so ids do not sort by weight.
std::vector<double> ZipfWeights(int64_t n, double exponent, uint64_t seed, uint64_t stream) {
  std::vector<int64_t> rank(n);
  std::iota(rank.begin(), rank.end(), 0);
  Rng rng(seed, stream, 0);
  for (int64_t i = n - 1; i > 0; --i) std::swap(rank[i], rank[rng.Below(i + 1)]);
  std::vector<double> w(n);
  for (int64_t i = 0; i < n; ++i) w[i] = std::pow(static_cast<double>(rank[i] + 1), -exponent);
  return w;
}

void DrawParams(int64_t n, int dim, double bias_stddev, double factor_stddev, uint64_t seed,
                uint64_t stream, std::vector<float>* bias, std::vector<float>* factors) {
  bias->resize(n);
  factors->resize(static_cast<size_t>(n) * dim);
  for (int64_t i = 0; i < n; ++i) {
    Rng rng(seed, stream, i);
    (*bias)[i] = static_cast<float>(bias_stddev * rng.Normal());
    for (int k = 0; k < dim; ++k)
      (*factors)[i * dim + k] = static_cast<float>(factor_stddev * rng.Normal());
  }
}

}  // namespace

absl::StatusOr<ClickModel> ClickModel::Create(const GeneratorOptions& options) {
  ClickModel m(options);
  const uint64_t seed = options.seed;
  m.user_weight_ = ZipfWeights(options.num_users, options.user_zipf_exponent, seed, kUserRank);
  m.item_weight_ = ZipfWeights(options.num_items, options.item_zipf_exponent, seed, kItemRank);
  DrawParams(options.num_users, options.latent_dim, options.user_bias_stddev, options.factor_stddev,
             seed, kUserParams, &m.user_bias_, &m.user_factors_);
  DrawParams(options.num_items, options.latent_dim, options.item_bias_stddev, options.factor_stddev,
             seed, kItemParams, &m.item_bias_, &m.item_factors_);
  // Popular items are a little more clickable: add coupling * standardised log-popularity.
  const int64_t items = options.num_items;
  double mean = 0, sq = 0;
  for (double w : m.item_weight_) mean += std::log(w);
  mean /= static_cast<double>(items);
  for (double w : m.item_weight_) sq += (std::log(w) - mean) * (std::log(w) - mean);
  const double sd = std::sqrt(sq / static_cast<double>(items));
  if (sd > 0) {
    for (int64_t j = 0; j < items; ++j) {
      m.item_bias_[j] += static_cast<float>(options.popularity_click_coupling *
                                            (std::log(m.item_weight_[j]) - mean) / sd);
    }
  }
  m.repeat_q_ = options.repeat_rate / (1.0 + options.repeat_rate);  // geometric mean = q / (1 - q)
  if (options.churn_days > 0) {
    m.DrawChurn();
    m.CalibrateChurnPairScale();
  } else {
    m.CalibratePairScale();
  }
  m.CalibrateMu();
  return m;
}

void ClickModel::DrawChurn() {
  const double days = options_.churn_days;
  // The last rate·days indices arrive during the log, one slot of 1/rate days each.
  auto arrivals = [&](int64_t n, double per_day, uint64_t stream, bool before_start,
                      std::vector<double>* out) {
    const int64_t fresh = std::min<int64_t>(n, std::llround(per_day * days));
    const int64_t first = n - fresh;
    out->resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      Rng rng(options_.seed, stream, static_cast<uint64_t>(i));
      const double u = rng.Uniform();
      (*out)[i] = i < first ? (before_start ? -u * days : 0.0)
                            : std::min(static_cast<double>(i - first) + u, per_day * days) /
                                  per_day * (1.0 - 1e-9);
    }
  };
  arrivals(options_.num_users, options_.new_users_per_day, kUserArrival, false, &user_arrival_);
  arrivals(options_.num_items, options_.new_items_per_day, kItemBirth, true, &item_birth_);
  decay_per_day_ =
      options_.item_half_life_days > 0 ? std::log(2.0) / options_.item_half_life_days : 0.0;
}

double ClickModel::WindowStart(int64_t u, int64_t j) const {
  return std::max({user_arrival_[u], item_birth_[j], 0.0});
}

double ClickModel::ExposureWeight(int64_t u, int64_t j) const {
  if (options_.churn_days == 0) return 1.0;
  const double days = options_.churn_days;
  const double s = WindowStart(u, j);  // < days: every arrival is inside the log
  if (decay_per_day_ == 0) return (days - s) / days;
  const double l = decay_per_day_;
  return std::exp(-l * (s - item_birth_[j])) * -std::expm1(-l * (days - s)) / (l * days);
}

uint32_t ClickModel::DrawTime(int64_t u, int64_t j, Rng* rng) const {
  const double days = options_.churn_days;
  const double s = WindowStart(u, j);
  const double x = rng->Uniform();
  double t = s + x * (days - s);
  if (decay_per_day_ > 0) {  // inverse CDF of exp(-l (t - s)) on [s, days)
    const double l = decay_per_day_;
    t = s - std::log1p(x * std::expm1(-l * (days - s))) / l;
  }
  const double seconds = std::min(t * kSecondsPerDay, days * kSecondsPerDay - 1.0);
  return static_cast<uint32_t>(std::max(0.0, seconds));
}

void ClickModel::DrawTimes(int64_t u, int64_t j, int count, Rng* rng,
                           std::vector<Instance>* out) const {
  for (size_t k = out->size() - static_cast<size_t>(count); k < out->size(); ++k) {
    (*out)[k].time_seconds = DrawTime(u, j, rng);
  }
}

// Churn: the exposure weight w_uj ties users to items, so c solves
// sum min(1, c a_u b_j w_uj) = target over all pairs when there are few,
// else over a seeded uniform sample of 10^6 pairs scaled up (within ~1%).
void ClickModel::CalibrateChurnPairScale() {
  const int64_t users = options_.num_users, items = options_.num_items;
  constexpr int64_t kSample = 1000000;
  std::vector<double> x;
  double scale = 1.0;
  if (users * items <= 4 * kSample) {
    x.reserve(static_cast<size_t>(users * items));
    for (int64_t u = 0; u < users; ++u)
      for (int64_t j = 0; j < items; ++j)
        x.push_back(user_weight_[u] * item_weight_[j] * ExposureWeight(u, j));
  } else {
    Rng rng(options_.seed, kChurnCalibration, 0);
    x.reserve(kSample);
    for (int64_t k = 0; k < kSample; ++k) {
      const int64_t u = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(users)));
      const int64_t j = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(items)));
      x.push_back(user_weight_[u] * item_weight_[j] * ExposureWeight(u, j));
    }
    scale = static_cast<double>(users) * static_cast<double>(items) / kSample;
  }
  std::sort(x.begin(), x.end(), std::greater<double>());
  std::vector<double> suffix(x.size() + 1, 0.0);
  for (size_t k = x.size(); k-- > 0;) suffix[k] = suffix[k + 1] + x[k];
  const double target = static_cast<double>(options_.num_instances) / (1.0 + options_.repeat_rate);
  auto expected_pairs = [&](double c) {
    const size_t k = static_cast<size_t>(
        std::upper_bound(x.begin(), x.end(), 1.0 / c, std::greater<double>()) - x.begin());
    return scale * (static_cast<double>(k) + c * suffix[k]);
  };
  double lo = -60, hi = 60;  // log c
  for (int it = 0; it < 200 && hi - lo > 1e-12; ++it) {
    const double mid = 0.5 * (lo + hi);
    (expected_pairs(std::exp(mid)) < target ? lo : hi) = mid;
  }
  c_ = std::exp(0.5 * (lo + hi));
}

double ClickModel::Score(int64_t u, int64_t j) const {
  const int dim = options_.latent_dim;
  const float* fu = &user_factors_[u * dim];
  const float* fj = &item_factors_[j * dim];
  double dot = 0;
  for (int k = 0; k < dim; ++k) dot += static_cast<double>(fu[k]) * fj[k];
  return static_cast<double>(user_bias_[u]) + item_bias_[j] + dot;
}

// Finds c with sum_{u,j} min(1, c a_u b_j) = target pairs (bisection on log c;
// each evaluation is O(users log items) with the item weights sorted).
void ClickModel::CalibratePairScale() {
  std::vector<double> b = item_weight_;
  std::sort(b.begin(), b.end(), std::greater<double>());
  std::vector<double> suffix(b.size() + 1, 0.0);  // suffix[k] = sum of b[k..]
  for (size_t k = b.size(); k-- > 0;) suffix[k] = suffix[k + 1] + b[k];
  const double target = static_cast<double>(options_.num_instances) / (1.0 + options_.repeat_rate);
  auto expected_pairs = [&](double c) {
    double total = 0;
    for (double a : user_weight_) {
      const double t = 1.0 / (c * a);  // items with b >= t are certain
      const size_t k = static_cast<size_t>(
          std::upper_bound(b.begin(), b.end(), t, std::greater<double>()) - b.begin());
      total += static_cast<double>(k) + c * a * suffix[k];
    }
    return total;
  };
  double lo = -60, hi = 60;  // log c
  for (int it = 0; it < 200 && hi - lo > 1e-12; ++it) {
    const double mid = 0.5 * (lo + hi);
    (expected_pairs(std::exp(mid)) < target ? lo : hi) = mid;
  }
  c_ = std::exp(0.5 * (lo + hi));
}

// Finds mu with E[sigmoid(mu + score)] = positive_rate over the expected
// pairs: all pairs when there are few, else a seeded weighted sample. Under
// kPreference the exposure does not depend on mu, so the pairs are those the
// policy shows to a seeded sample of users (each pair weighted by its
// expected instances, 1 + repeat_rate, the same for all).
void ClickModel::CalibrateMu() {
  const int64_t users = options_.num_users, items = options_.num_items;
  std::vector<double> score, weight;
  auto add = [&](int64_t u, int64_t j, double w) {
    if (w <= 0) return;
    score.push_back(Score(u, j));
    weight.push_back(w);
  };
  constexpr int64_t kSample = 200000;
  if (options_.exposure == Exposure::kPreference) {
    Rng rng(options_.seed, kPolicyCalibration, 0);
    std::vector<uint32_t> shown;
    const int64_t sample_users = std::min<int64_t>(users, 256);
    for (int64_t s = 0; s < sample_users; ++s) {
      const int64_t u = users <= 256 ? s : static_cast<int64_t>(rng.Below(users));
      PreferenceItems(u, &shown);
      for (uint32_t j : shown) add(u, j, 1.0);
    }
  } else if (users * items <= 2 * kSample) {
    for (int64_t u = 0; u < users; ++u)
      for (int64_t j = 0; j < items; ++j)
        add(u, j, std::min(1.0, c_ * user_weight_[u] * item_weight_[j] * ExposureWeight(u, j)));
  } else {
    Rng rng(options_.seed, kCalibration, 0);
    for (int64_t s = 0; s < kSample; ++s) {
      const int64_t u = static_cast<int64_t>(rng.Below(users));
      const int64_t j = static_cast<int64_t>(rng.Below(items));
      add(u, j, std::min(1.0, c_ * user_weight_[u] * item_weight_[j] * ExposureWeight(u, j)));
    }
  }
  double total_weight = 0;
  for (double w : weight) total_weight += w;
  if (total_weight <= 0) {  // nothing exposed in the sample: any mu will do
    mu_ = 0;
    return;
  }
  double lo = -30, hi = 30;
  for (int it = 0; it < 60 && hi - lo > 1e-10; ++it) {
    const double mid = 0.5 * (lo + hi);
    double mean = 0;
    for (size_t i = 0; i < score.size(); ++i) mean += weight[i] * Sigmoid(mid + score[i]);
    mean /= total_weight;
    (mean < options_.positive_rate ? lo : hi) = mid;
  }
  mu_ = 0.5 * (lo + hi);
}

void ClickModel::PreferenceItems(int64_t u, std::vector<uint32_t>* items) const {
  items->clear();
  const int64_t num_items = options_.num_items;
  // The popularity mode's pairs of this user (the same random draws) fix how
  // many pairs the user gets and are the exploration candidates.
  std::vector<uint32_t> popular;
  Rng draw(options_.seed, kUserRows, static_cast<uint64_t>(u));
  const double ca = c_ * user_weight_[u];
  for (int64_t j = 0; j < num_items; ++j) {  // the draws of GeneratePopularityUser, in order
    if (draw.Uniform() >= ca * item_weight_[j] * ExposureWeight(u, j)) continue;
    popular.push_back(static_cast<uint32_t>(j));
    int count = 1;
    while (draw.Uniform() < repeat_q_) ++count;
    for (int k = 0; k < count; ++k) draw.Uniform();  // its labels
  }
  const size_t n = popular.size();
  const size_t exploit = std::min(
      n, static_cast<size_t>(std::llround((1.0 - options_.exploration) * static_cast<double>(n))));
  // The previous model's score of every item for this user; its top `exploit`.
  Rng noise(options_.seed, kUserPolicy, static_cast<uint64_t>(u));
  std::vector<std::pair<double, uint32_t>> ranked(num_items);
  for (int64_t j = 0; j < num_items; ++j) {
    ranked[j] = {
        options_.policy_slope * Score(u, j) + options_.policy_noise_stddev * noise.Normal(),
        static_cast<uint32_t>(j)};
    // Churn: items the user can barely see (published late, aged) rank lower.
    if (options_.churn_days > 0) ranked[j].first += std::log(ExposureWeight(u, j));
  }
  if (exploit > 0) {
    std::nth_element(ranked.begin(), ranked.begin() + static_cast<std::ptrdiff_t>(exploit - 1),
                     ranked.end(), std::greater<std::pair<double, uint32_t>>());
  }
  std::vector<uint8_t> shown(num_items, 0);
  for (size_t k = 0; k < exploit; ++k) {
    items->push_back(ranked[k].second);
    shown[ranked[k].second] = 1;
  }
  for (uint32_t j : popular) {
    if (items->size() >= n) break;
    if (!shown[j]) {
      items->push_back(j);
      shown[j] = 1;
    }
  }
  std::sort(items->begin(), items->end());
}

void ClickModel::EmitPair(int64_t u, int64_t j, int count, Rng* labels, Rng* pilot,
                          std::vector<Instance>* out) const {
  const double logit = mu_ + Score(u, j);
  const double prob = Sigmoid(logit);
  for (int k = 0; k < count; ++k) {
    Instance inst;
    inst.item = static_cast<uint32_t>(j);
    inst.label = labels->Uniform() < prob ? 1 : 0;
    inst.probability = static_cast<float>(prob);
    inst.pilot = 0.0f;
    if (options_.pilot) {
      inst.pilot = static_cast<float>(Sigmoid(mu_ + options_.pilot_slope * (logit - mu_) +
                                              options_.pilot_shift +
                                              options_.pilot_noise_stddev * pilot->Normal()));
    }
    out->push_back(inst);
  }
}

void ClickModel::GeneratePopularityUser(int64_t u, std::vector<Instance>* out) const {
  const uint64_t seed = options_.seed;
  Rng rows(seed, kUserRows, static_cast<uint64_t>(u));
  Rng pilot(seed, kUserPilot, static_cast<uint64_t>(u));
  Rng times(seed, kUserTimes, static_cast<uint64_t>(u));
  const double ca = c_ * user_weight_[u];
  const int64_t items = options_.num_items;
  for (int64_t j = 0; j < items; ++j) {
    const double p = ca * item_weight_[j] * ExposureWeight(u, j);
    if (rows.Uniform() >= p) continue;
    int count = 1;
    while (rows.Uniform() < repeat_q_) ++count;
    EmitPair(u, j, count, &rows, &pilot, out);
    if (options_.churn_days > 0) DrawTimes(u, j, count, &times, out);
  }
}

void ClickModel::GeneratePreferenceUser(int64_t u, std::vector<Instance>* out) const {
  const uint64_t seed = options_.seed;
  std::vector<uint32_t> items;
  PreferenceItems(u, &items);
  Rng rows(seed, kUserPolicyRows, static_cast<uint64_t>(u));
  Rng pilot(seed, kUserPilot, static_cast<uint64_t>(u));
  Rng times(seed, kUserTimes, static_cast<uint64_t>(u));
  for (uint32_t j : items) {
    int count = 1;
    while (rows.Uniform() < repeat_q_) ++count;
    EmitPair(u, j, count, &rows, &pilot, out);
    if (options_.churn_days > 0) DrawTimes(u, j, count, &times, out);
  }
}

void ClickModel::TestImpression(uint64_t index, int64_t* user, Instance* out) const {
  Rng rng(options_.seed, kTestExposure, index);
  *user = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(options_.num_users)));
  const int64_t item = static_cast<int64_t>(rng.Below(static_cast<uint64_t>(options_.num_items)));
  std::vector<Instance> one;
  Rng pilot(options_.seed, kTestPilot, index);
  EmitPair(*user, item, 1, &rng, &pilot, &one);
  if (options_.churn_days > 0) {
    Rng times(options_.seed, kTestTime, index);
    DrawTimes(*user, item, 1, &times, &one);
  }
  *out = one.front();
}

void ClickModel::GenerateUser(int64_t u, std::vector<Instance>* out) const {
  out->clear();
  const uint64_t seed = options_.seed;
  if (options_.exposure == Exposure::kPreference) {
    GeneratePreferenceUser(u, out);
  } else {
    GeneratePopularityUser(u, out);
  }
  Rng shuffle(seed, kUserShuffle, static_cast<uint64_t>(u));
  for (size_t i = out->size(); i > 1; --i) std::swap((*out)[i - 1], (*out)[shuffle.Below(i)]);
}

}  // namespace gen_internal
}  // namespace graphsieve
