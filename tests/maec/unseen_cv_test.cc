// The node rows kept for unseen pairs (docs/METHOD.md "Unseen pairs"): with
// the control variate a row is [z'_v, √(1/d_v) in its side's slot], so the
// server's unchanged ‖row_u − row_v‖² is 1/d_u + 1/d_v + ‖z'_u − z'_v‖² for a
// user–item pair without a positive edge. Checked against a dense
// pseudo-inverse through ScoreUnseenPair itself, on both node-row paths
// (dense components and PCG components).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>
#include <utility>
#include <vector>

#include "core/maec/pipeline_options.h"
#include "core/maec/resistance.h"
#include "core/model/unseen.h"
#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

// A model under which ScoreUnseenPair returns G/1000 for G = 1/‖row_u − row_v‖²
// (no propagation, floor rule with ρ = 1 and a negligible floor), so R can be
// read back from the scorer.
UnseenModel ReadBackModel(int row_dim) {
  UnseenModel m;
  m.method = static_cast<int>(Method::kMaec);
  m.floor = 1e-12;
  m.rho = 1.0;
  m.geff_min = 0.0;
  m.geff_max = 1000.0;
  m.uncertainty_propagation = false;
  m.score_propagation = false;
  m.sketch_dim = row_dim;
  return m;
}

struct Graph {
  PairTable t = *BuildPairTable(testing::PowerLawLog(200, 150, 40.0, 0.3, 7), 2);
  PositiveGraph g = *BuildPositiveGraph(t);
  Eigen::MatrixXd pinv = testing::ReferencePinv(t);
  std::vector<std::pair<uint32_t, uint32_t>>
      unseen;  // (user node, item node): same component, no edge
  Graph() {
    std::set<std::pair<uint32_t, uint32_t>> edges;
    const uint32_t U = g.num_users;
    for (size_t p = 0; p < t.num_pairs(); ++p) {
      if (t.label[p]) edges.insert({t.pair_user[p], U + t.pair_item[p]});
    }
    for (uint32_t u = 0; u < U; ++u) {
      for (uint32_t v = U; v < g.num_nodes(); ++v) {
        if (g.degree(u) > 0 && g.component[u] == g.component[v] && !edges.count({u, v}))
          unseen.push_back({u, v});
      }
    }
  }
  double ExactR(uint32_t u, uint32_t v) const { return pinv(u, u) + pinv(v, v) - 2.0 * pinv(u, v); }
  NodeView View(const ResistanceResult& r, uint32_t node) const {
    NodeView view;
    view.record.component = g.component[node];
    view.sketch = absl::MakeConstSpan(r.sketch.data() + size_t(node) * r.sketch_dim, r.sketch_dim);
    return view;
  }
  // R as the unseen-pair scorer sees it.
  double ScorerR(const ResistanceResult& r, uint32_t u, uint32_t v) const {
    return 1.0 / (1000.0 * ScoreUnseenPair(View(r, u), View(r, v), ReadBackModel(r.sketch_dim)));
  }
  double MedianRelError(const ResistanceResult& r) const {
    std::vector<double> rel;
    for (const auto& [u, v] : unseen)
      rel.push_back(std::abs(ScorerR(r, u, v) - ExactR(u, v)) / ExactR(u, v));
    std::nth_element(rel.begin(), rel.begin() + rel.size() / 2, rel.end());
    return rel[rel.size() / 2];
  }
};

ResistanceOptions RowsOnly(int k, uint64_t seed, bool cv, bool pcg) {
  ResistanceOptions o;
  o.sketch_dim = k;
  o.seed = seed;
  o.unseen_control_variate = cv;
  o.compute_pairs = false;
  o.solver_tolerance = 1e-10;
  if (pcg) o.method = ResistanceMethod::kSketch;  // node rows from PCG columns, not dense L⁺
  return o;
}

TEST(UnseenControlVariate, RowsHoldTheExactPartAndTheResidualSketch) {
  const Graph x;
  ASSERT_GT(x.unseen.size(), 2000u);
  const int k = 32;
  const ResistanceResult cv = *ComputeResistance(x.t, x.g, RowsOnly(k, 5, true, false));
  const ResistanceResult plain = *ComputeResistance(x.t, x.g, RowsOnly(k, 5, false, false));
  ASSERT_EQ(cv.sketch_dim, k + 2);
  ASSERT_EQ(plain.sketch_dim, k);
  ASSERT_EQ(cv.sketch.size(), size_t(x.g.num_nodes()) * (k + 2));
  for (uint32_t v = 0; v < x.g.num_nodes(); ++v) {
    const float* row = cv.sketch.data() + size_t(v) * (k + 2);
    const double d = x.g.degree(v);
    const double expect_user = v < x.g.num_users && d > 0 ? std::sqrt(1.0 / d) : 0.0;
    const double expect_item = v >= x.g.num_users && d > 0 ? std::sqrt(1.0 / d) : 0.0;
    EXPECT_NEAR(row[k], expect_user, 1e-7) << "node " << v;
    EXPECT_NEAR(row[k + 1], expect_item, 1e-7) << "node " << v;
  }
  // ‖row_u − row_v‖² = 1/d_u + 1/d_v + ‖z'_u − z'_v‖², and with the exact
  // residual in place of its sketch the identity gives R exactly.
  for (size_t i = 0; i < x.unseen.size(); i += 37) {
    const auto [u, v] = x.unseen[i];
    const float* ru = cv.sketch.data() + size_t(u) * (k + 2);
    const float* rv = cv.sketch.data() + size_t(v) * (k + 2);
    double all = 0, head = 0;
    for (int j = 0; j < k + 2; ++j) all += (double(ru[j]) - rv[j]) * (double(ru[j]) - rv[j]);
    for (int j = 0; j < k; ++j) head += (double(ru[j]) - rv[j]) * (double(ru[j]) - rv[j]);
    const double part = ControlVariateExactPart(x.g.degree(u), x.g.degree(v), false);
    EXPECT_NEAR(all - head, part, 1e-6 * part);
    Eigen::VectorXd y = Eigen::VectorXd::Zero(x.g.num_nodes()), b = y;
    b(u) = 1;
    b(v) = -1;
    y(u) = 1.0 / x.g.degree(u);
    y(v) = -1.0 / x.g.degree(v);
    const Eigen::VectorXd dlt = x.pinv * b - y;
    double residual = 0;  // ‖B(L⁺ − D⁻¹)b‖² = Σ over edges of the difference squared
    for (uint32_t a = 0; a < x.g.num_users; ++a) {
      for (uint64_t e = x.g.offsets[a]; e < x.g.offsets[a + 1]; ++e) {
        residual += std::pow(dlt(a) - dlt(x.g.neighbors[e]), 2);
      }
    }
    EXPECT_NEAR(part + residual, x.ExactR(u, v), 1e-8 * x.ExactR(u, v)) << "pair " << u << "," << v;
    EXPECT_NEAR(x.ScorerR(cv, u, v), all, 1e-5 * all) << "the scorer uses every stored coordinate";
  }
}

TEST(UnseenControlVariate, ScorerErrorIsMuchSmallerThanWithPlainRows) {
  const Graph x;
  for (bool pcg : {false, true}) {
    double cv_sum = 0, plain_sum = 0;
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      const double cv =
          x.MedianRelError(*ComputeResistance(x.t, x.g, RowsOnly(32, seed, true, pcg)));
      const double plain =
          x.MedianRelError(*ComputeResistance(x.t, x.g, RowsOnly(32, seed, false, pcg)));
      std::printf(
          "%s rows, seed %d: median rel. error of R over %zu unseen pairs, k = 32: control variate "
          "%.4f, "
          "plain %.4f\n",
          pcg ? "PCG" : "dense", int(seed), x.unseen.size(), cv, plain);
      EXPECT_LT(cv, 0.5 * plain) << "seed " << seed;
      cv_sum += cv;
      plain_sum += plain;
    }
    EXPECT_LT(cv_sum, 0.5 * plain_sum);
  }
}

TEST(UnseenControlVariate, DensePcgAndPlainRowsAgreeWhereTheyShould) {
  const Graph x;
  const ResistanceResult dense = *ComputeResistance(x.t, x.g, RowsOnly(16, 3, true, false));
  const ResistanceResult pcg = *ComputeResistance(x.t, x.g, RowsOnly(16, 3, true, true));
  ASSERT_EQ(dense.sketch.size(), pcg.sketch.size());
  const auto pcg_solves = [](const ResistanceResult& r) {
    return std::count_if(r.solves.begin(), r.solves.end(),
                         [](const SolveSummary& s) { return s.method == "pcg-sketch"; });
  };
  ASSERT_EQ(pcg_solves(dense), 0);
  ASSERT_GT(pcg_solves(pcg), 0) << "the PCG path must write the rows under test";
  for (size_t i = 0; i < dense.sketch.size(); ++i) {
    ASSERT_NEAR(dense.sketch[i], pcg.sketch[i], 1e-4 + 1e-4 * std::abs(dense.sketch[i]))
        << "float " << i;
  }
  // A node without a positive edge is a component of its own: every unseen
  // pair with it scores exactly as with the plain rows (conductance 0).
  const ResistanceResult plain = *ComputeResistance(x.t, x.g, RowsOnly(16, 3, false, false));
  int isolated = 0;
  for (uint32_t u = 0; u < x.g.num_users; ++u) {
    if (x.g.degree(u) > 0) continue;
    ++isolated;
    for (uint32_t v = x.g.num_users; v < x.g.num_nodes(); v += 7) {
      EXPECT_EQ(
          ScoreUnseenPair(x.View(dense, u), x.View(dense, v), ReadBackModel(dense.sketch_dim)),
          ScoreUnseenPair(x.View(plain, u), x.View(plain, v), ReadBackModel(plain.sketch_dim)));
    }
  }
  std::printf("%d users without a positive edge\n", isolated);
  EXPECT_GT(isolated, 0);
}

// The scorer's ‖row_u − row_v‖² sums in four running sums with a tail
// (core/model/unseen.cc): every element counts once, for any row length.
// A pair of rows differing in one element j reads back d_j² exactly; random
// rows read back the plain double sum to the float output's precision.
TEST(UnseenRowDistance, EveryElementCountsOnceForAnyRowLength) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> value(-0.5f, 0.5f);
  for (int k : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 66}) {
    std::vector<float> a(k), b(k);
    for (int j = 0; j < k; ++j) a[j] = value(rng);
    const UnseenModel m = ReadBackModel(k);
    NodeView u, v;
    u.sketch = a;
    v.sketch = b;
    for (int j = 0; j < k; ++j) {
      b = a;
      b[j] += 0.25f;  // the only difference; double(b[j]) - a[j] is exact
      const double d = double(b[j]) - a[j];
      EXPECT_NEAR(1.0 / (1000.0 * ScoreUnseenPair(u, v, m)), d * d, 1e-6 * d * d)
          << "row length " << k << ", element " << j;
    }
    // Every element at least 0.1 apart, so R stays inside the read-back range.
    for (int j = 0; j < k; ++j) b[j] = a[j] + 0.1f + std::abs(value(rng));
    double plain = 0.0;
    for (int j = 0; j < k; ++j) plain += (double(a[j]) - b[j]) * (double(a[j]) - b[j]);
    EXPECT_NEAR(1.0 / (1000.0 * ScoreUnseenPair(u, v, m)), plain, 1e-6 * plain)
        << "row length " << k;
  }
}

}  // namespace
}  // namespace graphsieve
