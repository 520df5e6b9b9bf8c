// Times the pipeline's stages and reports them to PipelineOptions::progress
// (and their peak RSS with GRAPHSIEVE_DEBUG_RSS, rss_probe.h).
// Internal to core/maec.
//
// Thread-safety: one StageClock per pipeline run, used from one thread.
#ifndef GRAPHSIEVE_CORE_MAEC_STAGE_CLOCK_H_
#define GRAPHSIEVE_CORE_MAEC_STAGE_CLOCK_H_

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/distributed/communicator.h"
#include "core/maec/pipeline_options.h"
#include "core/maec/rss_probe.h"
#include "core/records/solve_summary.h"

namespace graphsieve {
namespace maec_internal {

class StageClock {
 public:
  // Both pointees must outlive the clock.
  StageClock(std::vector<StageTiming>* timings, const PipelineOptions& o)
      : timings_(timings), o_(o) {}
  // Records the time since the previous Done (or construction) under `stage`.
  void Done(const std::string& stage) {
    const absl::Time now = absl::Now();
    const double seconds = absl::ToDoubleSeconds(now - last_);
    timings_->push_back({stage, seconds});
    last_ = now;
    if (o_.progress) o_.progress(stage, 1.0);
    ReportStageRss(o_.comm != nullptr ? o_.comm->rank() : 0, "  " + stage, seconds);
  }

 private:
  std::vector<StageTiming>* timings_;
  const PipelineOptions& o_;
  absl::Time last_ = absl::Now();
};

}  // namespace maec_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_STAGE_CLOCK_H_
