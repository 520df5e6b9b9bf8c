#include "server/version_profiler.h"

#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/serving/canary_stats.h"
#include "server/log.h"

namespace graphsieve {

VersionProfiler::VersionProfiler(VersionProfilerOptions options)
    : options_(std::move(options)), incremental_(options_.profile) {
  thread_ = std::thread([this] { Run(); });
}

VersionProfiler::~VersionProfiler() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void VersionProfiler::OnServing(std::shared_ptr<const ServingSnapshot> serving) {
  absl::MutexLock lock(&mu_);
  if (serving == nullptr) return;  // keep showing the last profile
  // The newest version asked for so far: queued, else being scanned, else
  // the last one profiled.
  const std::string* newest = pending_ != nullptr   ? &pending_->version
                              : busy_               ? &scanning_
                              : profile_ != nullptr ? &profile_->version
                                                    : nullptr;
  if (newest != nullptr && *newest == serving->version) return;
  pending_ = std::move(serving);
  state_ = absl::StrCat("profiling ", pending_->version);
}

void VersionProfiler::WaitIdle() const {
  absl::MutexLock lock(&mu_);
  auto idle = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return pending_ == nullptr && !busy_; };
  mu_.Await(absl::Condition(&idle));
}

void VersionProfiler::Run() {
  // A hint: when it fails the scan runs at the process's priority.
  if (options_.nice != 0) {
    const id_t self = static_cast<id_t>(::gettid());
    ::setpriority(PRIO_PROCESS, self,
                  std::clamp(::getpriority(PRIO_PROCESS, self) + options_.nice, -20, 19));
  }
  while (true) {
    std::shared_ptr<const ServingSnapshot> snap;
    std::shared_ptr<const RateProfile> previous;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]()
                       ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return stop_ || pending_ != nullptr; };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      snap = std::move(pending_);
      pending_ = nullptr;
      previous = profile_;
      busy_ = true;
      scanning_ = snap->version;
    }
    if (options_.on_scan_started) options_.on_scan_started(snap->version);
    absl::StatusOr<RateProfile> profile = incremental_.Profile(*snap->reader);
    snap.reset();  // the reader may close now
    std::optional<VersionComparison> comparison;
    if (profile.ok() && previous != nullptr && previous->version != profile->version) {
      comparison = CompareProfiles(*previous, *profile, options_.moved_threshold);
    }
    if (profile.ok() && options_.on_done) {
      options_.on_done(*profile, comparison ? &*comparison : nullptr);
    }
    absl::MutexLock lock(&mu_);
    busy_ = false;
    if (!profile.ok()) {
      state_ = absl::StrCat("profiling failed: ", profile.status().ToString());
      ServerLog(state_);
      continue;
    }
    if (pending_ == nullptr) state_ = "ready";
    ServerLog(absl::StrCat(
        "profiled ", profile->version, ": ", profile->pairs, " pairs, mean rate ",
        profile->mean_rate, " in ", profile->profile_seconds, " s (", profile->pairs_scanned,
        " pairs read", profile->incremental ? ": the delta's, over its base's kept profile" : "",
        ")",
        comparison ? absl::StrCat("; vs ", comparison->from_version, ": KS ",
                                  comparison->ks_distance, ", mean delta ", comparison->mean_delta)
                   : ""));
    profile_ = std::make_shared<const RateProfile>(*std::move(profile));
    if (comparison) comparison_ = std::move(comparison);
  }
}

nlohmann::json VersionProfiler::ToJson() const {
  absl::MutexLock lock(&mu_);
  const CanaryThresholds limits;
  return {
      {"rate_profile", profile_ ? RateProfileToJson(*profile_) : nlohmann::json(nullptr)},
      {"rate_profile_state", state_},
      {"comparison", comparison_ ? VersionComparisonToJson(*comparison_) : nlohmann::json(nullptr)},
      {"comparison_limits",
       {{"max_mean_delta", limits.max_mean_delta},
        {"max_ks", limits.max_ks},
        {"max_fraction_over", limits.max_fraction_over},
        {"delta_threshold", limits.delta_threshold}}}};
}

}  // namespace graphsieve
