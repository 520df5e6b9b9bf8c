// The built-in pilot's score of one (user, item) pair from two stored node
// rows (docs/METHOD.md "The built-in pilot", docs/SNAPSHOT.md "Pilot
// factors"): what the server computes for an INFERRED pair of known nodes and
// the builder for every pair, so the two cannot drift apart. Header-only, no
// Eigen: the request path links it without the build-time fit.
//
// A node's pilot row is 1 + dim floats: its bias, then its embedding. The
// score is σ(b + b_u + b_i + p_u·q_i), b the global bias (UnseenModel::
// pilot_bias).
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CORE_MODEL_PILOT_ROW_H_
#define GRAPHSIEVE_CORE_MODEL_PILOT_ROW_H_

#include <cmath>
#include <cstddef>

namespace graphsieve {

// Floats of a node's pilot row for embedding dimension `dim` (0 = no pilot).
inline constexpr int PilotRowFloats(int dim) { return dim > 0 ? dim + 1 : 0; }

// b + b_u + b_i + p_u·q_i in double, over rows of 1 + dim floats. The sum
// runs in one fixed order, so the builder and the server agree bit for bit.
inline double PilotLogit(double global_bias, const float* user_row, const float* item_row,
                         int dim) {
  double g = global_bias + double(user_row[0]) + double(item_row[0]);
  for (int k = 1; k <= dim; ++k) g += double(user_row[k]) * double(item_row[k]);
  return g;
}

// The logistic function without overflow.
inline double PilotSigmoid(double x) {
  if (x >= 0) return 1.0 / (1.0 + std::exp(-x));
  const double e = std::exp(x);
  return e / (1.0 + e);
}

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MODEL_PILOT_ROW_H_
