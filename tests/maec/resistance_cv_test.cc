// The pair sketch's control variate (docs/METHOD.md "Control variate"):
// the identity R = exact part + ‖B(L⁺ − D⁻¹)b‖² against a dense
// pseudo-inverse, the estimator's mean over seeds, its sizing rule and the
// route auto takes with it.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/maec/resistance.h"
#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

// Exact residual ‖B(L⁺ − D⁻¹)b‖² per pair from the dense pseudo-inverse of the
// whole Laplacian (+inf across components), and the exact part per pair.
struct Exact {
  std::vector<double> r, part, residual;
};

Exact ExactSplit(const PairTable& t) {
  const int U = static_cast<int>(t.num_users()), n = U + static_cast<int>(t.num_items());
  const Eigen::MatrixXd l = testing::ReferenceLaplacian(t);
  const Eigen::MatrixXd pinv = testing::ReferencePinv(t);
  const std::vector<double> r = testing::ReferenceResistance(t);
  Exact e;
  e.r = r;
  e.part.assign(t.num_pairs(), 0.0);
  e.residual.assign(t.num_pairs(), 0.0);
  for (size_t p = 0; p < t.num_pairs(); ++p) {
    if (std::isinf(r[p])) continue;
    const int a = t.pair_user[p], b = U + t.pair_item[p];
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n), y = Eigen::VectorXd::Zero(n);
    rhs(a) = 1;
    rhs(b) = -1;
    y(a) = 1 / l(a, a);
    y(b) = -1 / l(b, b);
    const Eigen::VectorXd d = pinv * rhs - y;
    e.residual[p] = d.dot(l * d);  // ‖B d‖² = dᵀ L d
    e.part[p] = ControlVariateExactPart(l(a, a), l(b, b), t.label[p] != 0);
  }
  return e;
}

TEST(ControlVariate, ExactPartPlusExactResidualIsR) {
  // Random graphs with bridges and leaves (sparse positives), a dense one and
  // a power-law one; positive pairs (their own edge in d and w) and negatives.
  for (const ImpressionLog& log :
       {testing::RandomLog(30, 25, 0.3, 0.15, 1), testing::RandomLog(20, 40, 0.6, 0.5, 2),
        testing::PowerLawLog(60, 50, 20.0, 0.3, 3)}) {
    const PairTable t = *BuildPairTable(log, 1);
    const Exact e = ExactSplit(t);
    int checked = 0, positives = 0;
    for (size_t p = 0; p < t.num_pairs(); ++p) {
      if (std::isinf(e.r[p])) continue;
      ++checked;
      positives += t.label[p];
      EXPECT_NEAR(e.part[p] + e.residual[p], e.r[p], 1e-9 * e.r[p]) << "pair " << p;
      EXPECT_GE(e.residual[p], -1e-12);
      EXPECT_GE(e.part[p], 0.0);
    }
    std::printf("%d pairs inside components, %d of them positive\n", checked, positives);
    EXPECT_GT(checked, 30);
    EXPECT_GT(positives, 10);
  }
}

// Pairs inside components of the power-law graph the sketch tests use.
struct PowerLaw {
  PairTable t = *BuildPairTable(testing::PowerLawLog(200, 150, 40.0, 0.3, 7), 2);
  PositiveGraph g = *BuildPositiveGraph(t);
  Exact e = ExactSplit(t);
  std::vector<size_t> inside;
  PowerLaw() {
    for (size_t p = 0; p < t.num_pairs(); ++p) {
      if (!std::isinf(e.r[p])) inside.push_back(p);
    }
  }
  double RmsShare() const {
    double s = 0;
    for (size_t p : inside) s += (e.residual[p] / e.r[p]) * (e.residual[p] / e.r[p]);
    return std::sqrt(s / inside.size());
  }
};

double MedianRelError(const PowerLaw& x, const std::vector<double>& est) {
  std::vector<double> rel;
  for (size_t p : x.inside) rel.push_back(std::abs(est[p] - x.e.r[p]) / x.e.r[p]);
  std::nth_element(rel.begin(), rel.begin() + rel.size() / 2, rel.end());
  return rel[rel.size() / 2];
}

TEST(ControlVariate, MeanOverSeedsIsRAndErrorShrinksWithTheShare) {
  const PowerLaw x;
  ASSERT_GT(x.inside.size(), 1000u);
  constexpr int kSeeds = 60, kDim = 32;
  std::vector<double> mean(x.t.num_pairs(), 0.0);
  double cv_error = 0, plain_error = 0;
  for (int s = 0; s < kSeeds; ++s) {
    ResistanceOptions o;
    o.method = ResistanceMethod::kSketch;
    o.sketch_dim = kDim;
    o.solver_tolerance = 1e-10;
    o.seed = 100 + s;
    const ResistanceResult cv = *ComputeResistance(x.t, x.g, o);
    for (size_t p : x.inside) {
      mean[p] += cv.resistance[p] / kSeeds;
      ASSERT_GE(cv.resistance[p], x.e.part[p] * (1 - 1e-12))
          << "the sketched residual is a squared norm";
    }
    cv_error += MedianRelError(x, cv.resistance) / kSeeds;
    o.pair_sketch_control_variate = false;
    plain_error += MedianRelError(x, ComputeResistance(x.t, x.g, o)->resistance) / kSeeds;
  }
  // Per pair, the mean of 60 estimates deviates from R by about
  // √(2/32/60)·residual ≈ 0.032·residual (seeds shared by all pairs).
  std::vector<double> dev;
  double signed_dev = 0;
  for (size_t p : x.inside) {
    dev.push_back(std::abs(mean[p] - x.e.r[p]) / x.e.residual[p]);
    signed_dev += (mean[p] - x.e.r[p]) / x.e.residual[p] / double(x.inside.size());
  }
  std::nth_element(dev.begin(), dev.begin() + dev.size() / 2, dev.end());
  const double rho = x.RmsShare();
  std::printf(
      "rms residual share %.4f; median |mean - R| / residual %.4f, mean signed %.4f; median rel. "
      "error k=%d: control variate %.4f, plain %.4f\n",
      rho, dev[dev.size() / 2], signed_dev, kDim, cv_error, plain_error);
  EXPECT_LT(dev[dev.size() / 2], 0.1);
  EXPECT_LT(std::abs(signed_dev), 0.05);
  // The JL error now applies to the residual only: ≈ ρ times the plain error.
  EXPECT_LT(cv_error, 2.0 * rho * plain_error);
  EXPECT_GT(cv_error, 0.25 * rho * plain_error);  // "too good" would be a wrong estimator
}

TEST(ControlVariate, SizingRule) {
  ResistanceOptions o;                    // e = 0.022, sketch_dim 64
  EXPECT_EQ(o.PairSketchDim(1.0), 1888);  // 2·(0.6745/0.022)² = 1880 → 32-column blocks
  EXPECT_EQ(o.PairSketchDim(0.5), 480);   // 470 → 480
  EXPECT_EQ(o.PairSketchDim(0.02), 32);   // one distance block (of the 64 node-row columns)
  o.method = ResistanceMethod::kSketch;
  EXPECT_EQ(o.PairSketchDim(1.0), 64);
}

TEST(ControlVariate, AutoMeasuresTheShareAndRoutesByIt) {
  const PowerLaw x;
  ResistanceOptions o;
  o.exact_max_nodes = 10;  // no dense route for the giant component
  o.sketch_dim = 32;
  o.solver_tolerance = 1e-8;
  o.pair_sketch_median_error = 0.05;
  const ResistanceResult r = *ComputeResistance(x.t, x.g, o);
  ASSERT_EQ(r.route, "sketch");
  // ρ estimated from the 32 node-row columns, against the exact rms share.
  const double rho = x.RmsShare();
  std::printf(
      "residual share: estimated %.4f, exact %.4f; pair sketch k = %d; median rel. error %.4f\n",
      r.residual_share, rho, r.pair_sketch_dim, MedianRelError(x, r.resistance));
  EXPECT_GT(r.residual_share, 0.8 * rho);
  EXPECT_LT(r.residual_share, 1.5 * rho);
  EXPECT_EQ(r.pair_sketch_dim, o.PairSketchDim(r.residual_share));
  EXPECT_LT(MedianRelError(x, r.resistance), 1.4 * o.pair_sketch_median_error);
  // Without the control variate the same target needs k for ρ = 1 (384
  // columns), dearer than one-sided on this graph: auto serves it exactly.
  ResistanceOptions plain = o;
  plain.pair_sketch_control_variate = false;
  EXPECT_EQ(plain.PairSketchDim(1.0), 384);
  const ResistanceResult p = *ComputeResistance(x.t, x.g, plain);
  EXPECT_EQ(p.route, "one-sided");
  // A target so tight that even the residual needs more columns than
  // one-sided has solves: exact one-sided again.
  o.pair_sketch_median_error = 0.005;
  const ResistanceResult exact = *ComputeResistance(x.t, x.g, o);
  EXPECT_EQ(exact.route, "one-sided");
  for (size_t q : x.inside) ASSERT_NEAR(exact.resistance[q], x.e.r[q], 1e-5 * x.e.r[q]);
}

}  // namespace
}  // namespace graphsieve
