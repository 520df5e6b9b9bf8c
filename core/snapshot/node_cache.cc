#include "core/snapshot/node_cache.h"

namespace graphsieve {

NodeCache::NodeCache(const SnapshotReader& reader, size_t max_unknown)
    : reader_(reader), max_unknown_(max_unknown) {}

const CachedNode* NodeCache::Find(bool is_item, uint64_t id) const {
  // Ids are often sequential: mix before choosing a shard.
  const size_t shard_index = static_cast<size_t>((id * 0x9e3779b97f4a7c15ull) >> 60) % kShards;
  Shard& shard = (is_item ? items_ : users_)[shard_index];
  {
    absl::MutexLock lock(&shard.mu);
    auto it = shard.nodes.find(id);
    if (it != shard.nodes.end()) return it->second.get();
  }
  // Miss: read without holding the lock.
  auto node = std::make_unique<CachedNode>();
  node->sketch.resize(static_cast<size_t>(reader_.model().sketch_dim));
  const bool known = is_item ? reader_.LookupItem(id, &node->record, absl::MakeSpan(node->sketch))
                             : reader_.LookupUser(id, &node->record, absl::MakeSpan(node->sketch));
  if (!known) node.reset();
  absl::MutexLock lock(&shard.mu);
  auto it = shard.nodes.find(id);
  if (it != shard.nodes.end()) return it->second.get();  // another request won the race
  if (!known && unknown_.load(std::memory_order_relaxed) >= max_unknown_) return nullptr;
  (known ? known_ : unknown_).fetch_add(1, std::memory_order_relaxed);
  return shard.nodes.emplace(id, std::move(node)).first->second.get();
}

}  // namespace graphsieve
