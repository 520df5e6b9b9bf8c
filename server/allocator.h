// The server's malloc settings (docs/SERVER.md "Memory across many swaps").
//
// glibc raises its mmap threshold to the size of every large block it frees
// (up to 32 MiB) and its trim threshold to twice that, so after the first
// version load or profile (1–4 MiB read buffers) such blocks come from the
// per-thread arenas, and each arena keeps up to 2× the threshold of freed
// memory resident. The refresher, the file verifier and the profiler run on
// different threads at each swap, so the arenas fill one after another: the
// anonymous RSS grew with the number of swaps, to 5× after 60 (measured). With
// both thresholds fixed, large blocks are mapped and unmapped on their own
// and freed arena tops are returned at once.
//
// Thread-safety: call once at process start, before other threads allocate.
#ifndef GRAPHSIEVE_SERVER_ALLOCATOR_H_
#define GRAPHSIEVE_SERVER_ALLOCATOR_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"

namespace graphsieve {

struct AllocatorOptions {
  // Blocks of at least this size are mmapped and unmapped on free (glibc's
  // initial default; fixing it turns the dynamic raise off).
  size_t mmap_threshold_bytes = 128 << 10;
  // Free memory above this at an arena's top is returned to the kernel.
  size_t trim_threshold_bytes = 128 << 10;
  absl::Status Validate() const;
};

// Applies `options` with mallopt. Leaves glibc's behaviour alone (and says so
// in *note) when the environment already sets a threshold (GLIBC_TUNABLES
// glibc.malloc.mmap_threshold / trim_threshold, MALLOC_MMAP_THRESHOLD_,
// MALLOC_TRIM_THRESHOLD_): an operator's explicit choice wins. Errors:
// INVALID_ARGUMENT (options), INTERNAL (mallopt refused).
absl::Status ConfigureServerAllocator(const AllocatorOptions& options, std::string* note);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_ALLOCATOR_H_
