#include "server/allocator.h"

#include <malloc.h>

#include <cstdlib>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace graphsieve {
namespace {

// glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit: mallopt refuses more.
constexpr size_t kMaxMmapThresholdBytes = size_t{32} << 20;

bool EnvironmentSetsThresholds() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  if (tunables != nullptr && (absl::StrContains(tunables, "glibc.malloc.mmap_threshold") ||
                              absl::StrContains(tunables, "glibc.malloc.trim_threshold"))) {
    return true;
  }
  return std::getenv("MALLOC_MMAP_THRESHOLD_") != nullptr ||
         std::getenv("MALLOC_TRIM_THRESHOLD_") != nullptr;
}

}  // namespace

absl::Status AllocatorOptions::Validate() const {
  if (mmap_threshold_bytes == 0 || mmap_threshold_bytes > kMaxMmapThresholdBytes) {
    return absl::InvalidArgumentError(absl::StrCat("mmap_threshold_bytes ", mmap_threshold_bytes,
                                                   " must be in [1, ", kMaxMmapThresholdBytes,
                                                   "]"));
  }
  if (trim_threshold_bytes == 0) {
    return absl::InvalidArgumentError("trim_threshold_bytes must be > 0");
  }
  return absl::OkStatus();
}

absl::Status ConfigureServerAllocator(const AllocatorOptions& options, std::string* note) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  if (EnvironmentSetsThresholds()) {
    *note = "malloc thresholds from the environment (GLIBC_TUNABLES / MALLOC_*_THRESHOLD_)";
    return absl::OkStatus();
  }
  if (mallopt(M_MMAP_THRESHOLD, static_cast<int>(options.mmap_threshold_bytes)) != 1) {
    return absl::InternalError(
        absl::StrCat("mallopt(M_MMAP_THRESHOLD, ", options.mmap_threshold_bytes, ") failed"));
  }
  if (mallopt(M_TRIM_THRESHOLD, static_cast<int>(options.trim_threshold_bytes)) != 1) {
    return absl::InternalError(
        absl::StrCat("mallopt(M_TRIM_THRESHOLD, ", options.trim_threshold_bytes, ") failed"));
  }
  *note = absl::StrCat("malloc mmap threshold ", options.mmap_threshold_bytes,
                       " bytes, trim threshold ", options.trim_threshold_bytes, " bytes (fixed)");
  return absl::OkStatus();
}

}  // namespace graphsieve
