#include "core/maec/rates.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/maec/rates_dist.h"

namespace graphsieve {
namespace {

struct Entry {
  double score;
  double weight;
};

// Sorts by descending score: an LSD radix sort (two 16-bit passes) on the
// upper 32 bits of the IEEE-754 pattern (monotone for non-negative doubles),
// then each run of equal upper bits is put in exact order by std::sort.
void SortDescending(std::vector<Entry>* v, int /*threads*/) {
  const size_t n = v->size();
  auto key = [&](const Entry& e) {
    uint64_t bits;
    std::memcpy(&bits, &e.score, sizeof bits);
    return static_cast<uint32_t>(bits >> 32);
  };
  std::vector<Entry> tmp(n);
  std::vector<size_t> count(1 << 16);
  for (int shift : {0, 16}) {
    std::fill(count.begin(), count.end(), 0);
    for (const Entry& e : *v) ++count[(key(e) >> shift) & 0xffff];
    // Descending: larger digits first.
    size_t sum = 0;
    for (int d = (1 << 16) - 1; d >= 0; --d) {
      const size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (const Entry& e : *v) tmp[count[(key(e) >> shift) & 0xffff]++] = e;
    v->swap(tmp);
  }
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && key((*v)[j]) == key((*v)[i])) ++j;
    if (j - i > 1) {
      std::sort(v->begin() + i, v->begin() + j, [](const Entry& a, const Entry& b) { return a.score > b.score; });
    }
    i = j;
  }
}

}  // namespace

absl::StatusOr<RateRule> ParseRateRule(std::string_view name) {
  for (RateRule r : {RateRule::kFloor, RateRule::kMixture}) {
    if (name == RateRuleName(r)) return r;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown rate rule '", std::string(name), "': expected floor or mixture"));
}

const char* RateRuleName(RateRule rule) {
  switch (rule) {
    case RateRule::kFloor: return "floor";
    case RateRule::kMixture: return "mixture";
  }
  return "?";
}

absl::StatusOr<RateFit> FloorRuleRange(double total_w, double zero_w, double alpha, double floor) {
  if (total_w == 0.0) {
    return absl::FailedPreconditionError("no negative instances: there is nothing to subsample");
  }
  RateFit fit;
  fit.max_alpha = ((total_w - zero_w) + floor * zero_w) / total_w;
  if (alpha < floor || alpha > fit.max_alpha * (1.0 + 1e-12)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "alpha %g is unreachable with floor %g: the mean rate over negative instances can be any "
        "value in [%g, %.9g] for these scores (%.4g%% of negative instances score 0 and stay at "
        "the floor); lower alpha, raise the floor, or use rate rule 'mixture' (--rate-rule=mixture), "
        "which reaches every alpha",
        alpha, floor, floor, fit.max_alpha, 100.0 * zero_w / total_w));
  }
  return fit;
}

absl::StatusOr<RateFit> FitRates(absl::Span<const double> scores, absl::Span<const uint32_t> weights,
                                 double alpha, double floor, std::vector<double>* rates, int threads,
                                 Communicator* comm) {
  if (comm != nullptr && comm->size() > 1) {
    return maec_internal::FitRatesAcrossRanks(scores, weights, alpha, floor, rates, *comm);
  }
  if (scores.size() != weights.size()) {
    return absl::InvalidArgumentError("FitRates: scores and weights differ in length");
  }
  if (!(floor >= 0.0 && floor < 1.0)) {
    return absl::InvalidArgumentError(absl::StrFormat("rate floor must be in [0, 1), got %g", floor));
  }
  if (!(alpha > 0.0 && alpha <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrFormat("alpha must be in (0, 1], got %g", alpha));
  }
  std::vector<Entry> pos;  // weighted entries with a positive score
  double total_w = 0.0, zero_w = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    const double s = scores[i];
    if (!std::isfinite(s) || s < 0.0) {
      return absl::InvalidArgumentError(absl::StrFormat("FitRates: score %d is %g, expected >= 0", i, s));
    }
    if (weights[i] == 0) continue;
    total_w += weights[i];
    if (s > 0.0) pos.push_back({s, double(weights[i])}); else zero_w += weights[i];
  }
  absl::StatusOr<RateFit> range = FloorRuleRange(total_w, zero_w, alpha, floor);
  if (!range.ok()) return range.status();
  RateFit fit = *range;
  SortDescending(&pos, threads);
  // Walk the breakpoints in ascending ρ: floor exits ϱ/s_i and cap entries 1/s_i.
  double cap_w = 0.0, lin_ws = 0.0, floor_w = total_w;
  size_t i_floor = 0, i_cap = 0;
  const double inf = std::numeric_limits<double>::infinity();
  bool found = false;
  double rho_prev = 0.0;
  while (!found) {
    const double next_floor = i_floor < pos.size() ? floor / pos[i_floor].score : inf;
    const double next_cap = i_cap < pos.size() ? 1.0 / pos[i_cap].score : inf;
    const double rho_next = std::min(next_floor, next_cap);
    if (rho_next == inf) break;
    const double f_next = (cap_w + rho_next * lin_ws + floor * floor_w) / total_w;
    if (f_next >= alpha) {
      fit.rho = lin_ws > 0.0 ? (alpha * total_w - cap_w - floor * floor_w) / lin_ws : rho_next;
      fit.rho = std::min(std::max(fit.rho, rho_prev), rho_next);
      found = true;
      break;
    }
    if (next_floor <= next_cap) {
      floor_w -= pos[i_floor].weight;
      lin_ws += pos[i_floor].weight * pos[i_floor].score;
      ++i_floor;
    } else {
      cap_w += pos[i_cap].weight;
      lin_ws -= pos[i_cap].weight * pos[i_cap].score;
      ++i_cap;
    }
    if (i_floor == i_cap) lin_ws = 0.0;  // linear set empty: drop rounding residue
    rho_prev = rho_next;
  }
  if (!found) fit.rho = pos.empty() ? 1.0 : 1.0 / pos.back().score;  // α = f(∞): all capped
  double sum = 0.0;
  if (rates != nullptr) rates->resize(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    const double r = FloorRate(scores[i], fit.rho, floor);
    if (rates != nullptr) (*rates)[i] = r;
    sum += weights[i] * r;
  }
  fit.achieved_mean = sum / total_w;
  return fit;
}

absl::StatusOr<RateFit> FitMixtureRates(absl::Span<const double> scores, absl::Span<const uint32_t> weights,
                                        double alpha, double kappa, std::vector<double>* rates, int threads,
                                        Communicator* comm) {
  if (scores.size() != weights.size()) {
    return absl::InvalidArgumentError("FitMixtureRates: scores and weights differ in length");
  }
  if (!(kappa > 0.0 && kappa <= 1e6)) {
    return absl::InvalidArgumentError(absl::StrFormat("kappa (uniform share) must be in (0, 1e6], got %g", kappa));
  }
  if (!(alpha > 0.0 && alpha <= 1.0)) {
    return absl::InvalidArgumentError(absl::StrFormat("alpha must be in (0, 1], got %g", alpha));
  }
  double total_w = 0.0, total_ws = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    const double s = scores[i];
    if (!std::isfinite(s) || s < 0.0) {
      return absl::InvalidArgumentError(absl::StrFormat("FitMixtureRates: score %d is %g, expected >= 0", i, s));
    }
    total_w += weights[i];
    total_ws += weights[i] * s;
  }
  if (comm != nullptr) {  // h̄ over every rank's negatives
    total_w = SumOverRanks(*comm, total_w);
    total_ws = SumOverRanks(*comm, total_ws);
  }
  RateFit fit;
  fit.score_mean = total_w > 0.0 ? total_ws / total_w : 0.0;
  std::vector<double> a(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    a[i] = fit.score_mean > 0.0 ? scores[i] / fit.score_mean + kappa : kappa;
  }
  if (total_w == 0.0) {
    // Nothing to subsample: every entry gets α (the uniform share alone).
    fit.rho = alpha / kappa;
    fit.achieved_mean = alpha;
  } else {
    absl::StatusOr<RateFit> linear = FitRates(a, weights, alpha, 0.0, nullptr, threads, comm);
    if (!linear.ok()) return linear.status();
    fit.rho = linear->rho;
    fit.max_alpha = linear->max_alpha;
  }
  double sum = 0.0;
  if (rates != nullptr) rates->resize(scores.size());
  for (size_t i = 0; i < scores.size(); ++i) {
    const double r = MixtureRate(scores[i], fit.rho, fit.score_mean, kappa);
    if (rates != nullptr) (*rates)[i] = r;
    sum += weights[i] * r;
  }
  if (comm != nullptr) sum = SumOverRanks(*comm, sum);
  if (total_w > 0.0) fit.achieved_mean = sum / total_w;
  return fit;
}

}  // namespace graphsieve
