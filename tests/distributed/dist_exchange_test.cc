// core/offline/dist_exchange.h's ExchangeRowsByUser on 2 ranks against the rows
// one process would hold: every rank must end with exactly the rows of its
// users (PartitionOfUser), from rank 0's rows first then rank 1's, each in
// its file order — whatever the round size (one row per round, a few, all).
// Started by mpirun on 2 ranks; every rank builds the same global log and
// keeps its own half, as ReadMyFiles would.
#include <cstdint>
#include <vector>

#include "core/io/partition.h"
#include "core/offline/dist_exchange.h"
#include "gtest/gtest.h"
#include "tests/distributed/mpi_test_main.h"

namespace graphsieve {
namespace {

struct Row {
  uint64_t user, item;
  uint8_t label;
  float pilot;
  bool operator==(const Row& o) const {
    return user == o.user && item == o.item && label == o.label && pilot == o.pilot;
  }
};

// Rank r's input rows: uneven counts (rank 1 holds more), repeated users.
std::vector<Row> InputOf(int rank, size_t n) {
  std::vector<Row> rows;
  for (size_t i = 0; i < n + 7 * rank; ++i) {
    const uint64_t user = (i * 7919 + rank * 104729) % 53;
    rows.push_back({user, 1000 * rank + i, uint8_t(i % 3 == 0), float(i) + 0.25f * rank});
  }
  return rows;
}

ImpressionLog LogOf(const std::vector<Row>& rows, bool pilot) {
  ImpressionLog log;
  for (const Row& r : rows) {
    log.user_ids.push_back(r.user);
    log.item_ids.push_back(r.item);
    log.labels.push_back(r.label);
    if (pilot) log.pilot_scores.push_back(r.pilot);
  }
  return log;
}

void ExpectExchanged(size_t n, size_t rows_per_round, bool pilot) {
  const int me = g_comm->rank(), size = g_comm->size();
  std::vector<Row> expected;  // rank order, file order, only my users
  for (int r = 0; r < size; ++r) {
    for (const Row& row : InputOf(r, n)) {
      if (PartitionOfUser(row.user, size) == uint32_t(me)) expected.push_back(row);
    }
  }
  ImpressionLog log = LogOf(InputOf(me, n), pilot);
  dist_internal::ExchangeRowsByUser(*g_comm, &log, rows_per_round);
  ASSERT_EQ(log.size(), expected.size()) << "rows_per_round " << rows_per_round;
  ASSERT_EQ(log.pilot_scores.size(), pilot ? expected.size() : 0u);
  for (size_t k = 0; k < expected.size(); ++k) {
    const float score = pilot ? log.pilot_scores[k] : expected[k].pilot;
    const Row got{log.user_ids[k], log.item_ids[k], log.labels[k], score};
    EXPECT_EQ(got, expected[k]) << "row " << k << ", rows_per_round " << rows_per_round;
  }
}

TEST(DistExchangeTest, EveryRankHoldsItsUsersRowsInRankThenFileOrder) {
  ASSERT_EQ(g_comm->size(), 2) << "run under mpirun -np 2";
  for (size_t per_round : {size_t{1}, size_t{3}, size_t{64}, size_t{1} << 20}) {
    ExpectExchanged(200, per_round, /*pilot=*/true);
    ExpectExchanged(200, per_round, /*pilot=*/false);
  }
}

TEST(DistExchangeTest, ARankWithoutRowsStillReceivesItsUsers) {
  ASSERT_EQ(g_comm->size(), 2) << "run under mpirun -np 2";
  const int me = g_comm->rank();
  // Only rank 1 read rows (with pilot scores); rank 0 read nothing.
  const std::vector<Row> rows = InputOf(1, 40);
  ImpressionLog log = me == 1 ? LogOf(rows, true) : ImpressionLog();
  dist_internal::ExchangeRowsByUser(*g_comm, &log, 5);
  std::vector<Row> expected;
  for (const Row& r : rows) {
    if (PartitionOfUser(r.user, 2) == uint32_t(me)) expected.push_back(r);
  }
  ASSERT_EQ(log.size(), expected.size());
  ASSERT_EQ(log.pilot_scores.size(), expected.size());  // pilot is known on every rank
  for (size_t k = 0; k < expected.size(); ++k) {
    EXPECT_EQ((Row{log.user_ids[k], log.item_ids[k], log.labels[k], log.pilot_scores[k]}),
              expected[k])
        << k;
  }
}

}  // namespace
}  // namespace graphsieve
