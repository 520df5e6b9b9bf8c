#include "core/snapshot/snapshot_reader.h"

#include "absl/strings/str_cat.h"

namespace graphsieve {

const char* LookupModeName(LookupMode mode) {
  return mode == LookupMode::kMemory ? "memory" : "rocksdb";
}

absl::StatusOr<LookupMode> ParseLookupMode(absl::string_view name) {
  if (name == "memory") return LookupMode::kMemory;
  if (name == "rocksdb") return LookupMode::kRocksDb;
  return absl::InvalidArgumentError(
      absl::StrCat("lookup mode '", name, "' is not one of: memory, rocksdb"));
}

}  // namespace graphsieve
