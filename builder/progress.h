// Build progress on stderr: on a terminal, one self-updating line per stage
// (stage, percent, elapsed, rows/s) redrawn at most 10 times a second; when
// stderr is not a terminal (cron, CI), one plain line per stage start/end.
//
// Thread-safety: the observer's callbacks may come from several threads;
// they serialise on an internal mutex.
#ifndef GRAPHSIEVE_BUILDER_PROGRESS_H_
#define GRAPHSIEVE_BUILDER_PROGRESS_H_

#include <chrono>
#include <cstdint>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "core/offline/build_job.h"

namespace graphsieve {

class StderrProgress {
 public:
  // `quiet` prints nothing; `tty` selects the redrawn line (normally isatty(2)).
  StderrProgress(bool quiet, bool tty) : quiet_(quiet), tty_(tty) {}
  StderrProgress(const StderrProgress&) = delete;
  StderrProgress& operator=(const StderrProgress&) = delete;

  // The returned observer refers to this object, which must outlive it.
  BuildObserver Observer();

 private:
  void Started(const std::string& stage);
  void Progress(const std::string& stage, double fraction, uint64_t items);
  void Done(const std::string& stage, double seconds);

  const bool quiet_, tty_;
  absl::Mutex mu_;
  std::chrono::steady_clock::time_point stage_start_ ABSL_GUARDED_BY(mu_);
  std::chrono::steady_clock::time_point last_draw_ ABSL_GUARDED_BY(mu_);
  std::string last_plain_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_BUILDER_PROGRESS_H_
