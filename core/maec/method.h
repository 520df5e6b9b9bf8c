// The sampling methods (docs/METHOD.md), header-only like rate_rule.h so the
// serve-time model (core/model) can read a snapshot's method without linking
// core/maec. Names and parsing: pipeline_options.h.
#ifndef GRAPHSIEVE_CORE_MAEC_METHOD_H_
#define GRAPHSIEVE_CORE_MAEC_METHOD_H_

#include <algorithm>

#include "core/records/unseen_model.h"

namespace graphsieve {

enum class Method { kMaec, kUniform, kOpt, kMax, kMean, kProduct };
// The snapshot stores the method as its number (core/records/unseen_model.h).
static_assert(static_cast<int>(Method::kProduct) == UnseenModel::kMaxMethod);

// An ensemble's combination of its members' rates (docs/METHOD.md "Methods"):
// the builder's per-pair score and the server's unseen pairs use this one.
// REQUIRES: method is kMax, kMean or kProduct.
inline double CombineMemberRates(Method method, double maec_rate, double pilot_rate) {
  return method == Method::kMax    ? std::max(maec_rate, pilot_rate)
         : method == Method::kMean ? 0.5 * (maec_rate + pilot_rate)
                                   : maec_rate * pilot_rate;
}

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_METHOD_H_
