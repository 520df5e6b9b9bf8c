#include "core/model/node_default.h"

#include <algorithm>

#include "core/maec/rate_rule.h"

namespace graphsieve {

bool HasNodeDefault(const UnseenModel& m, bool is_item) {
  return (is_item ? m.default_item_rho : m.default_user_rho) > 0.0;
}

double SmoothedPositiveRate(const NodeRecord& r, const UnseenModel& m) {
  const double pos = std::min(r.positives, r.impressions);
  return (pos + m.default_smoothing * m.default_prior) / (r.impressions + m.default_smoothing);
}

double NodeDefaultRate(const NodeRecord& r, bool is_item, const UnseenModel& m) {
  const double q = SmoothedPositiveRate(r, m);
  const double rho = is_item ? m.default_item_rho : m.default_user_rho;
  if (m.rate_rule == static_cast<int>(RateRule::kMixture)) {
    return MixtureRate(q, rho, is_item ? m.default_item_mean : m.default_user_mean, m.kappa);
  }
  return FloorRate(q, rho, m.floor);
}

}  // namespace graphsieve
