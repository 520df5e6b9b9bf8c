// The records of a delta version (docs/DESIGN.md "Delta versions"): from a
// published base version and the pair table of the impressions logged since
// it, the pairs and node records that override the base's, consistent with
// it (same rate rule, ρ, κ, h̄, sketch layout: the base's UnseenModel).
//
//   pairs   every pair of the new log the base does not store, and every
//           positive one (it may have become positive since); a pair the base
//           stores as seen and that is still negative keeps the base's rate.
//   nodes   every endpoint of a new-log pair: the base's record with the new
//           impressions, positives and pairs added, or a fresh record.
//   rows    harmonic extension over the new positive edges: a node's row
//           becomes the weighted mean of its base row (weight: its positive
//           degree in the base) and its new positive neighbours' rows,
//           `sweeps` Jacobi sweeps over the touched nodes; with the control
//           variate rows the exact slot √(1/d) is set from the new positive
//           degree. A new node attached by positive edges to base nodes takes
//           the mean of their rows after one sweep.
//   sums    Σ B̂ and Σ score keep the base's per-pair mean at the new degree
//           (a new node: the mean of its partners' per-pair means).
//   pilot   (a base with the built-in pilot's rows, UnseenModel::pilot_dim >
//           0) the new nodes' pilot rows folded in (FoldInPilotRows) on the
//           new log's pairs, the base nodes' rows and the global bias held;
//           a base node keeps its row
//   rates   ScoreUnseenPair (core/model/unseen.h) on the updated records: the
//           rule the server applies to pairs the builder never saw.
//
// Thread-safety: a pure function of its inputs.
#ifndef GRAPHSIEVE_CORE_OFFLINE_DELTA_RECORDS_H_
#define GRAPHSIEVE_CORE_OFFLINE_DELTA_RECORDS_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "core/model/pilot.h"
#include "core/records/pair_table.h"
#include "core/records/pipeline_result.h"
#include "core/snapshot/snapshot_reader.h"

namespace graphsieve {

struct DeltaRecordOptions {
  int sweeps = 3;  // Jacobi sweeps of the touched nodes' rows (>= 1)
  // The base's row layout (its manifest's parameters): k = sketch_columns and
  // whether the rows carry the control variate's two exact slots after them.
  int sketch_columns = 0;
  bool control_variate = false;
  // The built-in pilot's fold-in (its dim comes from the base's model).
  PilotOptions pilot;
};

struct DeltaRecords {
  PairTable pairs;        // the delta's stored pairs; users/items: every touched node
  PipelineResult result;  // rate per stored pair, the nodes, the base's model
  uint64_t new_users = 0, new_items = 0;  // nodes the base does not know
  uint64_t new_positive_edges = 0;        // positive pairs the base does not store
  uint64_t carried_pairs = 0;             // base-stored negatives left to the base
};

// REQUIRES: `fresh` is BuildPairTable of the new impressions; `base` is open.
// Errors: INVALID_ARGUMENT (sweeps < 1, a row layout that does not match the
// base's sketch_dim), DATA_LOSS (a base node row of another width).
absl::StatusOr<DeltaRecords> ComputeDeltaRecords(const SnapshotReader& base, const PairTable& fresh,
                                                 const DeltaRecordOptions& options);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_OFFLINE_DELTA_RECORDS_H_
