// The positive bipartite graph of a pair table (docs/DESIGN.md §2.2) and its
// connected components, plus the Laplacian of one component in the form the
// solvers use.
//
// Nodes are users 0..U-1 then items U..U+I-1 (the NodeTable order). Every
// positive pair is one edge of conductance 1.
//
// Thread-safety: immutable after Build*(); safe to share between threads.
#ifndef GRAPHSIEVE_CORE_MAEC_GRAPH_H_
#define GRAPHSIEVE_CORE_MAEC_GRAPH_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "core/maec/pair_table.h"

namespace graphsieve {

struct PositiveGraph {
  uint32_t num_users = 0;
  uint32_t num_items = 0;
  uint64_t num_edges = 0;           // positive pairs
  std::vector<uint64_t> offsets;    // CSR, size num_nodes()+1
  std::vector<uint32_t> neighbors;  // node ids
  std::vector<uint32_t> component;  // per node; numbered by smallest node
  uint32_t num_components = 0;
  std::vector<uint64_t> component_offsets;  // size num_components+1
  std::vector<uint32_t> component_nodes;    // nodes grouped by component, ascending inside
  std::vector<uint32_t> local_index;        // node -> position inside its component

  size_t num_nodes() const { return size_t{num_users} + num_items; }
  uint32_t degree(uint32_t node) const {
    return static_cast<uint32_t>(offsets[node + 1] - offsets[node]);
  }
  uint32_t component_size(uint32_t c) const {
    return static_cast<uint32_t>(component_offsets[c + 1] - component_offsets[c]);
  }
  // Users / items inside component c.
  uint32_t component_users(uint32_t c) const;
};

// Builds the graph from the positive pairs. Errors: INVALID_ARGUMENT if the
// table is inconsistent (index out of range).
absl::StatusOr<PositiveGraph> BuildPositiveGraph(const PairTable& pairs);

// The Laplacian of one component with local node numbering (position in
// PositiveGraph::component_nodes), unit conductances.
struct ComponentLaplacian {
  uint32_t component = 0;
  std::vector<uint32_t> nodes;    // local -> global node (users first, ascending)
  uint32_t num_users = 0;         // local rows [0, num_users) are users, the rest items
  std::vector<uint64_t> row_ptr;  // off-diagonal pattern
  std::vector<uint32_t> cols;
  std::vector<double> degree;  // diagonal
  size_t size() const { return nodes.size(); }

  static ComponentLaplacian Build(const PositiveGraph& graph, uint32_t component);
};

// For each node the pairs (positive or negative) it belongs to. Users' pairs
// are contiguous in the pair table; items get an explicit list.
struct PairIncidence {
  std::vector<uint64_t>
      user_begin;  // size U+1: pairs of user u are [user_begin[u], user_begin[u+1])
  std::vector<uint64_t> item_begin;  // size I+1
  std::vector<uint32_t> item_pairs;  // pair indices grouped by item

  // with_items = false leaves the item lists empty (only one-sided solves
  // over items read them; they cost a scattered pass over every pair).
  static PairIncidence Build(const PairTable& pairs, bool with_items = true);
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_MAEC_GRAPH_H_
