#include "core/maec/propagation.h"

#include <algorithm>
#include <cmath>

#include "core/maec/parallel.h"

namespace graphsieve {
namespace {

using maec_internal::ParallelChunks;

inline double PairNeighbours(absl::Span<const uint32_t> degrees, uint32_t u_node, uint32_t v_node) {
  return double(degrees[u_node]) + double(degrees[v_node]) - 2.0;
}

}  // namespace

std::vector<uint32_t> NodeDegrees(const PairTable& pairs) {
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  std::vector<uint32_t> deg(pairs.num_users() + pairs.num_items(), 0);
  for (size_t p = 0; p < pairs.num_pairs(); ++p) {
    ++deg[pairs.pair_user[p]];
    ++deg[U + pairs.pair_item[p]];
  }
  return deg;
}

std::vector<double> PropagationNodeSums(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                                        absl::Span<const double> x, bool symmetric, int threads) {
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  const size_t nodes = degrees.size();
  std::vector<std::vector<double>> partial(std::max(1, threads), std::vector<double>(nodes, 0.0));
  ParallelChunks(pairs.num_pairs(), threads, [&](int t, size_t begin, size_t end) {
    std::vector<double>& m = partial[t];
    for (size_t p = begin; p < end; ++p) {
      const uint32_t u = pairs.pair_user[p], v = U + pairs.pair_item[p];
      double value = x[p];
      if (symmetric) {
        const double d = PairNeighbours(degrees, u, v);
        value = d > 0 ? value / std::sqrt(d) : 0.0;
      }
      m[u] += value;
      m[v] += value;
    }
  });
  for (size_t t = 1; t < partial.size(); ++t) {
    for (size_t w = 0; w < nodes; ++w) partial[0][w] += partial[t][w];
  }
  return std::move(partial[0]);
}

PropagationReport Propagate(const PairTable& pairs, absl::Span<const uint32_t> degrees,
                            const PropagationOptions& o, std::vector<double>* x) {
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  const size_t nodes = degrees.size();
  const int threads = std::max(1, o.threads);
  const std::vector<double> x0 = *x;
  PropagationReport report;
  std::vector<double> m = PropagationNodeSums(pairs, degrees, *x, o.symmetric, threads);
  std::vector<std::vector<double>> partial(threads, std::vector<double>(nodes));
  std::vector<double> change(threads);
  // One fused pass per iteration: the update from the old node sums, and the
  // new node sums of the updated values.
  while (report.iterations < o.max_iterations) {
    std::fill(change.begin(), change.end(), 0.0);
    ParallelChunks(pairs.num_pairs(), threads, [&](int t, size_t begin, size_t end) {
      std::vector<double>& next_m = partial[t];
      std::fill(next_m.begin(), next_m.end(), 0.0);
      double max_change = 0.0;
      for (size_t p = begin; p < end; ++p) {
        const uint32_t u = pairs.pair_user[p], v = U + pairs.pair_item[p];
        const double d = PairNeighbours(degrees, u, v);
        const double xp = (*x)[p];
        double next = xp;
        if (d > 0) {
          if (o.symmetric) {
            const double sd = std::sqrt(d);
            next = (1.0 - o.gamma) * x0[p] + o.gamma * (m[u] + m[v] - 2.0 * xp / sd) / sd;
            next_m[u] += next / sd;
            next_m[v] += next / sd;
          } else {
            next = (1.0 - o.gamma) * x0[p] + o.gamma * (m[u] + m[v] - 2.0 * xp) / d;
            next_m[u] += next;
            next_m[v] += next;
          }
        } else {
          next = (1.0 - o.gamma) * x0[p] + o.gamma * xp;  // no neighbours: S x_p = x_p
        }
        max_change = std::max(max_change, std::abs(next - xp));
        (*x)[p] = next;
      }
      change[t] = max_change;
    });
    for (size_t w = 0; w < nodes; ++w) {
      double sum = 0.0;
      for (int t = 0; t < threads; ++t) sum += partial[t][w];
      m[w] = sum;
    }
    ++report.iterations;
    report.last_change = *std::max_element(change.begin(), change.end());
    if (report.last_change <= o.tolerance) {
      report.converged = true;
      break;
    }
  }
  return report;
}

std::vector<double> SelfInfluence(const PairTable& pairs, absl::Span<const uint32_t> degrees, double gamma) {
  const uint32_t U = static_cast<uint32_t>(pairs.num_users());
  const size_t P = pairs.num_pairs();
  std::vector<double> inv_d(P), s1(degrees.size(), 0.0), s2(degrees.size(), 0.0);
  for (size_t p = 0; p < P; ++p) {
    const uint32_t u = pairs.pair_user[p], v = U + pairs.pair_item[p];
    const double d = PairNeighbours(degrees, u, v);
    inv_d[p] = d > 0 ? 1.0 / d : 0.0;
    for (uint32_t w : {u, v}) {
      s1[w] += inv_d[p];
      s2[w] += inv_d[p] * inv_d[p];
    }
  }
  std::vector<double> m(P, 1.0);
  const double g2 = gamma * gamma, g3 = g2 * gamma;
  for (size_t p = 0; p < P; ++p) {
    if (inv_d[p] == 0.0) continue;  // no neighbours: x_p stays x⁽⁰⁾_p
    const uint32_t u = pairs.pair_user[p], v = U + pairs.pair_item[p];
    double second = 0.0, third = 0.0;
    for (uint32_t w : {u, v}) {
      const double a = s1[w] - inv_d[p], b = s2[w] - inv_d[p] * inv_d[p];
      second += a;
      third += a * a - b;
    }
    m[p] = (1.0 - gamma) * (1.0 + g2 * inv_d[p] * second + g3 * inv_d[p] * third);
  }
  return m;
}

}  // namespace graphsieve
