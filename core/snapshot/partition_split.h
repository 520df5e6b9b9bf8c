// One part of a partitioned snapshot version (docs/SNAPSHOT.md "Partitioned
// versions"): the pairs whose user core/io/partition.h maps to the part, those
// users' nodes, and every item's node (INFERRED and DEFAULT answers need the
// item side whichever part holds the user).
//
// Thread-safety: a pure function.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_PARTITION_SPLIT_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_PARTITION_SPLIT_H_

#include <cstdint>

#include "core/records/pair_table.h"
#include "core/records/pipeline_result.h"

namespace graphsieve {

struct PartSlice {
  PairTable pairs;        // the part's users (re-indexed), every item, the part's pairs
  PipelineResult result;  // per-pair vectors and nodes sliced to match; model,
                          // solves and achieved mean are the whole version's
};

// REQUIRES: num_partitions >= 1, partition < num_partitions, result is
// RunPipeline(pairs, ...) (nodes: users 0..U-1 then items).
PartSlice SlicePartition(const PairTable& pairs, const PipelineResult& result, uint32_t partition,
                         uint32_t num_partitions);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_PARTITION_SPLIT_H_
