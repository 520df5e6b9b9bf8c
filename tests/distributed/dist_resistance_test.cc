// ComputeResistance across ranks (docs/SCALING.md) against one process.
// Started by mpirun on 2 ranks: every rank builds the same power-law table
// and its positive graph, keeps the pairs of its users (user index mod N)
// and runs the distributed routes; every pair's R must equal the
// single-process answer, including the pair sketch's two phases (the
// residual share measured over both ranks' pairs, then the rest of the
// columns) with the control variate.
#include <cmath>
#include <string>
#include <vector>

#include "core/maec/resistance.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/distributed/mpi_test_main.h"
#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

// This rank's pairs (users u with u mod N == rank), same user/item indices;
// `index` maps them back to the whole table.
PairTable Mine(const PairTable& all, std::vector<size_t>* index) {
  PairTable t;
  t.user_ids = all.user_ids;
  t.item_ids = all.item_ids;
  for (size_t p = 0; p < all.num_pairs(); ++p) {
    if (int(all.pair_user[p] % g_comm->size()) != g_comm->rank()) continue;
    index->push_back(p);
    t.pair_user.push_back(all.pair_user[p]);
    t.pair_item.push_back(all.pair_item[p]);
    t.label.push_back(all.label[p]);
    t.instances.push_back(all.instances[p]);
    t.negatives.push_back(all.negatives[p]);
  }
  return t;
}

struct Case {
  const char* name;
  ResistanceMethod method;
  bool control_variate;
  double median_error;
  const char* route;
};

TEST(DistResistanceTest, EveryRouteMatchesOneProcess) {
  ASSERT_EQ(g_comm->size(), 2) << "run under mpirun -np 2";
  const PairTable all = *BuildPairTable(testing::PowerLawLog(200, 150, 40.0, 0.3, 7), 1);
  const PositiveGraph g = *BuildPositiveGraph(all);
  std::vector<size_t> index;
  const PairTable mine = Mine(all, &index);
  // sketch_dim 16: the pair sketch's phase 2 starts inside the first
  // 32-column distance block (the block both phases write).
  for (const Case& c :
       {Case{"auto, control variate", ResistanceMethod::kAuto, true, 0.05, "sketch"},
        Case{"auto, plain", ResistanceMethod::kAuto, false, 0.17, "sketch"},
        Case{"sketch", ResistanceMethod::kSketch, true, 0.05, "sketch"},
        Case{"auto, one-sided", ResistanceMethod::kAuto, true, 0.005, "one-sided"}}) {
    ResistanceOptions o;
    o.method = c.method;
    o.exact_max_nodes = 10;
    o.sketch_dim = 16;
    o.solver_tolerance = 1e-10;
    o.threads = 1;
    o.pair_sketch_control_variate = c.control_variate;
    o.pair_sketch_median_error = c.median_error;
    const ResistanceResult one = *ComputeResistance(all, g, o);
    o.comm = g_comm;
    absl::StatusOr<ResistanceResult> dist = ComputeResistance(mine, g, o);
    ASSERT_TRUE(dist.ok()) << c.name << ": " << dist.status();
    EXPECT_EQ(one.route, c.route) << c.name;
    EXPECT_EQ(dist->route, c.route) << c.name;
    EXPECT_EQ(dist->pair_sketch_dim, one.pair_sketch_dim) << c.name;
    EXPECT_NEAR(dist->residual_share, one.residual_share, 1e-12) << c.name;
    double worst = 0;
    for (size_t i = 0; i < index.size(); ++i) {
      const double a = one.resistance[index[i]], b = dist->resistance[i];
      if (std::isinf(a)) {
        EXPECT_TRUE(std::isinf(b)) << c.name << " pair " << index[i];
        continue;
      }
      worst = std::max(worst, std::abs(a - b) / a);
    }
    double worst_row = 0;
    for (size_t i = 0; i < one.sketch.size(); ++i) {
      worst_row = std::max(worst_row, double(std::abs(one.sketch[i] - dist->sketch[i])));
    }
    std::printf(
        "rank %d, %s: pair sketch k = %d, residual share %.4f; max relative R difference %.3g, "
        "node rows %.3g\n",
        g_comm->rank(), c.name, dist->pair_sketch_dim, dist->residual_share, worst, worst_row);
    EXPECT_LE(worst, 1e-6) << c.name;
    EXPECT_LE(worst_row, 1e-6) << c.name;
  }
  if (g_comm->rank() == 0) {
    EXPECT_GT(index.size(), all.num_pairs() / 4);  // both ranks hold pairs
  }
}

}  // namespace
}  // namespace graphsieve
