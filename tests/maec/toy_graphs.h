// Helpers shared by the MA-EC tests: small impression logs with known graphs
// and an independent dense reference (Eigen's complete orthogonal
// decomposition pseudo-inverse of the whole Laplacian, no component logic).
#ifndef GRAPHSIEVE_TESTS_MAEC_TOY_GRAPHS_H_
#define GRAPHSIEVE_TESTS_MAEC_TOY_GRAPHS_H_

#include <Eigen/Dense>
#include <Eigen/QR>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <utility>
#include <vector>

#include "core/io/log_reader.h"
#include "core/maec/pipeline.h"
#include "tests/maec/rank_correlation.h"

namespace graphsieve::testing {

struct Edge {
  uint64_t user, item;
  int label;
};

inline ImpressionLog MakeLog(const std::vector<Edge>& edges) {
  ImpressionLog log;
  for (const Edge& e : edges) {
    log.user_ids.push_back(e.user);
    log.item_ids.push_back(e.item);
    log.labels.push_back(static_cast<uint8_t>(e.label));
  }
  return log;
}

// Random bipartite log: every (u, i) pair present with probability `density`,
// positive with probability `positive` (and a few duplicated instances).
inline ImpressionLog RandomLog(int users, int items, double density, double positive,
                               uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  ImpressionLog log;
  for (int u = 0; u < users; ++u) {
    for (int i = 0; i < items; ++i) {
      if (unif(rng) >= density) continue;
      const int copies = unif(rng) < 0.1 ? 2 : 1;
      for (int c = 0; c < copies; ++c) {
        log.user_ids.push_back(1000 + u * 7);
        log.item_ids.push_back(50000 + i * 3);
        log.labels.push_back(unif(rng) < positive ? 1 : 0);
      }
    }
  }
  return log;
}

// Like RandomLog but with heavy-tailed user activity and item popularity
// (weights u^-0.8, i^-0.8), so resistances spread over a wide range as in
// real logs: p(u, i) = min(1, scale · w_u · w_i).
inline ImpressionLog PowerLawLog(int users, int items, double scale, double positive,
                                 uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> unif(0.0, 1.0);
  ImpressionLog log;
  for (int u = 0; u < users; ++u) {
    for (int i = 0; i < items; ++i) {
      const double p = std::min(1.0, scale * std::pow(u + 1.0, -0.8) * std::pow(i + 1.0, -0.8));
      if (unif(rng) >= p) continue;
      log.user_ids.push_back(u);
      log.item_ids.push_back(100000 + i);
      log.labels.push_back(unif(rng) < positive ? 1 : 0);
    }
  }
  return log;
}

// Dense Laplacian of the positive graph (users then items).
inline Eigen::MatrixXd ReferenceLaplacian(const PairTable& t) {
  const int U = static_cast<int>(t.num_users()), n = U + static_cast<int>(t.num_items());
  Eigen::MatrixXd l = Eigen::MatrixXd::Zero(n, n);
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    if (!t.label[p]) continue;
    const int a = t.pair_user[p], b = U + t.pair_item[p];
    l(a, a) += 1;
    l(b, b) += 1;
    l(a, b) -= 1;
    l(b, a) -= 1;
  }
  return l;
}

// Pseudo-inverse of the Laplacian of the positive graph (users then items).
inline Eigen::MatrixXd ReferencePinv(const PairTable& t) {
  return Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd>(ReferenceLaplacian(t))
      .pseudoInverse();
}

// Component labels of the positive graph by a plain union-find.
inline std::vector<int> ReferenceComponents(const PairTable& t) {
  const int U = static_cast<int>(t.num_users()), n = U + static_cast<int>(t.num_items());
  std::vector<int> parent(n);
  for (int i = 0; i < n; ++i) parent[i] = i;
  auto find = [&](int x) {
    while (parent[x] != x) x = parent[x] = parent[parent[x]];
    return x;
  };
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    if (t.label[p]) parent[find(t.pair_user[p])] = find(U + t.pair_item[p]);
  }
  std::vector<int> c(n);
  for (int i = 0; i < n; ++i) c[i] = find(i);
  return c;
}

// Reference R per pair (+inf across components).
inline std::vector<double> ReferenceResistance(const PairTable& t) {
  const Eigen::MatrixXd p = ReferencePinv(t);
  const std::vector<int> comp = ReferenceComponents(t);
  const int U = static_cast<int>(t.num_users());
  std::vector<double> r(t.num_pairs());
  for (size_t q = 0; q < t.num_pairs(); ++q) {
    const int a = t.pair_user[q], b = U + t.pair_item[q];
    r[q] = comp[a] != comp[b] ? std::numeric_limits<double>::infinity()
                              : p(a, a) + p(b, b) - 2 * p(a, b);
  }
  return r;
}

// S as a dense matrix over pairs: neighbours share a user or an item.
inline Eigen::MatrixXd LineGraphOperator(const PairTable& t, bool symmetric) {
  const int n = static_cast<int>(t.num_pairs());
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
  for (int p = 0; p < n; ++p) {
    for (int q = 0; q < n; ++q) {
      if (p != q && (t.pair_user[p] == t.pair_user[q] || t.pair_item[p] == t.pair_item[q]))
        a(p, q) = 1;
    }
  }
  const Eigen::VectorXd d = a.rowwise().sum();
  Eigen::MatrixXd s = Eigen::MatrixXd::Zero(n, n);
  for (int p = 0; p < n; ++p) {
    if (d(p) == 0) {
      s(p, p) = 1;  // no neighbours: the pair keeps its value
      continue;
    }
    for (int q = 0; q < n; ++q) {
      if (a(p, q) == 0) continue;
      s(p, q) = symmetric ? 1.0 / std::sqrt(d(p) * d(q)) : 1.0 / d(p);
    }
  }
  return s;
}

// The normalised hardness z an unseen pair (u, i) gets from the stored sketch
// rows (ScoreUnseenPair's first step, core/model/unseen.cc): g = 1 / ‖row_u −
// row_i‖² within a component, 0 across, min-max scaled by the model's range.
inline double UnseenZ(const NodeTable& nt, const UnseenModel& m, size_t u, size_t i) {
  double rs = 0;
  for (int j = 0; j < nt.sketch_dim; ++j)
    rs += std::pow(nt.SketchRow(u)[j] - nt.SketchRow(i)[j], 2);
  const double g = nt.records[u].component == nt.records[i].component ? 1.0 / rs : 0.0;
  return std::clamp((g - m.geff_min) / (m.geff_max - m.geff_min), 0.0, 1.0);
}

}  // namespace graphsieve::testing

#endif  // GRAPHSIEVE_TESTS_MAEC_TOY_GRAPHS_H_
