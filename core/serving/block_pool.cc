#include "core/serving/block_pool.h"

#include <utility>

namespace graphsieve {
namespace {

constexpr uint64_t Pack(uint32_t generation, uint32_t blocks, uint32_t next) {
  return (static_cast<uint64_t>(generation) << 32) | (static_cast<uint64_t>(blocks) << 16) | next;
}

// Spins briefly (a helper's block takes microseconds), then yields, so a
// helper that lost its core does not hold the caller's core too.
template <typename Done>
void WaitUntil(Done done) {
  for (int spins = 0; !done(); ++spins) {
    if (spins < 4096) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      std::this_thread::yield();
    }
  }
}

}  // namespace

BlockPool::BlockPool(int helpers) {
  for (int i = 0; i < helpers; ++i) threads_.emplace_back([this] { HelperLoop(); });
}

BlockPool::~BlockPool() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  wake_.SignalAll();
  for (std::thread& t : threads_) t.join();
}

bool BlockPool::RunOne(uint32_t generation, bool on_helper) {
  uint64_t c = claim_.load(std::memory_order_acquire);
  for (;;) {
    const uint32_t blocks = static_cast<uint32_t>(c >> 16) & 0xffffu;
    if (static_cast<uint32_t>(c >> 32) != generation || (c & 0xffffu) >= blocks) return false;
    if (claim_.compare_exchange_weak(c, c + 1, std::memory_order_acq_rel)) break;
  }
  (*fn_)(static_cast<uint32_t>(c & 0xffffu), on_helper);
  if (on_helper) helper_blocks_.fetch_add(1, std::memory_order_relaxed);
  blocks_done_.fetch_add(1, std::memory_order_acq_rel);
  return true;
}

bool BlockPool::TryRun(uint32_t blocks, absl::FunctionRef<void(uint32_t, bool)> fn) {
  if (threads_.empty() || blocks < 2 || blocks > 0xffffu) return false;
  bool expected = false;
  if (!busy_.compare_exchange_strong(expected, true, std::memory_order_acquire)) return false;
  fn_ = &fn;
  blocks_done_.store(0, std::memory_order_relaxed);
  if (++generation_ == 0) ++generation_;  // 0 is the helpers' "seen nothing yet"
  const uint32_t generation = generation_;
  claim_.store(Pack(generation, blocks, 0), std::memory_order_release);
  bool wait_for_helper;
  {
    absl::MutexLock lock(&mu_);
    wake_generation_ = generation;
    wait_for_helper = caller_waits_for_helper_;
  }
  wake_.SignalAll();
  if (wait_for_helper) {
    WaitUntil([&] { return (claim_.load(std::memory_order_acquire) & 0xffffu) > 0; });
  }
  while (RunOne(generation, /*on_helper=*/false)) {
  }
  // Only blocks a helper claimed are left; each takes microseconds.
  WaitUntil([&] { return blocks_done_.load(std::memory_order_acquire) == blocks; });
  fn_ = nullptr;
  busy_.store(false, std::memory_order_release);
  return true;
}

void BlockPool::HelperLoop() {
  uint32_t seen = 0;
  for (;;) {
    const std::function<void()>* hook = nullptr;
    {
      absl::MutexLock lock(&mu_);
      while (!stop_ && wake_generation_ == seen) wake_.Wait(&mu_);
      if (stop_) return;
      seen = wake_generation_;
      if (helper_before_claims_) hook = &helper_before_claims_;
    }
    if (hook != nullptr) (*hook)();
    while (RunOne(seen, /*on_helper=*/true)) {
    }
  }
}

}  // namespace graphsieve
