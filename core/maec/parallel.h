// A minimal fork-join helper for the MA-EC numerics: runs fn(thread, begin,
// end) over [0, n) split into `threads` contiguous chunks, or pulls task
// indices from a shared counter. No thread pool: the stages are few and long.
//
// Thread-safety: fn runs concurrently on disjoint ranges/tasks; it must not
// write shared state except through its own range.
#ifndef GRAPHSIEVE_CORE_MAEC_PARALLEL_H_
#define GRAPHSIEVE_CORE_MAEC_PARALLEL_H_

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <thread>
#include <vector>

namespace graphsieve {
namespace maec_internal {

// Calls fn(t, begin, end) for t in [0, threads) on contiguous chunks of [0, n).
template <typename Fn>
void ParallelChunks(size_t n, int threads, Fn&& fn) {
  const size_t t_count = std::max<size_t>(1, std::min<size_t>(threads, n == 0 ? 1 : n));
  if (t_count == 1) {
    fn(0, size_t{0}, n);
    return;
  }
  std::vector<std::thread> pool;
  pool.reserve(t_count - 1);
  for (size_t t = 1; t < t_count; ++t) {
    pool.emplace_back([&, t] { fn(static_cast<int>(t), n * t / t_count, n * (t + 1) / t_count); });
  }
  fn(0, size_t{0}, n / t_count);
  for (auto& th : pool) th.join();
}

// Calls fn(t, task) for every task in [0, tasks), dynamically balanced.
template <typename Fn>
void ParallelTasks(size_t tasks, int threads, Fn&& fn) {
  std::atomic<size_t> next{0};
  const int t_count = static_cast<int>(std::max<size_t>(1, std::min<size_t>(threads, tasks)));
  auto worker = [&](int t) {
    for (size_t i = next.fetch_add(1); i < tasks; i = next.fetch_add(1)) fn(t, i);
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < t_count; ++t) pool.emplace_back(worker, t);
  worker(0);
  for (auto& th : pool) th.join();
}

}  // namespace maec_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_PARALLEL_H_
