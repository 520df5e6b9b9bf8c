// The data movements of the distributed build (build_job.h). Internal to
// core/offline/. Every function is a collective: all ranks call it in the same
// order.
//
// Thread-safety: one thread per rank.
#ifndef GRAPHSIEVE_CORE_OFFLINE_DIST_EXCHANGE_H_
#define GRAPHSIEVE_CORE_OFFLINE_DIST_EXCHANGE_H_

#include "absl/status/status.h"
#include "core/distributed/communicator.h"
#include "core/io/log_reader.h"
#include "core/maec/graph.h"
#include "core/maec/pipeline.h"

namespace graphsieve {
namespace dist_internal {

// For --export, written in per-rank parts (export_csv.h): `names` receives the hashed-id
// names of the users this rank will hold (PartitionOfUser, as
// ExchangeRowsByUser) and every rank's item names; `log`'s names are
// released. On one rank they move from `log`.
void RouteNames(Communicator& comm, ImpressionLog* log, ImpressionLog* names);

// Sends every row to rank PartitionOfUser(user, N), in rounds of at most
// rows_per_round rows per rank; `log` then holds this rank's users' rows
// (rank order, file order; pilot scores when any rank read some). Memory:
// the rank's rows before and after (sized exactly, from an all-reduced
// count matrix) plus one round's buffers (~21 B per row each way).
void ExchangeRowsByUser(Communicator& comm, ImpressionLog* log,
                        size_t rows_per_round = size_t{1} << 20);

// This rank's pair table with GLOBAL user and item indices: user_ids and
// item_ids are every rank's ids (sorted), pairs only this rank's; the
// instance columns of `log` are released. On one rank: BuildPairTable.
// Errors as BuildPairTable.
absl::Status BuildGlobalPairTable(Communicator& comm, int threads, ImpressionLog* log,
                                  PairTable* pairs);

// The positive graph of every rank's pairs, identical on every rank.
PositiveGraph AllGatherPositiveGraph(Communicator& comm, const PairTable& pairs);

// The whole table and result on rank 0 (others: empty), in (user, item)
// order: what the single-process writer, gates and export read.
struct GatheredPairs {
  PairTable pairs;
  PipelineResult result;
};

// Streams every rank's pairs and rates to rank 0 in chunks of 1M pairs; rank 0
// places each pair at its final (user, item) position (per-user counts are
// all-reduced first), so it holds the whole table once plus one chunk.
// with_export adds geff, hardness and score (RunBuild no longer asks for
// them: under several ranks the export is written in per-rank parts before
// the gather). Consumes the inputs.
void GatherToRoot(Communicator& comm, bool with_export, PairTable pairs, PipelineResult result,
                  GatheredPairs* out);

}  // namespace dist_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_OFFLINE_DIST_EXCHANGE_H_
