// --export: one CSV row per pair with exactly the columns
//   user_id,item_id,label,instances,geff,hardness,score,rate
// ids as they appeared in the input (the hashed ids' original text from
// ImpressionLog::user_names/item_names; integer ids in decimal), floats in the
// shortest text that reads back to the same float32.
//
// Thread-safety: a pure function of its inputs.
#ifndef GRAPHSIEVE_CORE_BUILD_EXPORT_CSV_H_
#define GRAPHSIEVE_CORE_BUILD_EXPORT_CSV_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "core/maec/pipeline.h"

namespace graphsieve {

inline constexpr char kExportHeader[] = "user_id,item_id,label,instances,geff,hardness,score,rate";

// Writes to `path` via `path`.tmp + rename. Errors name the path.
absl::Status WriteExportCsv(const std::string& path, const PairTable& pairs,
                            const PipelineResult& result,
                            const absl::flat_hash_map<uint64_t, std::string>& user_names,
                            const absl::flat_hash_map<uint64_t, std::string>& item_names);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_BUILD_EXPORT_CSV_H_
