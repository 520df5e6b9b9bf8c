// BlockPool: every block runs exactly once, helpers take part, the caller
// never waits for a helper that has not claimed a block, one call at a time
// gets the helpers. The ordering is held with hooks and notifications, not
// timers.
#include "core/serving/block_pool.h"

#include <atomic>
#include <memory>
#include <vector>

#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"
#include "tests/serving/block_pool_test_access.h"

namespace graphsieve {
namespace {

std::vector<int> Counts(const std::vector<std::unique_ptr<std::atomic<int>>>& runs) {
  std::vector<int> out;
  for (const auto& r : runs) out.push_back(r->load());
  return out;
}

std::vector<std::unique_ptr<std::atomic<int>>> Zeros(uint32_t blocks) {
  std::vector<std::unique_ptr<std::atomic<int>>> runs;
  for (uint32_t b = 0; b < blocks; ++b) runs.push_back(std::make_unique<std::atomic<int>>(0));
  return runs;
}

TEST(BlockPoolTest, EveryBlockRunsOnceAndAHelperTakesPart) {
  BlockPool pool(/*helpers=*/1);
  BlockPoolTestAccess::SetHooks(pool, /*helper_before_claims=*/nullptr,
                                /*caller_waits_for_helper=*/true);
  for (int call = 0; call < 20; ++call) {
    const uint32_t blocks = 2 + call * 7;
    auto runs = Zeros(blocks);
    const uint64_t before = pool.helper_blocks();
    ASSERT_TRUE(pool.TryRun(blocks, [&](uint32_t b, bool) { runs[b]->fetch_add(1); }));
    EXPECT_EQ(Counts(runs), std::vector<int>(blocks, 1)) << "call " << call;
    EXPECT_GE(pool.helper_blocks(), before + 1) << "call " << call;
  }
}

TEST(BlockPoolTest, TheCallerFinishesAloneWhileTheHelperIsHeld) {
  BlockPool pool(/*helpers=*/1);
  absl::Notification helper_woke, release_helper;
  std::atomic<bool> hold{true};
  BlockPoolTestAccess::SetHooks(
      pool,
      [&] {
        if (!hold.load()) return;
        helper_woke.Notify();
        release_helper.WaitForNotification();
      },
      /*caller_waits_for_helper=*/false);
  const uint32_t blocks = 9;
  auto runs = Zeros(blocks);
  ASSERT_TRUE(pool.TryRun(blocks, [&](uint32_t b, bool) {
    // The helper is woken before any block runs; it parks in its hook before
    // claiming, so every block is the caller's.
    helper_woke.WaitForNotification();
    runs[b]->fetch_add(1);
  }));
  EXPECT_EQ(Counts(runs), std::vector<int>(blocks, 1));
  EXPECT_EQ(pool.helper_blocks(), 0u) << "the held helper claimed a block";
  hold.store(false);
  release_helper.Notify();  // it finds the call over and claims nothing of it

  auto again = Zeros(blocks);
  ASSERT_TRUE(pool.TryRun(blocks, [&](uint32_t b, bool) { again[b]->fetch_add(1); }));
  EXPECT_EQ(Counts(again), std::vector<int>(blocks, 1));
  EXPECT_EQ(Counts(runs), std::vector<int>(blocks, 1)) << "a late helper re-ran a finished call";
}

TEST(BlockPoolTest, OneCallAtATimeGetsTheHelpers) {
  BlockPool pool(/*helpers=*/1);
  std::atomic<int> nested_refused{0}, outer_runs{0};
  ASSERT_TRUE(pool.TryRun(4, [&](uint32_t, bool) {
    outer_runs.fetch_add(1);
    bool ran = false;
    if (!pool.TryRun(3, [&](uint32_t, bool) { ran = true; }) && !ran) nested_refused.fetch_add(1);
  }));
  EXPECT_EQ(outer_runs.load(), 4);
  EXPECT_EQ(nested_refused.load(), 4) << "a second call got the helpers while the first had them";
}

TEST(BlockPoolTest, NoHelpersOrOneBlockRunsNothing) {
  bool ran = false;
  BlockPool none(/*helpers=*/0);
  EXPECT_FALSE(none.TryRun(8, [&](uint32_t, bool) { ran = true; }));
  BlockPool one(/*helpers=*/1);
  EXPECT_FALSE(one.TryRun(1, [&](uint32_t, bool) { ran = true; }));
  EXPECT_FALSE(one.TryRun(0x10000, [&](uint32_t, bool) { ran = true; }));
  EXPECT_FALSE(ran);
  EXPECT_EQ(none.helpers(), 0);
  EXPECT_EQ(one.helpers(), 1);
}

TEST(BlockPoolTest, SeveralHelpersShareTheBlocks) {
  BlockPool pool(/*helpers=*/3);
  BlockPoolTestAccess::SetHooks(pool, nullptr, /*caller_waits_for_helper=*/true);
  const uint32_t blocks = 500;
  auto runs = Zeros(blocks);
  ASSERT_TRUE(pool.TryRun(blocks, [&](uint32_t b, bool) { runs[b]->fetch_add(1); }));
  EXPECT_EQ(Counts(runs), std::vector<int>(blocks, 1));
  EXPECT_GE(pool.helper_blocks(), 1u);
}

}  // namespace
}  // namespace graphsieve
