// Pure helpers of the client library: splitting a large batch into chunks the
// server accepts, and the jittered exponential backoff between retries.
// Exposed so tests can check them without a server.
//
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_CLIENT_BATCHING_H_
#define GRAPHSIEVE_CLIENT_BATCHING_H_

#include <cstddef>
#include <vector>

namespace graphsieve {

// A half-open range [begin, end) of a batch.
struct ChunkRange {
  size_t begin = 0;
  size_t end = 0;
  size_t size() const { return end - begin; }
};

// Splits [0, n) into consecutive ranges of at most max_chunk elements, sizes as
// equal as possible (so 10001 with max 10000 gives 5001 + 5000, not 10000 + 1).
// n = 0 gives no ranges.
// REQUIRES: max_chunk >= 1.
std::vector<ChunkRange> SplitIntoChunks(size_t n, size_t max_chunk);

struct BackoffPolicy {
  double initial_seconds = 0.05;  // delay before the first retry (before jitter)
  double max_seconds = 2.0;       // cap on the un-jittered delay
  double multiplier = 2.0;        // growth per retry
  double jitter = 0.2;            // delay scaled by a factor uniform in [1 - jitter, 1 + jitter]
};

// Delay before retry number `retry` (0 = first retry) given `unit`, a uniform
// number in [0, 1): min(initial * multiplier^retry, max) * (1 + jitter*(2*unit - 1)).
double BackoffSeconds(const BackoffPolicy& policy, int retry, double unit);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CLIENT_BATCHING_H_
