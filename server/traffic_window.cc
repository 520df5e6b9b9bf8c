#include "server/traffic_window.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "absl/time/time.h"

namespace graphsieve {
namespace {

double Now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

nlohmann::json OrNull(bool present, double value) {
  return present ? nlohmann::json(value) : nlohmann::json(nullptr);
}

// Per-second rates between two samples.
nlohmann::json Rates(const TrafficSample& a, const TrafficSample& b) {
  const double dt = std::max(1e-9, b.at_seconds - a.at_seconds);
  const double exact = b.pairs_exact - a.pairs_exact;
  const double inferred = b.pairs_inferred - a.pairs_inferred;
  const double by_default = b.pairs_default - a.pairs_default;
  const double pairs = exact + inferred + by_default;
  const double ok = b.requests_ok - a.requests_ok;
  const double failed = b.requests_failed - a.requests_failed;
  return {{"requests_per_second", (ok + failed) / dt},
          {"errors_per_second", failed / dt},
          {"pairs_per_second", pairs / dt},
          {"source_share",
           {{"exact", OrNull(pairs > 0, exact / pairs)},
            {"inferred", OrNull(pairs > 0, inferred / pairs)},
            {"default", OrNull(pairs > 0, by_default / pairs)}}}};
}

nlohmann::json Latency(const TrafficSample& a, const TrafficSample& b) {
  const uint64_t count = b.latency_count - a.latency_count;
  nlohmann::json j = {{"calls", count}};
  if (count == 0 || a.latency_cumulative.size() != b.latency_cumulative.size()) {
    for (const char* k : {"mean_seconds", "p50_seconds", "p90_seconds", "p99_seconds"})
      j[k] = nullptr;
    j["p99_above_last_bucket"] = false;
    return j;
  }
  std::vector<uint64_t> delta(b.latency_cumulative.size());
  for (size_t i = 0; i < delta.size(); ++i) {
    delta[i] = b.latency_cumulative[i] - a.latency_cumulative[i];
  }
  j["mean_seconds"] = (b.latency_sum_seconds - a.latency_sum_seconds) / static_cast<double>(count);
  bool above = false;
  j["p50_seconds"] = HistogramQuantile(0.5, b.latency_upper_bounds, delta, &above);
  j["p90_seconds"] = HistogramQuantile(0.9, b.latency_upper_bounds, delta, &above);
  j["p99_seconds"] = HistogramQuantile(0.99, b.latency_upper_bounds, delta, &above);
  j["p99_above_last_bucket"] = above;
  return j;
}

}  // namespace

double HistogramQuantile(double q, const std::vector<double>& upper_bounds,
                         const std::vector<uint64_t>& delta_cumulative, bool* above_last_bound) {
  *above_last_bound = false;
  const double count = static_cast<double>(delta_cumulative.back());
  const double rank = q * count;
  for (size_t i = 0; i < upper_bounds.size(); ++i) {
    const double cum = static_cast<double>(delta_cumulative[i]);
    if (cum >= rank && cum > 0) {
      const double lower = i == 0 ? 0.0 : upper_bounds[i - 1];
      const double below = i == 0 ? 0.0 : static_cast<double>(delta_cumulative[i - 1]);
      const double in_bucket = cum - below;
      if (in_bucket <= 0) return upper_bounds[i];
      return lower + (upper_bounds[i] - lower) * (rank - below) / in_bucket;
    }
  }
  *above_last_bound = true;
  return upper_bounds.empty() ? 0.0 : upper_bounds.back();
}

nlohmann::json SummariseTraffic(const std::deque<TrafficSample>& samples, double window_seconds) {
  nlohmann::json j;
  if (samples.size() < 2) {
    j["window_seconds"] = nullptr;
    for (const char* k : {"requests_per_second", "errors_per_second", "pairs_per_second"})
      j[k] = nullptr;
    j["source_share"] = {{"exact", nullptr}, {"inferred", nullptr}, {"default", nullptr}};
    j["latency"] = {{"calls", 0},
                    {"mean_seconds", nullptr},
                    {"p50_seconds", nullptr},
                    {"p90_seconds", nullptr},
                    {"p99_seconds", nullptr},
                    {"p99_above_last_bucket", false}};
    j["series"] = nlohmann::json::array();
    return j;
  }
  const TrafficSample& newest = samples.back();
  size_t first = samples.size() - 2;
  while (first > 0 && newest.at_seconds - samples[first - 1].at_seconds <= window_seconds + 1e-6) {
    --first;
  }
  const TrafficSample& oldest = samples[first];
  j = Rates(oldest, newest);
  j["window_seconds"] = newest.at_seconds - oldest.at_seconds;
  j["latency"] = Latency(oldest, newest);
  // The sparkline: pairs/s between consecutive samples, oldest first; t = seconds before now.
  nlohmann::json series = nlohmann::json::array();
  for (size_t i = 1; i < samples.size(); ++i) {
    series.push_back({{"t", samples[i].at_seconds - newest.at_seconds},
                      {"pairs_per_second", Rates(samples[i - 1], samples[i])["pairs_per_second"]}});
  }
  j["series"] = std::move(series);
  return j;
}

TrafficWindow::TrafficWindow(std::function<TrafficSample()> read, double period_seconds,
                             double history_seconds)
    : read_(std::move(read)), period_seconds_(period_seconds), history_seconds_(history_seconds) {
  SampleNow();
  thread_ = std::thread([this] { Run(); });
}

TrafficWindow::~TrafficWindow() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void TrafficWindow::SampleNow() {
  TrafficSample s = read_();
  s.at_seconds = Now();
  absl::MutexLock lock(&mu_);
  samples_.push_back(std::move(s));
  while (samples_.size() > 2 &&
         samples_.back().at_seconds - samples_.front().at_seconds > history_seconds_) {
    samples_.pop_front();
  }
}

void TrafficWindow::Run() {
  const absl::Duration period = absl::Seconds(period_seconds_);
  while (true) {
    {
      absl::MutexLock lock(&mu_);
      if (mu_.AwaitWithTimeout(absl::Condition(&stop_), period)) return;
    }
    SampleNow();
  }
}

nlohmann::json TrafficWindow::Summarise(double window_seconds) const {
  absl::MutexLock lock(&mu_);
  return SummariseTraffic(samples_, window_seconds);
}

}  // namespace graphsieve
