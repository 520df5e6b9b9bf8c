// Test access to BlockPool's hooks (core/serving/block_pool.h), which the
// shipped server leaves empty.
#ifndef GRAPHSIEVE_TESTS_SERVING_BLOCK_POOL_TEST_ACCESS_H_
#define GRAPHSIEVE_TESTS_SERVING_BLOCK_POOL_TEST_ACCESS_H_

#include <functional>
#include <utility>

#include "absl/synchronization/mutex.h"
#include "core/serving/block_pool.h"

namespace graphsieve {

class BlockPoolTestAccess {
 public:
  // Set before the pool's first TryRun. `helper_before_claims` runs on a
  // helper each time it wakes for a call, before it claims a block. With
  // `caller_waits_for_helper` the caller claims nothing until a helper has
  // claimed a block.
  static void SetHooks(BlockPool& pool, std::function<void()> helper_before_claims,
                       bool caller_waits_for_helper) {
    absl::MutexLock lock(&pool.mu_);  // publishes the hooks to helpers that wake later
    pool.helper_before_claims_ = std::move(helper_before_claims);
    pool.caller_waits_for_helper_ = caller_waits_for_helper;
  }
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_TESTS_SERVING_BLOCK_POOL_TEST_ACCESS_H_
