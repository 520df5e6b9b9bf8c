#include "core/model/unseen.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "core/maec/method.h"
#include "core/maec/rate_rule.h"
#include "core/model/pilot_row.h"

namespace graphsieve {
namespace {

// ‖a − b‖² over k floats, in double. Four running sums (element j goes to
// sum j mod 4, added as (s0 + s1) + (s2 + s3)): one sum would chain every
// addition on the last, and the server scores every INFERRED pair here
// (docs/SERVER.md "Absent pairs, and where the rest of the gap is"). The
// order is fixed, so the result does not depend on the compiler or the
// machine. Raw pointers: the hardened absl::Span checks each index and keeps
// the loop from vectorising.
double SquaredDistance(const float* a, const float* b, size_t k) {
  double sum[4] = {0.0, 0.0, 0.0, 0.0};
  size_t j = 0;
  for (; j + 4 <= k; j += 4) {
    for (size_t l = 0; l < 4; ++l) {
      const double d = double(a[j + l]) - b[j + l];
      sum[l] += d * d;
    }
  }
  for (; j < k; ++j) {
    const double d = double(a[j]) - b[j];
    sum[j % 4] += d * d;
  }
  return (sum[0] + sum[1]) + (sum[2] + sum[3]);
}

// One rate from a score by a stored rule and its fit.
double RuleRate(const RuleFit& f, double score) {
  return f.rule == static_cast<int>(RateRule::kMixture)
             ? MixtureRate(score, f.rho, f.score_mean, f.kappa)
             : FloorRate(score, f.rho, f.floor);
}

// The MA-EC rate score t(s) / n_i^η of an unseen pair, treated as a negative
// (unseen.h): conductance from the graph's part of the rows, min-max
// normalised, one step of each propagation from the node sums.
double MaecRateScore(const NodeView& user, const NodeView& item, const UnseenModel& m,
                     size_t graph) {
  // Effective conductance from the sketch rows; 0 across components.
  double g = 0.0;
  const size_t k = std::min({user.sketch.size(), item.sketch.size(), graph});
  if (user.record.component == item.record.component && k > 0) {
    const double r = SquaredDistance(user.sketch.data(), item.sketch.data(), k);
    g = r > 0.0 ? 1.0 / r : m.geff_max;
  }
  const double span = m.geff_max - m.geff_min;
  const double z = span > 0.0 ? std::min(std::max((g - m.geff_min) / span, 0.0), 1.0) : 0.0;

  // One step of each propagation: the pair is not in the node sums, so its
  // neighbours are all d = deg(u) + deg(v) pairs at its two endpoints.
  const double d = double(user.record.degree) + item.record.degree;
  const double norm = m.symmetric_normalisation ? std::sqrt(d) : d;
  double b = z;  // uncertainty |y − z| of a negative
  if (m.uncertainty_propagation && d > 0) {
    b = (1.0 - m.gamma) * b +
        m.gamma * (double(user.record.sum_uncertainty) + item.record.sum_uncertainty) / norm;
  }
  double s = b;  // corrected score y + (−1)^y b̂ of a negative
  if (m.score_propagation && d > 0) {
    s = (1.0 - m.gamma) * s +
        m.gamma * (double(user.record.sum_score) + item.record.sum_score) / norm;
  }
  return ExposureDiscount(ScorePower(std::max(s, 0.0), m.score_power), item.record.impressions,
                          m.exposure_power);
}

}  // namespace

float ScoreUnseenPair(const NodeView& user, const NodeView& item, const UnseenModel& m) {
  const bool mixture = m.rate_rule == static_cast<int>(RateRule::kMixture);
  const auto clip = [&](double r) {
    return static_cast<float>(std::min(std::max(r, mixture ? 0.0 : m.floor), 1.0));
  };
  const Method method = static_cast<Method>(m.method);
  if (method == Method::kUniform) return static_cast<float>(m.alpha);
  // The graph's part of the node rows; the built-in pilot's rows follow it.
  const size_t graph = static_cast<size_t>(std::max(m.GraphRowFloats(), 0));
  const bool pilot_rows = m.pilot_dim > 0 && user.sketch.size() == size_t(m.sketch_dim) &&
                          item.sketch.size() == size_t(m.sketch_dim);
  // The built-in pilot's score from the stored rows.
  const auto pilot = [&] {
    return PilotSigmoid(PilotLogit(m.pilot_bias, user.sketch.data() + graph,
                                   item.sketch.data() + graph, m.pilot_dim));
  };
  if (method == Method::kOpt && pilot_rows) {  // the pilot's score, then the pilot's rule
    const double s = pilot();
    return static_cast<float>(mixture ? MixtureRate(s, m.rho, m.score_mean, m.kappa)
                                      : FloorRate(s, m.rho, m.floor));
  }
  if (method != Method::kMaec && method != Method::kOpt && m.has_members && pilot_rows) {
    // An ensemble as the builder makes it: each member's rate by its own fit,
    // combined, then the combination's refit.
    const double rm = RuleRate(m.maec_member, MaecRateScore(user, item, m, graph));
    const double ro = RuleRate(m.pilot_member, pilot());
    return static_cast<float>(RuleRate(m.combined, CombineMemberRates(method, rm, ro)));
  }
  if (method != Method::kMaec)
    return clip(0.5 * (double(user.record.mean_rate) + item.record.mean_rate));
  const double s = MaecRateScore(user, item, m, graph);
  return static_cast<float>(mixture ? MixtureRate(s, m.rho, m.score_mean, m.kappa)
                                    : FloorRate(s, m.rho, m.floor));
}

float ScoreUnknownNodePair(const NodeView* user, const NodeView* item, const UnseenModel& m) {
  const Method method = static_cast<Method>(m.method);
  if (method != Method::kMaec) {
    if (method != Method::kUniform) {
      for (const NodeView* known : {user, item}) {
        if (known != nullptr && known->record.mean_rate > 0.0f) return known->record.mean_rate;
      }
    }
    return static_cast<float>(m.alpha);
  }
  NodeView empty;  // no pairs, no sketch row, a component of its own
  empty.record.component = std::numeric_limits<uint32_t>::max();
  if (user != nullptr && item != nullptr) return ScoreUnseenPair(*user, *item, m);
  return ScoreUnseenPair(user != nullptr ? *user : empty, item != nullptr ? *item : empty, m);
}

}  // namespace graphsieve
