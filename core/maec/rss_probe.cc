// ReportStageRss (rss_probe.h): /proc/self/status's VmHWM and VmRSS.
#include "core/maec/rss_probe.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace graphsieve {
namespace {

std::atomic<uint64_t> probed_peak{0};

}  // namespace

bool RssProbeEnabled() {
  static const bool on = std::getenv("GRAPHSIEVE_DEBUG_RSS") != nullptr;
  return on;
}

void ReportStageRss(int rank, const std::string& stage, double seconds) {
  if (!RssProbeEnabled()) return;
  std::FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return;
  char line[256];
  long hwm_kb = -1, rss_kb = -1;
  while (std::fgets(line, sizeof line, f) != nullptr) {
    std::sscanf(line, "VmHWM: %ld", &hwm_kb);
    std::sscanf(line, "VmRSS: %ld", &rss_kb);
  }
  std::fclose(f);
  char wall[48] = "";
  if (seconds >= 0) std::snprintf(wall, sizeof wall, " wall %.3f s", seconds);
  std::fprintf(stderr, "rss rank %d stage %-12s peak %.3f GiB end %.3f GiB%s peak_kb %ld\n", rank,
               stage.c_str(), hwm_kb / 1048576.0, rss_kb / 1048576.0, wall, hwm_kb);
  const uint64_t hwm = hwm_kb > 0 ? static_cast<uint64_t>(hwm_kb) * 1024 : 0;
  uint64_t seen = probed_peak.load();
  while (hwm > seen && !probed_peak.compare_exchange_weak(seen, hwm)) {
  }
  if (std::FILE* c = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", c);  // resets VmHWM to the current RSS
    std::fclose(c);
  }
}

uint64_t ProbedPeakRssBytes() { return probed_peak.load(); }

}  // namespace graphsieve
