// One-line operational log to stderr ("2026-11-25T22:50:01Z graphsieve-server: ...").
// Logging only: errors travel as absl::Status, never through here.
// Thread-safety: safe (one fprintf per line).
#ifndef GRAPHSIEVE_SERVER_LOG_H_
#define GRAPHSIEVE_SERVER_LOG_H_

#include <cstdio>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace graphsieve {

inline void ServerLog(absl::string_view message) {
  const std::string now = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", absl::Now(), absl::UTCTimeZone());
  std::fprintf(stderr, "%s graphsieve-server: %.*s\n", now.c_str(),
               static_cast<int>(message.size()), message.data());
}

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_LOG_H_
