// Building the pair table (core/records/pair_table.h, docs/DESIGN.md §2.1)
// from an impression log.
//
// Thread-safety: BuildPairTable is a pure function; it uses up to `threads`
// threads.
#ifndef GRAPHSIEVE_CORE_MAEC_PAIR_TABLE_H_
#define GRAPHSIEVE_CORE_MAEC_PAIR_TABLE_H_

#include "absl/status/statusor.h"
#include "core/io/log_reader.h"
#include "core/records/pair_table.h"

namespace graphsieve {

// Errors: INVALID_ARGUMENT naming the instance or column (empty log, ragged
// columns, a label other than 0/1, a pilot score outside [0, 1], threads < 1).
absl::StatusOr<PairTable> BuildPairTable(const ImpressionLog& log, int threads);

// The same, freeing the log's id columns as soon as they are ranked (the
// labels and pilot scores stay until the caller frees them): the builder's
// pair-table peak falls by 16 bytes per instance (docs/SCALING.md "Memory per
// impression"). On error the log may have lost its id columns.
absl::StatusOr<PairTable> BuildPairTableConsuming(ImpressionLog* log, int threads);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_PAIR_TABLE_H_
