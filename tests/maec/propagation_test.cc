// The O(pairs) propagation equals iterating an explicit line-graph matrix.
#include "core/maec/propagation.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

using testing::LineGraphOperator;

class Explicit : public ::testing::TestWithParam<bool> {};

TEST_P(Explicit, EqualsLineGraphIteration) {
  const bool symmetric = GetParam();
  // Includes an isolated pair (77, 99) with no neighbours.
  ImpressionLog log = testing::RandomLog(12, 9, 0.45, 0.3, 21);
  log.user_ids.push_back(77);
  log.item_ids.push_back(99);
  log.labels.push_back(0);
  PairTable t = *BuildPairTable(log, 1);
  const Eigen::MatrixXd s = LineGraphOperator(t, symmetric);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> unif(0, 1);
  std::vector<double> x0(t.num_pairs());
  for (double& v : x0) v = unif(rng);
  const Eigen::Map<const Eigen::VectorXd> e0(x0.data(), x0.size());
  const double gamma = 0.6;
  for (int iterations : {1, 2, 7}) {
    Eigen::VectorXd ref = e0;
    for (int i = 0; i < iterations; ++i) ref = (1 - gamma) * e0 + gamma * s * ref;
    PropagationOptions o;
    o.gamma = gamma;
    o.symmetric = symmetric;
    o.tolerance = 1e-300;
    o.max_iterations = iterations;
    std::vector<double> x = x0;
    const std::vector<uint32_t> degrees = NodeDegrees(t);
    PropagationReport rep = Propagate(t, degrees, o, &x);
    EXPECT_EQ(rep.iterations, iterations);
    EXPECT_FALSE(rep.converged);
    for (size_t p = 0; p < x.size(); ++p) EXPECT_NEAR(x[p], ref(p), 1e-12) << p;
  }
}

INSTANTIATE_TEST_SUITE_P(EdgeRuleAndSymmetric, Explicit, ::testing::Bool());

TEST(Propagation, ConvergesToTheFixedPoint) {
  PairTable t = *BuildPairTable(testing::RandomLog(10, 10, 0.5, 0.3, 3), 1);
  const Eigen::MatrixXd s = LineGraphOperator(t, false);
  std::vector<double> x0(t.num_pairs());
  for (size_t p = 0; p < x0.size(); ++p) x0[p] = (p % 5) / 4.0;
  const Eigen::Map<const Eigen::VectorXd> e0(x0.data(), x0.size());
  const double gamma = 0.5;
  // Fixed point: (I − γS) x = (1 − γ) x0.
  const Eigen::MatrixXd a = Eigen::MatrixXd::Identity(s.rows(), s.cols()) - gamma * s;
  const Eigen::VectorXd fixed = a.partialPivLu().solve((1 - gamma) * e0);
  PropagationOptions o;
  o.gamma = gamma;
  o.tolerance = 1e-10;
  o.max_iterations = 200;
  std::vector<double> x = x0;
  PropagationReport rep = Propagate(t, NodeDegrees(t), o, &x);
  EXPECT_TRUE(rep.converged);
  EXPECT_LE(rep.last_change, 1e-10);
  EXPECT_GT(rep.iterations, 5);
  for (size_t p = 0; p < x.size(); ++p) EXPECT_NEAR(x[p], fixed(p), 1e-8);
}

}  // namespace
}  // namespace graphsieve
