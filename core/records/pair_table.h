// The pairs of a build (docs/DESIGN.md §2.1): duplicate (user, item)
// instances of an impression log collapsed into one pair each, sorted in the
// snapshot's key order. The method (core/maec) makes it (BuildPairTable) and
// computes on it; the snapshot (core/snapshot) stores a rate per pair in its
// order.
//
// Thread-safety: a plain value, safe to share read-only.
#ifndef GRAPHSIEVE_CORE_RECORDS_PAIR_TABLE_H_
#define GRAPHSIEVE_CORE_RECORDS_PAIR_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace graphsieve {

// Users are indexed 0..U-1 and items 0..I-1 in ascending id order; pairs are
// sorted by (user_id, item_id), which is also the snapshot's key order.
struct PairTable {
  std::vector<uint64_t> user_ids;  // index -> original id
  std::vector<uint64_t> item_ids;
  std::vector<uint32_t> pair_user;  // per pair: user index
  std::vector<uint32_t> pair_item;  // per pair: item index
  std::vector<uint8_t> label;       // 1 if any instance of the pair is positive
  std::vector<uint32_t> instances;  // instances of the pair
  std::vector<uint32_t> negatives;  // negative instances of the pair
  std::vector<float> pilot_mean;    // mean pilot score; empty without a pilot column
  uint64_t total_instances = 0;
  uint64_t total_negatives = 0;
  size_t num_pairs() const { return pair_user.size(); }
  size_t num_users() const { return user_ids.size(); }
  size_t num_items() const { return item_ids.size(); }
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_RECORDS_PAIR_TABLE_H_
