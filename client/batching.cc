#include "client/batching.h"

#include <algorithm>
#include <cmath>

namespace graphsieve {

std::vector<ChunkRange> SplitIntoChunks(size_t n, size_t max_chunk) {
  std::vector<ChunkRange> chunks;
  if (n == 0 || max_chunk == 0) return chunks;
  const size_t count = (n + max_chunk - 1) / max_chunk;
  const size_t base = n / count;
  const size_t extra = n % count;  // the first `extra` chunks get one more
  chunks.reserve(count);
  size_t begin = 0;
  for (size_t i = 0; i < count; ++i) {
    const size_t size = base + (i < extra ? 1 : 0);
    chunks.push_back({begin, begin + size});
    begin += size;
  }
  return chunks;
}

double BackoffSeconds(const BackoffPolicy& policy, int retry, double unit) {
  double delay = policy.initial_seconds * std::pow(policy.multiplier, std::max(retry, 0));
  delay = std::min(delay, policy.max_seconds);
  return delay * (1.0 + policy.jitter * (2.0 * unit - 1.0));
}

}  // namespace graphsieve
