#include "builder/progress.h"

#include <cstdio>

#include "absl/strings/str_format.h"

namespace graphsieve {

BuildObserver StderrProgress::Observer() {
  BuildObserver o;
  if (quiet_) return o;
  o.stage_started = [this](const std::string& s) { Started(s); };
  o.progress = [this](const std::string& s, double f, uint64_t n) { Progress(s, f, n); };
  o.stage_done = [this](const std::string& s, double sec) { Done(s, sec); };
  return o;
}

void StderrProgress::Started(const std::string& stage) {
  absl::MutexLock lock(&mu_);
  stage_start_ = std::chrono::steady_clock::now();
  last_draw_ = {};
  if (!tty_) std::fprintf(stderr, "graphsieve-build: %s ...\n", stage.c_str());
}

void StderrProgress::Progress(const std::string& stage, double fraction, uint64_t items) {
  absl::MutexLock lock(&mu_);
  const auto now = std::chrono::steady_clock::now();
  if (!tty_) {
    // Sub-stages of the pipeline/writer as plain lines, once each.
    const std::string head = stage.substr(0, stage.find(':'));
    if (stage != head && stage != last_plain_) {
      std::fprintf(stderr, "graphsieve-build:   %s\n", stage.c_str());
      last_plain_ = stage;
    }
    return;
  }
  if (now - last_draw_ < std::chrono::milliseconds(100)) return;
  last_draw_ = now;
  const double elapsed = std::chrono::duration<double>(now - stage_start_).count();
  std::string rate;
  if (items > 0 && elapsed > 0) rate = absl::StrFormat("  %.2fM rows/s", items / elapsed / 1e6);
  std::fprintf(stderr, "\r\033[K%-28s %5.1f%%  %6.1fs%s", stage.c_str(), 100.0 * fraction, elapsed,
               rate.c_str());
  std::fflush(stderr);
}

void StderrProgress::Done(const std::string& stage, double seconds) {
  absl::MutexLock lock(&mu_);
  if (tty_) {
    std::fprintf(stderr, "\r\033[K%-28s done  %6.2fs\n", stage.c_str(), seconds);
  } else {
    std::fprintf(stderr, "graphsieve-build: %s done in %.2fs\n", stage.c_str(), seconds);
  }
}

}  // namespace graphsieve
