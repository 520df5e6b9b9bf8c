// The sampling methods (docs/METHOD.md), header-only like rate_rule.h so the
// serve-time model (core/model) can read a snapshot's method without linking
// core/maec. Names and parsing: pipeline_options.h.
#ifndef GRAPHSIEVE_CORE_MAEC_METHOD_H_
#define GRAPHSIEVE_CORE_MAEC_METHOD_H_

#include "core/records/unseen_model.h"

namespace graphsieve {

enum class Method { kMaec, kUniform, kOpt, kMax, kMean, kProduct };
// The snapshot stores the method as its number (core/records/unseen_model.h).
static_assert(static_cast<int>(Method::kProduct) == UnseenModel::kMaxMethod);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_METHOD_H_
