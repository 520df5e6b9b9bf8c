// Traffic rates computed by the server over a sliding window, so the dashboard
// shows numbers on its first render (no client-side deltas between two polls):
// a background thread samples the counters every `period_seconds` and keeps
// `history_seconds` of samples; Summarise() turns them into per-second rates
// over the last `window_seconds`, latency percentiles from the histogram's
// bucket deltas over the same window, and a per-sample series for the
// sparkline.
//
// Thread-safety: all public methods are thread-safe. The read function runs on
// the sampler thread and must be thread-safe itself.
#ifndef GRAPHSIEVE_SERVER_TRAFFIC_WINDOW_H_
#define GRAPHSIEVE_SERVER_TRAFFIC_WINDOW_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"

namespace graphsieve {

// Cumulative counters at one instant.
struct TrafficSample {
  double at_seconds = 0;  // monotonic clock
  double requests_ok = 0, requests_failed = 0;
  double pairs_exact = 0, pairs_inferred = 0, pairs_default = 0;
  uint64_t latency_count = 0;
  double latency_sum_seconds = 0;
  std::vector<double> latency_upper_bounds;  // finite bucket bounds, ascending
  std::vector<uint64_t> latency_cumulative;  // per bound, then one for +Inf
};

// The q-quantile of the observations between two cumulative histograms, by
// linear interpolation inside the bucket that holds rank q * count (what
// Prometheus' histogram_quantile does; the first bucket starts at 0). Sets
// *above_last_bound when the rank falls in the +Inf bucket (the value returned
// is then the last finite bound). REQUIRES: count > 0, same bounds.
double HistogramQuantile(double q, const std::vector<double>& upper_bounds,
                         const std::vector<uint64_t>& delta_cumulative, bool* above_last_bound);

// Rates over the newest sample and the oldest one at most `window_seconds`
// older (JSON, documented in docs/SERVER.md "Dashboard"). Rates are null with
// fewer than two samples; latency fields are null when no call finished in
// the window ("idle").
nlohmann::json SummariseTraffic(const std::deque<TrafficSample>& samples, double window_seconds);

class TrafficWindow {
 public:
  // Starts the sampler thread; the first sample is taken before returning.
  TrafficWindow(std::function<TrafficSample()> read, double period_seconds, double history_seconds);
  ~TrafficWindow();  // stops and joins the sampler

  nlohmann::json Summarise(double window_seconds) const;
  // Takes a sample now (tests; the thread calls it every period).
  void SampleNow();

 private:
  void Run();

  // Constant after construction.
  const std::function<TrafficSample()> read_;
  const double period_seconds_;
  const double history_seconds_;

  mutable absl::Mutex mu_;
  std::deque<TrafficSample> samples_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_TRAFFIC_WINDOW_H_
