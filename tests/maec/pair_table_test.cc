// BuildPairTable: collapsing, ordering, counts, pilot means, bad input.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "core/maec/pair_table.h"
#include "tests/maec/toy_graphs.h"

namespace graphsieve {
namespace {

TEST(PairTable, CollapsesDuplicatesAndSortsByIds) {
  ImpressionLog log =
      testing::MakeLog({{9, 5, 0}, {3, 7, 0}, {9, 5, 1}, {3, 2, 0}, {9, 5, 0}, {3, 7, 0}});
  log.pilot_scores = {0.1f, 0.2f, 0.4f, 0.3f, 0.7f, 0.6f};
  for (int threads : {1, 2}) {
    PairTable t = *BuildPairTable(log, threads);
    EXPECT_EQ(t.user_ids, (std::vector<uint64_t>{3, 9}));
    EXPECT_EQ(t.item_ids, (std::vector<uint64_t>{2, 5, 7}));
    ASSERT_EQ(t.num_pairs(), 3u);
    // (3,2), (3,7), (9,5)
    EXPECT_EQ(t.pair_user, (std::vector<uint32_t>{0, 0, 1}));
    EXPECT_EQ(t.pair_item, (std::vector<uint32_t>{0, 2, 1}));
    EXPECT_EQ(t.label, (std::vector<uint8_t>{0, 0, 1}));
    EXPECT_EQ(t.instances, (std::vector<uint32_t>{1, 2, 3}));
    EXPECT_EQ(t.negatives, (std::vector<uint32_t>{1, 2, 2}));
    EXPECT_NEAR(t.pilot_mean[1], 0.4f, 1e-6);
    EXPECT_NEAR(t.pilot_mean[2], 0.4f, 1e-6);
    EXPECT_EQ(t.total_instances, 6u);
    EXPECT_EQ(t.total_negatives, 5u);
  }
}

TEST(PairTable, RandomLogCountsAddUp) {
  ImpressionLog log = testing::RandomLog(50, 40, 0.5, 0.1, 11);
  PairTable a = *BuildPairTable(log, 1), b = *BuildPairTable(log, 2);
  EXPECT_EQ(a.pair_item, b.pair_item);
  uint64_t inst = 0, pos_instances = 0;
  for (size_t p = 0; p < a.num_pairs(); ++p) {
    inst += a.instances[p];
    if (p > 0) {
      const bool ordered =
          a.pair_user[p - 1] < a.pair_user[p] ||
          (a.pair_user[p - 1] == a.pair_user[p] && a.pair_item[p - 1] < a.pair_item[p]);
      ASSERT_TRUE(ordered) << p;
    }
    EXPECT_EQ(a.label[p], a.negatives[p] < a.instances[p] ? 1 : 0);
  }
  for (uint8_t l : log.labels) pos_instances += l;
  EXPECT_EQ(inst, log.size());
  EXPECT_EQ(a.total_negatives, log.size() - pos_instances);
}

TEST(PairTable, BadInputIsNamed) {
  ImpressionLog empty;
  EXPECT_THAT(std::string(BuildPairTable(empty, 1).status().message()),
              ::testing::HasSubstr("empty"));
  ImpressionLog ragged = testing::MakeLog({{1, 2, 0}});
  ragged.item_ids.push_back(3);
  EXPECT_THAT(std::string(BuildPairTable(ragged, 1).status().message()),
              ::testing::HasSubstr("item_ids 2"));
  ImpressionLog label = testing::MakeLog({{1, 2, 0}, {1, 3, 2}});
  EXPECT_THAT(std::string(BuildPairTable(label, 1).status().message()),
              ::testing::HasSubstr("instance 1 has label 2"));
  ImpressionLog pilot = testing::MakeLog({{1, 2, 0}});
  pilot.pilot_scores = {1.5f};
  EXPECT_THAT(std::string(BuildPairTable(pilot, 1).status().message()),
              ::testing::HasSubstr("pilot score"));
  EXPECT_FALSE(BuildPairTable(testing::MakeLog({{1, 2, 0}}), 0).ok());
}

}  // namespace
}  // namespace graphsieve
