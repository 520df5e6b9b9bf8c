// The distributed build's gates, write and publish when every rank writes
// its own parts of a partitioned version (docs/SCALING.md "Letting each rank
// write its part"): with --partitions P a multiple of the rank count N, part
// p's users all live on rank p mod N ((h mod P) mod N = h mod N for the user
// hash h of core/io/partition.h), so no pair is gathered to rank 0. Internal
// to core/offline/. Every function is a collective: all ranks call it.
//
// Thread-safety: one thread per rank.
#ifndef GRAPHSIEVE_CORE_OFFLINE_DIST_PARTS_H_
#define GRAPHSIEVE_CORE_OFFLINE_DIST_PARTS_H_

#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "core/distributed/communicator.h"
#include "core/offline/build_job.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_store.h"

namespace graphsieve {
namespace dist_internal {

// Whether this build writes per-rank parts: more than one rank, --partitions
// a multiple of the rank count, no --export left in `options` (RunBuild has
// written it in per-rank parts before and passes options without it) and no
// --dry_run.
bool RanksWriteParts(const BuildOptions& options, const Communicator& comm);

// Per-node counts and the DEFAULT fit over every rank's pairs (into
// `result`, as the gathered build's AttachNodeDefault), the gates over every
// rank's pairs, then each rank writes its parts into
// <version>.tmp/part-<p>/ (rank 0 holds the publish lock and chose the
// version), then rank 0 publishes after every rank has written. `store`,
// `inputs` and `names` (global row counters) are rank 0's. A failure on any
// rank (or a rank that dies before the last agreement) publishes nothing.
// The rank's last part is moved out of `pairs` and `result` instead of copied
// (docs/SCALING.md "Memory per impression"): their per-pair columns are left
// holding that part only.
absl::Status WritePartsOnEveryRank(const BuildOptions& options, const BuildObserver& obs,
                                   Communicator& comm, SnapshotStore* store, absl::Time created,
                                   PairTable* pairs, PipelineResult* result,
                                   const ImpressionLog& names,
                                   const std::vector<snapshot::InputFileInfo>& inputs,
                                   BuildReport* report);

}  // namespace dist_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_OFFLINE_DIST_PARTS_H_
