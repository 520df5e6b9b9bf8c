// Profiles each version as it starts serving, off the request path: a
// background thread scans the new version's pairs (IncrementalRateProfiler:
// for a delta over the base profiled last, the delta's pairs only) and
// compares it with the version profiled before it (CompareProfiles), then
// hands both to `on_done` (metrics gauges) and keeps them for /status.json.
// Holding a ServingSnapshot keeps its reader open until the scan ends; only
// the newest queued version is profiled (a version swapped out before its turn
// is skipped, and the next one is compared with the last one profiled).
//
// Thread-safety: all public methods are thread-safe; `on_done` runs on the
// profiler thread.
#ifndef GRAPHSIEVE_SERVER_VERSION_PROFILER_H_
#define GRAPHSIEVE_SERVER_VERSION_PROFILER_H_

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"
#include "server/rate_profile.h"
#include "server/snapshot_manager.h"

namespace graphsieve {

struct VersionProfilerOptions {
  RateProfileOptions profile;
  double moved_threshold = 0.05;  // |Δrate| counted as "moved" (the canary's default)
  std::function<void(const RateProfile&, const VersionComparison*)> on_done;
  // Added to the profiler thread's nice value (setpriority on that thread
  // alone): the scan takes seconds of a core on a large version, and requests
  // on the gRPC threads come first. 0 keeps the process's priority.
  int nice = 10;
  // May be empty: runs on the profiler thread just before a version's scan
  // starts (with the version); an observer like on_done (the server sets
  // neither; a test holds a scan in progress here).
  std::function<void(const std::string& version)> on_scan_started;
};

class VersionProfiler {
 public:
  explicit VersionProfiler(VersionProfilerOptions options);
  ~VersionProfiler();  // stops and joins (an ongoing scan finishes first)

  // `serving` became the serving version (null: nothing serves). Queues it,
  // unless it is already the newest version queued, being scanned or (with
  // nothing else queued or scanning) profiled: the refresher reports one
  // version more than once (loaded, then pinned), and one scan is enough.
  void OnServing(std::shared_ptr<const ServingSnapshot> serving);
  // Blocks until nothing is queued or being profiled (tests).
  void WaitIdle() const;
  // {"rate_profile": ...|null, "rate_profile_state": "...", "comparison": ...|null,
  //  "comparison_limits": the canary's default limits}.
  nlohmann::json ToJson() const;

 private:
  void Run();

  // Constant after construction.
  const VersionProfilerOptions options_;
  IncrementalRateProfiler incremental_;  // used by the profiler thread only

  mutable absl::Mutex mu_;
  std::shared_ptr<const ServingSnapshot> pending_ ABSL_GUARDED_BY(mu_);
  bool busy_ ABSL_GUARDED_BY(mu_) = false;
  std::string scanning_ ABSL_GUARDED_BY(mu_);  // the version being scanned (busy_)
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  std::string state_ ABSL_GUARDED_BY(mu_) = "no version served yet";
  std::shared_ptr<const RateProfile> profile_ ABSL_GUARDED_BY(mu_);
  std::optional<VersionComparison> comparison_ ABSL_GUARDED_BY(mu_);
  std::thread thread_;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_VERSION_PROFILER_H_
