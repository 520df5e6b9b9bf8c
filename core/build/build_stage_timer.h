// Stage timing of the build job (build_job.cc and the stage files next to
// it): wall and CPU seconds per stage, with the observer's callbacks.
// Internal to core/build/.
//
// Thread-safety: a StageTimer belongs to the thread running its stage.
#ifndef GRAPHSIEVE_CORE_BUILD_BUILD_STAGE_TIMER_H_
#define GRAPHSIEVE_CORE_BUILD_BUILD_STAGE_TIMER_H_

#include <sys/resource.h>

#include <chrono>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "core/build/build_job.h"

namespace graphsieve {
namespace build_internal {

using Clock = std::chrono::steady_clock;

inline double Since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

inline double ProcessCpuSeconds() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// Runs one stage with observer callbacks and records its wall and CPU time.
class StageTimer {
 public:
  StageTimer(const BuildObserver& obs, BuildReport* report, std::string name)
      : obs_(obs),
        report_(report),
        name_(std::move(name)),
        t0_(Clock::now()),
        cpu0_(ProcessCpuSeconds()) {
    if (obs_.stage_started) obs_.stage_started(name_);
  }
  void Done() {
    const double s = Since(t0_);
    report_->timings.push_back({name_, s});
    report_->stage_cpu.push_back({name_, ProcessCpuSeconds() - cpu0_});
    if (obs_.stage_done) obs_.stage_done(name_, s);
  }

 private:
  const BuildObserver& obs_;
  BuildReport* report_;
  std::string name_;
  Clock::time_point t0_;
  double cpu0_;
};

// Runs `stage` (returning absl::Status) between the observer's callbacks;
// its wall time is recorded only when it succeeds.
template <typename Fn>
absl::Status TimedStage(const BuildObserver& obs, BuildReport* report, const char* name,
                        Fn&& stage) {
  StageTimer timer(obs, report, name);
  absl::Status s = stage();
  if (s.ok()) timer.Done();
  return s;
}

}  // namespace build_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_BUILD_BUILD_STAGE_TIMER_H_
