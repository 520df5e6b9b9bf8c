// A closed-loop load generator shared by the serving benchmarks
// (graphsieve-bench-server, graphsieve-bench-partitions): `threads` workers
// each call fn(worker, call index) back to back for `seconds`; the result is
// throughput in pairs per second and latency percentiles (docs/SERVER.md).
//
// Thread-safety: fn is called concurrently from `threads` threads.
#ifndef GRAPHSIEVE_BENCH_LOAD_LOOP_H_
#define GRAPHSIEVE_BENCH_LOAD_LOOP_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

namespace graphsieve::bench {

struct LoadPoint {
  double pairs_per_second = 0, p50_ms = 0, p99_ms = 0;
  uint64_t calls = 0, errors = 0;
};

// The q-quantile (0 ≤ q ≤ 1) of v by rank floor(q·n); 0 for an empty v.
inline double Percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0;
  const size_t k = std::min(v.size() - 1, static_cast<size_t>(q * static_cast<double>(v.size())));
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

// fn(int worker, uint64_t n) -> bool (false counts an error) answers one
// call of `batch` pairs; worker w starts its n at w·7919 so that workers
// read different windows of the caller's pool. Latencies in ms.
template <typename Fn>
LoadPoint RunLoad(int threads, double seconds, size_t batch, Fn fn) {
  std::vector<std::vector<double>> lat(threads);
  std::vector<uint64_t> errors(threads, 0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> workers;
  const auto start = std::chrono::steady_clock::now();
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      uint64_t n = static_cast<uint64_t>(t) * 7919;
      while (!stop.load(std::memory_order_relaxed)) {
        const auto a = std::chrono::steady_clock::now();
        if (!fn(t, n++)) errors[t]++;
        lat[t].push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - a)
                .count());
      }
    });
  }
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& w : workers) w.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> all;
  LoadPoint p;
  for (int t = 0; t < threads; ++t) {
    all.insert(all.end(), lat[t].begin(), lat[t].end());
    p.errors += errors[t];
  }
  p.calls = all.size();
  p.pairs_per_second = static_cast<double>((p.calls - p.errors) * batch) / elapsed;
  p.p50_ms = Percentile(all, 0.50);
  p.p99_ms = Percentile(all, 0.99);
  return p;
}

}  // namespace graphsieve::bench

#endif  // GRAPHSIEVE_BENCH_LOAD_LOOP_H_
