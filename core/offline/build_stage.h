// One stage of the build job (build_job.cc and the stage files next to it),
// on one rank or many: timed (wall and CPU seconds, with the observer's
// callbacks), agreed with every rank, then the RSS probe. Internal to
// core/offline/.
//
// Thread-safety: one thread per rank.
#ifndef GRAPHSIEVE_CORE_OFFLINE_BUILD_STAGE_H_
#define GRAPHSIEVE_CORE_OFFLINE_BUILD_STAGE_H_

#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/distributed/communicator.h"
#include "core/maec/rss_probe.h"
#include "core/offline/build_job.h"

namespace graphsieve {
namespace build_internal {

inline double CpuSeconds() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

// GRAPHSIEVE_DEBUG_RSS=1: each rank prints its peak RSS during the stage
// and its RSS at the stage's end to stderr (core/maec/rss_probe.h) — how
// docs/SCALING.md measured per-stage memory.
inline void MaybeReportRss(const Communicator& comm, const char* stage, double seconds = -1.0) {
  ReportStageRss(comm.rank(), stage, seconds);
}

// Runs a stage on this rank, then agrees with every rank; the stage's wall
// and CPU time are recorded when it succeeded everywhere.
template <typename Fn>
absl::Status Stage(Communicator& comm, const BuildObserver& obs, BuildReport* report,
                   const char* name, Fn&& fn) {
  using Clock = std::chrono::steady_clock;
  if (obs.stage_started) obs.stage_started(name);
  const Clock::time_point t0 = Clock::now();
  const double cpu0 = CpuSeconds();
  absl::Status s = AgreeOnStatus(comm, fn());
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  if (s.ok()) {
    report->timings.push_back({name, seconds});
    report->stage_cpu.push_back({name, CpuSeconds() - cpu0});
    if (obs.stage_done) obs.stage_done(name, seconds);
  }
  MaybeReportRss(comm, name, seconds);
  return s;
}

// A stage one rank runs alone (rank 0's gates, export, write and publish of
// a gathered table): as Stage over a communicator of that rank alone.
template <typename Fn>
absl::Status LocalStage(const BuildObserver& obs, BuildReport* report, const char* name, Fn&& fn) {
  SingleProcessCommunicator alone;
  return Stage(alone, obs, report, name, std::forward<Fn>(fn));
}

}  // namespace build_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_OFFLINE_BUILD_STAGE_H_
