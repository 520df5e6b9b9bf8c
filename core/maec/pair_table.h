// The pair table (docs/DESIGN.md §2.1): duplicate (user, item) instances of an
// impression log collapsed into one pair each.
//
// Thread-safety: BuildPairTable is a pure function; it uses up to `threads`
// threads. A PairTable is a plain value, safe to share read-only.
#ifndef GRAPHSIEVE_CORE_MAEC_PAIR_TABLE_H_
#define GRAPHSIEVE_CORE_MAEC_PAIR_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/io/log_reader.h"

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

// Errors: INVALID_ARGUMENT naming the instance or column (empty log, ragged
// columns, a label other than 0/1, a pilot score outside [0, 1], threads < 1).
absl::StatusOr<PairTable> BuildPairTable(const ImpressionLog& log, int threads);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_PAIR_TABLE_H_
