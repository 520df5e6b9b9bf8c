// --export: one CSV row per pair with exactly the columns
//   user_id,item_id,label,instances,geff,hardness,score,rate
// ids as they appeared in the input (the hashed ids' original text from
// ImpressionLog::user_names/item_names; integer ids in decimal), floats in the
// shortest text that reads back to the same float32.
//
// Thread-safety: a pure function of its inputs.
#ifndef GRAPHSIEVE_CORE_OFFLINE_EXPORT_CSV_H_
#define GRAPHSIEVE_CORE_OFFLINE_EXPORT_CSV_H_

#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "core/maec/pipeline.h"

namespace graphsieve {

inline constexpr char kExportHeader[] = "user_id,item_id,label,instances,geff,hardness,score,rate";

// Writes to `path` through core/io/output_file.h (`path`.tmp + rename; a
// symbolic link's target; a FIFO or device in place; the temporary removed on
// any failure), the header first unless `header` is false. Errors name the
// path and --export.
absl::Status WriteExportCsv(const std::string& path, const PairTable& pairs,
                            const PipelineResult& result,
                            const absl::flat_hash_map<uint64_t, std::string>& user_names,
                            const absl::flat_hash_map<uint64_t, std::string>& item_names,
                            bool header = true);

// The export of a build on several ranks (docs/SCALING.md "Export under
// MPI"): rank r of n writes its own users' rows, in (user, item) order, to
// ExportPartPath(path, r, n) = "<path>.part-<r>-of-<n>" (five digits each),
// the header in part 0 only, so the parts are plain CSV that join by
// concatenation in rank order; JoinExportParts does that into `path` (as
// WriteExportCsv writes it), streaming, then removes the parts. The rows of the
// joined file are those of a single-process export, grouped by rank.
std::string ExportPartPath(const std::string& path, int rank, int ranks);
absl::Status JoinExportParts(const std::string& path, int ranks);
// Removes whichever parts (and their temporaries) exist after a failed
// build; never fails.
void RemoveExportParts(const std::string& path, int ranks);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_OFFLINE_EXPORT_CSV_H_
