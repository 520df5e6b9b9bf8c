// The per-node records of a snapshot (docs/DESIGN.md §2, last paragraph):
// what the method (core/maec) produces for every user and item, what the
// snapshot (core/snapshot) stores under the node keys, and what the request
// path reads back to score pairs the builder never saw.
//
// Thread-safety: plain values.
#ifndef GRAPHSIEVE_CORE_RECORDS_NODE_RECORD_H_
#define GRAPHSIEVE_CORE_RECORDS_NODE_RECORD_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "absl/types/span.h"

namespace graphsieve {

// Per node data (users 0..U-1, then items). With symmetric_normalisation the
// two sums are Σ x_q / √d_q (d_q = neighbours of pair q), the node sums that
// operator uses.
struct NodeRecord {
  uint32_t component = 0;        // connected component in the positive graph
  uint32_t degree = 0;           // pairs (positive and negative) at this node
  float sum_uncertainty = 0.0f;  // Σ propagated uncertainty B̂ over its pairs
  float sum_score = 0.0f;        // Σ propagated score over its pairs
  float mean_rate = 0.0f;        // mean rate over its negative instances (default policy)
  // Instances at the node and how many were positive, saturated at 2^32 - 1
  // (snapshot format 3; 0 when read from an older snapshot). The server's
  // positive-rate DEFAULT policy (core/model/node_default.h) rates a pair
  // with an unknown partner from them.
  uint32_t positives = 0;
  uint32_t impressions = 0;
};

struct NodeTable {
  std::vector<uint64_t> ids;     // original id per node
  std::vector<uint8_t> is_item;  // 0 user, 1 item
  std::vector<NodeRecord> records;
  int sketch_dim = 0;  // floats per row: k, or k + 2 with the control variate
  // Row-major, ids.size() x sketch_dim; ‖row_u − row_v‖² ≈ R_eff of a user–item
  // non-edge (docs/METHOD.md "Pairs the builder never saw").
  std::vector<float> sketch;
  absl::Span<const float> SketchRow(size_t node) const {
    return absl::MakeConstSpan(sketch.data() + node * sketch_dim, sketch_dim);
  }
};

// One known node as the server sees it.
struct NodeView {
  NodeRecord record;
  absl::Span<const float> sketch;  // sketch_dim floats
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_RECORDS_NODE_RECORD_H_
