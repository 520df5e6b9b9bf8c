// Helper threads that take blocks of one call's work while that call is the
// only one being scored, so a lone batch uses the cores the protocol leaves
// idle (docs/SERVER.md "A lone call on both cores").
//
// The caller and the helpers claim blocks from one atomic word (the call's
// generation, its block count and the next block), so the caller never waits
// for a helper to wake: when no helper is free in time the caller runs every
// block itself and TryRun costs one wake-up. It waits only for blocks a helper
// has already claimed.
//
// Thread-safety: TryRun may be called from any thread; one call at a time
// gets the helpers, the others are told to run inline (false).
#ifndef GRAPHSIEVE_CORE_SERVING_BLOCK_POOL_H_
#define GRAPHSIEVE_CORE_SERVING_BLOCK_POOL_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"

namespace graphsieve {

class BlockPool {
 public:
  // `helpers` threads (0 = none: TryRun always returns false).
  explicit BlockPool(int helpers);
  ~BlockPool();  // stops and joins the helpers
  BlockPool(const BlockPool&) = delete;
  BlockPool& operator=(const BlockPool&) = delete;

  // Runs fn(b, on_helper) once for every block b in [0, blocks) on this
  // thread (on_helper false) and on the helpers (true), and returns true when
  // all have run. False, running nothing,
  // when there are no helpers, fewer than two blocks, or another call has the
  // helpers; the caller then does the work itself. fn must be safe to run
  // concurrently on distinct blocks.
  // REQUIRES: blocks < 65536.
  bool TryRun(uint32_t blocks, absl::FunctionRef<void(uint32_t block, bool on_helper)> fn);

  int helpers() const { return static_cast<int>(threads_.size()); }
  // Blocks run by helpers since construction (metrics, tests).
  uint64_t helper_blocks() const { return helper_blocks_.load(std::memory_order_relaxed); }

 private:
  // Sets helper_before_claims_ and caller_waits_for_helper_ (tests,
  // tests/serving/block_pool_test_access.h).
  friend class BlockPoolTestAccess;

  // Claims and runs one block of call `generation`; false when none is left.
  bool RunOne(uint32_t generation, bool on_helper);
  void HelperLoop();

  std::vector<std::thread> threads_;
  // generation << 32 | blocks << 16 | next block.
  std::atomic<uint64_t> claim_{0};
  std::atomic<uint32_t> blocks_done_{0};
  std::atomic<bool> busy_{false};
  std::atomic<uint64_t> helper_blocks_{0};
  // The running call's block function; read only by whoever claimed a block
  // of its generation, which the call outlives.
  const absl::FunctionRef<void(uint32_t, bool)>* fn_ = nullptr;
  uint32_t generation_ = 0;  // written by the caller holding busy_

  absl::Mutex mu_;
  absl::CondVar wake_;  // a new call (wake_generation_) or stop_
  uint32_t wake_generation_ ABSL_GUARDED_BY(mu_) = 0;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;

  // Empty and false in the shipped server; a test sets them before the first
  // call (BlockPoolTestAccess), constant after. `helper_before_claims_` runs
  // on a helper each time it wakes for a call, before it claims a block (a
  // test holds it there to see the caller finish alone). With
  // `caller_waits_for_helper_` the caller claims nothing until a helper has
  // claimed a block, so a test knows both threads took part.
  std::function<void()> helper_before_claims_ ABSL_GUARDED_BY(mu_);
  bool caller_waits_for_helper_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SERVING_BLOCK_POOL_H_
