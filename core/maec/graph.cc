#include "core/maec/graph.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace graphsieve {

uint32_t PositiveGraph::component_users(uint32_t c) const {
  const uint32_t* begin = component_nodes.data() + component_offsets[c];
  const uint32_t* end = component_nodes.data() + component_offsets[c + 1];
  // Nodes are ascending and users come first.
  return static_cast<uint32_t>(std::lower_bound(begin, end, num_users) - begin);
}

absl::StatusOr<PositiveGraph> BuildPositiveGraph(const PairTable& pairs) {
  PositiveGraph g;
  g.num_users = static_cast<uint32_t>(pairs.num_users());
  g.num_items = static_cast<uint32_t>(pairs.num_items());
  const size_t n = g.num_nodes();
  if (pairs.pair_item.size() != pairs.num_pairs() || pairs.label.size() != pairs.num_pairs()) {
    return absl::InvalidArgumentError("pair table: columns differ in length");
  }
  g.offsets.assign(n + 1, 0);
  for (size_t p = 0; p < pairs.num_pairs(); ++p) {
    if (pairs.pair_user[p] >= g.num_users || pairs.pair_item[p] >= g.num_items) {
      return absl::InvalidArgumentError(
          absl::StrCat("pair table: pair ", p, " has index out of range"));
    }
    if (!pairs.label[p]) continue;
    ++g.offsets[pairs.pair_user[p] + 1];
    ++g.offsets[g.num_users + pairs.pair_item[p] + 1];
    ++g.num_edges;
  }
  for (size_t v = 0; v < n; ++v) g.offsets[v + 1] += g.offsets[v];
  g.neighbors.resize(g.offsets[n]);
  {
    std::vector<uint64_t> cursor(g.offsets.begin(), g.offsets.end() - 1);
    for (size_t p = 0; p < pairs.num_pairs(); ++p) {
      if (!pairs.label[p]) continue;
      const uint32_t u = pairs.pair_user[p], v = g.num_users + pairs.pair_item[p];
      g.neighbors[cursor[u]++] = v;
      g.neighbors[cursor[v]++] = u;
    }
  }
  // Components by BFS in ascending start order.
  constexpr uint32_t kNone = ~uint32_t{0};
  g.component.assign(n, kNone);
  std::vector<uint32_t> queue;
  queue.reserve(n);
  std::vector<uint64_t> sizes;
  for (uint32_t s = 0; s < n; ++s) {
    if (g.component[s] != kNone) continue;
    const uint32_t c = g.num_components++;
    size_t head = queue.size();
    queue.push_back(s);
    g.component[s] = c;
    while (head < queue.size()) {
      const uint32_t x = queue[head++];
      for (uint64_t k = g.offsets[x]; k < g.offsets[x + 1]; ++k) {
        const uint32_t y = g.neighbors[k];
        if (g.component[y] == kNone) {
          g.component[y] = c;
          queue.push_back(y);
        }
      }
    }
  }
  g.component_offsets.assign(g.num_components + 1, 0);
  for (uint32_t c : g.component) ++g.component_offsets[c + 1];
  for (uint32_t c = 0; c < g.num_components; ++c)
    g.component_offsets[c + 1] += g.component_offsets[c];
  g.component_nodes.resize(n);
  g.local_index.resize(n);
  std::vector<uint64_t> cursor(g.component_offsets.begin(), g.component_offsets.end() - 1);
  for (uint32_t v = 0; v < n; ++v) {  // ascending, so each component's list is sorted
    const uint32_t c = g.component[v];
    g.local_index[v] = static_cast<uint32_t>(cursor[c] - g.component_offsets[c]);
    g.component_nodes[cursor[c]++] = v;
  }
  return g;
}

ComponentLaplacian ComponentLaplacian::Build(const PositiveGraph& g, uint32_t component) {
  ComponentLaplacian lap;
  lap.component = component;
  const uint64_t begin = g.component_offsets[component], end = g.component_offsets[component + 1];
  lap.nodes.assign(g.component_nodes.begin() + begin, g.component_nodes.begin() + end);
  const size_t n = lap.nodes.size();
  lap.num_users = g.component_users(component);
  lap.row_ptr.assign(n + 1, 0);
  lap.degree.resize(n);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t v = lap.nodes[i];
    lap.row_ptr[i + 1] = lap.row_ptr[i] + g.degree(v);
    lap.degree[i] = g.degree(v);
  }
  lap.cols.resize(lap.row_ptr[n]);
  for (size_t i = 0; i < n; ++i) {
    const uint32_t v = lap.nodes[i];
    uint64_t out = lap.row_ptr[i];
    for (uint64_t k = g.offsets[v]; k < g.offsets[v + 1]; ++k)
      lap.cols[out++] = g.local_index[g.neighbors[k]];
    std::sort(lap.cols.begin() + lap.row_ptr[i], lap.cols.begin() + lap.row_ptr[i + 1]);
  }
  return lap;
}

PairIncidence PairIncidence::Build(const PairTable& pairs, bool with_items) {
  PairIncidence inc;
  const size_t U = pairs.num_users(), I = pairs.num_items();
  inc.user_begin.assign(U + 1, 0);
  for (size_t p = 0; p < pairs.num_pairs(); ++p) ++inc.user_begin[pairs.pair_user[p] + 1];
  for (size_t u = 0; u < U; ++u) inc.user_begin[u + 1] += inc.user_begin[u];
  if (!with_items) return inc;
  inc.item_begin.assign(I + 1, 0);
  for (size_t p = 0; p < pairs.num_pairs(); ++p) ++inc.item_begin[pairs.pair_item[p] + 1];
  for (size_t i = 0; i < I; ++i) inc.item_begin[i + 1] += inc.item_begin[i];
  inc.item_pairs.resize(pairs.num_pairs());
  std::vector<uint64_t> cursor(inc.item_begin.begin(), inc.item_begin.end() - 1);
  for (size_t p = 0; p < pairs.num_pairs(); ++p) {
    inc.item_pairs[cursor[pairs.pair_item[p]]++] = static_cast<uint32_t>(p);
  }
  return inc;
}

}  // namespace graphsieve
