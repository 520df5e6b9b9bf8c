// The rate rules' per-value formulas (docs/METHOD.md "Rate rules"; the fits
// of ρ are in rates.h): header-only and free of the rest of core/maec, so the
// serve-time model (core/model) scores with the same expressions the build
// fits with, without linking the method's numerics.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CORE_MAEC_RATE_RULE_H_
#define GRAPHSIEVE_CORE_MAEC_RATE_RULE_H_

#include <algorithm>
#include <cmath>

namespace graphsieve {

// The snapshot stores the rule as its number (UnseenModel::rate_rule).
enum class RateRule { kFloor, kMixture };

// The hardness-to-rate map's transform t(s) = s^β (β = `score_power` in
// (0, 1]; docs/METHOD.md "Rate rules"): β < 1 tames the heavy tail of the
// conductance, which otherwise concentrates the budget on few pairs. β = 1 is
// the identity (the score itself). REQUIRES: s >= 0.
inline double ScorePower(double score, double power) {
  return power == 1.0 ? score : std::pow(score, power);
}

// The exposure discount t / n^η of a rate score t for an item shown n times
// (η = `exposure_power`, 0 = off; docs/METHOD.md "Exposure discount"). n = 0
// (an item the snapshot does not count) is taken as 1.
inline double ExposureDiscount(double t, double impressions, double power) {
  return power == 0.0 ? t : t / std::pow(std::max(impressions, 1.0), power);
}

// One rate from a score and a fit, by rule (the same expression the fits use).
inline double FloorRate(double score, double rho, double floor) {
  return std::min(std::max(rho * score, floor), 1.0);
}
// h̄ = 0 (no negative scores above 0, or no negatives) drops the graph term:
// every pair gets min(1, ρκ).
inline double MixtureRate(double score, double rho, double score_mean, double kappa) {
  const double a = score_mean > 0.0 ? score / score_mean + kappa : kappa;
  return std::min(rho * a, 1.0);
}

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RATE_RULE_H_
