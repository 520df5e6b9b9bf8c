// Nodes (users and items) of one snapshot version, cached in memory as the
// request path meets them: kInferred and kDefault answers (core/serving/) need
// both nodes' records and sketch rows, and a RocksDB point read per node per
// pair costs far more than the scoring itself. A LookupMode::kRocksDb reader
// answers SnapshotReader::FindNode through one (snapshot_reader.h); kMemory
// needs none, its index holds every node. The whole node table is small
// (users + items, ~280 bytes each at k = 64), so after warm-up every known
// node is a hash probe.
//
// Thread-safety: Find() may be called concurrently. Sharded absl::Mutex; no
// lock is held across RocksDB I/O (a miss reads the node unlocked, then
// inserts; racing readers keep the first entry). Entries are never erased, so
// returned pointers stay valid as long as the cache lives (the reader that
// owns it, pinned by every request that uses it).
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_NODE_CACHE_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_NODE_CACHE_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/records/node_record.h"
#include "core/snapshot/snapshot_reader.h"

namespace graphsieve {

struct CachedNode {
  NodeRecord record;
  std::vector<float> sketch;  // sketch_dim floats
  NodeView view() const { return NodeView{record, absl::MakeConstSpan(sketch)}; }
};

class NodeCache {
 public:
  // REQUIRES: `reader` outlives the cache; its LookupUser/LookupItem must not
  // call back into this cache. max_unknown bounds how many unknown ids are
  // remembered (new users must not grow memory without limit).
  explicit NodeCache(const SnapshotReader& reader, size_t max_unknown = 1 << 20);

  // The node, or nullptr when the snapshot does not know it.
  const CachedNode* Find(bool is_item, uint64_t id) const;

  size_t known_size() const { return known_.load(std::memory_order_relaxed); }
  size_t unknown_size() const { return unknown_.load(std::memory_order_relaxed); }

 private:
  static constexpr int kShards = 16;
  struct Shard {
    mutable absl::Mutex mu;
    // nullptr value = known to be absent.
    absl::flat_hash_map<uint64_t, std::unique_ptr<CachedNode>> nodes ABSL_GUARDED_BY(mu);
  };

  const SnapshotReader& reader_;  // constant after construction
  const size_t max_unknown_;
  mutable std::array<Shard, kShards> users_, items_;
  mutable std::atomic<size_t> known_{0};
  mutable std::atomic<size_t> unknown_{0};
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_NODE_CACHE_H_
