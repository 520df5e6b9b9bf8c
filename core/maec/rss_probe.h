// Peak resident memory per stage (docs/SCALING.md "Memory per impression"):
// with GRAPHSIEVE_DEBUG_RSS set, every build stage and every pipeline stage
// (graph, resistance, hardness, propagation, rates, node_table) prints the
// process's peak RSS during the stage and its RSS at the stage's end to
// stderr, then resets the peak (VmHWM, through /proc/self/clear_refs) so the
// next stage's peak is its own.
//
// Thread-safety: ReportStageRss from one thread per process at a time;
// ProbedPeakRssBytes from any thread.
#ifndef GRAPHSIEVE_CORE_MAEC_RSS_PROBE_H_
#define GRAPHSIEVE_CORE_MAEC_RSS_PROBE_H_

#include <cstdint>
#include <string>

namespace graphsieve {

// True when GRAPHSIEVE_DEBUG_RSS is set in the environment.
bool RssProbeEnabled();

// When enabled: prints "rss rank R stage NAME peak P GiB end E GiB wall W s
// peak_kb K" (wall when `seconds` >= 0) and resets the peak. A no-op
// otherwise. bench/production_day.sh reads these lines.
void ReportStageRss(int rank, const std::string& stage, double seconds = -1.0);

// The largest stage peak ReportStageRss has reset away (0 when it never ran):
// the process's true peak is the larger of this and getrusage's ru_maxrss.
uint64_t ProbedPeakRssBytes();

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_RSS_PROBE_H_
