// The harmonic extension of a delta (core/offline/delta_records.h) where it is
// exact: a new user attached by one positive to a base item is a fixed point
// of the sweeps, so whatever the number of sweeps its row is the item's base
// row and the item's row stays its base row (the graph is unchanged but for
// the new leaf). Before new nodes started at their neighbours' mean, the
// Jacobi sweeps pulled the item towards zero and oscillated with the sweep
// count, which this test shows for 1, 2 and 3 sweeps.
#include <cmath>
#include <fstream>
#include <memory>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/offline/build_job.h"
#include "core/offline/delta_build.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::graphsieve::testing::ScopedTempDir;

// 200 users over 300 items, 20 impressions each, 1 in 5 positive; returns an
// item with a positive.
uint64_t WriteBaseLog(const std::string& path) {
  std::mt19937_64 rng(3);
  std::ofstream out(path);
  out << "user_id,item_id,label\n";
  uint64_t positive_item = 0;
  for (int u = 0; u < 200; ++u) {
    for (int k = 0; k < 20; ++k) {
      const uint64_t item = (u * 7 + k * 13 + rng() % 5) % 300;
      const bool label = rng() % 5 == 0;
      if (label) positive_item = item;
      out << u << "," << item << "," << label << "\n";
    }
  }
  return positive_item;
}

BuildOptions Options(const std::string& log, const std::string& root) {
  BuildOptions o;
  o.inputs = {log};
  o.snapshot_root = root;
  o.pipeline.sketch_dim = 16;
  o.pipeline.seed = 5;
  o.pipeline.threads = 1;
  return o;
}

// The sketch coordinates the extension moves (the exact slots of the control
// variate layout follow them and are set from the degree).
int ExtendedColumns(const SnapshotReader& base) {
  const nlohmann::json p = nlohmann::json::parse(base.manifest().json).at("parameters");
  const bool cv = p.value("unseen_control_variate", false) && p.value("method", "") == "maec";
  return cv ? p.value("sketch_columns", 0) : base.model().sketch_dim;
}

class NewLeafTest : public ::testing::TestWithParam<int> {};

TEST_P(NewLeafTest, NewUserOnOneBaseItemTakesItsRowAndLeavesItUnchanged) {
  ScopedTempDir dir;
  const std::string base_log = dir.path() + "/base.csv", delta_log = dir.path() + "/delta.csv";
  const std::string root = dir.path() + "/root";
  const uint64_t item = WriteBaseLog(base_log);
  auto base_build = RunBuild(Options(base_log, root), BuildObserver());
  ASSERT_TRUE(base_build.ok()) << base_build.status();
  {
    std::ofstream out(delta_log);
    out << "user_id,item_id,label\n" << 900000 << "," << item << ",1\n";
    for (int k = 0; k < 5; ++k) out << 900000 << "," << (item + 1 + k * 31) % 300 << ",0\n";
  }
  DeltaBuildOptions d;
  d.build = Options(delta_log, root);
  d.sweeps = GetParam();
  auto delta = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(delta.ok()) << delta.status();
  ASSERT_EQ(delta->new_users, 1u);
  ASSERT_EQ(delta->new_positive_edges, 1u);

  auto base = VersionOpener().Open(root, base_build->version, SnapshotReaderOptions());
  auto layered = VersionOpener().Open(root, delta->version, SnapshotReaderOptions());
  ASSERT_TRUE(base.ok()) << base.status();
  ASSERT_TRUE(layered.ok()) << layered.status();
  NodeView base_item, new_item, new_user;
  ASSERT_TRUE((*base)->FindNode(true, item, &base_item));
  ASSERT_TRUE((*layered)->FindNode(true, item, &new_item));
  ASSERT_TRUE((*layered)->FindNode(false, 900000, &new_user));
  ASSERT_EQ(new_user.sketch.size(), base_item.sketch.size());
  const int z = ExtendedColumns(**base);
  ASSERT_GT(z, 0);
  double norm = 0;
  for (int j = 0; j < z; ++j) norm = std::max(norm, std::abs(double(base_item.sketch[j])));
  ASSERT_GT(norm, 0.0);  // a zero row would make the check vacuous
  for (int j = 0; j < z; ++j) {
    EXPECT_NEAR(new_user.sketch[j], base_item.sketch[j], 1e-6 * norm) << "user column " << j;
    EXPECT_NEAR(new_item.sketch[j], base_item.sketch[j], 1e-6 * norm) << "item column " << j;
  }
  EXPECT_EQ(new_user.record.component, base_item.record.component);
}

INSTANTIATE_TEST_SUITE_P(Sweeps, NewLeafTest, ::testing::Values(1, 2, 3),
                         [](const ::testing::TestParamInfo<int>& i) {
                           return absl::StrCat("sweeps", i.param);
                         });

}  // namespace
}  // namespace graphsieve
