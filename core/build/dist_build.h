// The build job on several ranks (docs/DESIGN.md §5, docs/SCALING.md):
// `mpirun -np N graphsieve-build <the same flags>` runs RunDistributedBuild on
// every rank with an MPI communicator and publishes one version.
//
//   read       rank r parses the --input files k with k mod N == r (whole
//              files: give at least N files to use every rank's reader)
//   partition  rows go to rank PartitionOfUser(user, N) (core/io/partition.h)
//   pair table per rank, with global user/item indices (ids all-gathered)
//   graph      the positive pairs are all-gathered: every rank holds the graph
//   pipeline   resistance columns split across ranks; node sums, the
//              hardness range and the α fit (one global ρ, exact) all-reduced
//   gather     rates (+ export columns) streamed to rank 0 in chunks
//   publish    rank 0 checks the gates, writes the version with the
//              single-process writer, and flips CURRENT only after every rank
//              has confirmed success (an agreement round)
// With --partitions P a multiple of N (and no --export, no --dry_run) there
// is no gather: every rank checks the gates on its pairs (the negative mean
// all-reduced) and writes parts p ≡ rank (mod N) of the version into rank
// 0's <version>.tmp/ on the shared snapshot root; rank 0 publishes after the
// agreement (dist_parts.h).
// A failure on any rank publishes nothing and leaves CURRENT as it was; an
// error (bad row: file and line) is returned on every rank, prefixed with the
// rank that hit it. Rank 0 holds every pair's rate at the end (~17 bytes per
// pair, ~33 with --export), the other ranks only their own pairs.
//
// Test hook: the environment variable GRAPHSIEVE_TEST_KILL_RANK_AT=R:STAGE
// makes rank R kill itself with SIGKILL at the end of STAGE (open, read,
// pair_table, pipeline, gather; gates, write with per-rank parts) — how tests/dist checks that a
// lost rank publishes nothing.
//
// Thread-safety: a collective; every rank calls it once with the same options.
#ifndef GRAPHSIEVE_CORE_BUILD_DIST_BUILD_H_
#define GRAPHSIEVE_CORE_BUILD_DIST_BUILD_H_

#include "absl/status/statusor.h"
#include "core/build/build_job.h"
#include "core/dist/communicator.h"

namespace graphsieve {

// The report's counts are global on every rank; version/published and the
// per-rank resource table (BuildReport::ranks) are filled on rank 0.
absl::StatusOr<BuildReport> RunDistributedBuild(const BuildOptions& options,
                                                const BuildObserver& observer, Communicator& comm);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_BUILD_DIST_BUILD_H_
