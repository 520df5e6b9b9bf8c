#include "core/snapshot/partition_split.h"

#include <cassert>
#include <vector>

#include "core/io/partition.h"

namespace graphsieve {

PartSlice SlicePartition(const PairTable& pairs, const PipelineResult& result, uint32_t partition,
                         uint32_t num_partitions) {
  assert(num_partitions >= 1 && partition < num_partitions);
  assert(result.rate.size() == pairs.num_pairs());
  PartSlice out;
  PairTable& t = out.pairs;
  PipelineResult& r = out.result;
  const size_t users = pairs.num_users();
  // Users of this part keep their relative order (ids ascending stays ascending).
  std::vector<uint32_t> new_index(users, UINT32_MAX);
  for (size_t u = 0; u < users; ++u) {
    if (PartitionOfUser(pairs.user_ids[u], num_partitions) == partition) {
      new_index[u] = static_cast<uint32_t>(t.user_ids.size());
      t.user_ids.push_back(pairs.user_ids[u]);
    }
  }
  t.item_ids = pairs.item_ids;
  const bool pilot = !pairs.pilot_mean.empty();
  auto copy_if = [](const auto& from, size_t i, auto& to) {
    if (i < from.size()) to.push_back(from[i]);
  };
  for (size_t i = 0; i < pairs.num_pairs(); ++i) {
    const uint32_t u = new_index[pairs.pair_user[i]];
    if (u == UINT32_MAX) continue;
    t.pair_user.push_back(u);
    t.pair_item.push_back(pairs.pair_item[i]);
    t.label.push_back(pairs.label[i]);
    t.instances.push_back(pairs.instances[i]);
    t.negatives.push_back(pairs.negatives[i]);
    if (pilot) t.pilot_mean.push_back(pairs.pilot_mean[i]);
    t.total_instances += pairs.instances[i];
    t.total_negatives += pairs.negatives[i];
    r.positive_pairs += pairs.label[i] != 0;
    copy_if(result.geff, i, r.geff);
    copy_if(result.hardness, i, r.hardness);
    copy_if(result.uncertainty, i, r.uncertainty);
    copy_if(result.propagated_score, i, r.propagated_score);
    copy_if(result.score, i, r.score);
    copy_if(result.rate, i, r.rate);
  }
  // Nodes: the part's users, then every item (NodeTable order: users, items).
  const NodeTable& from = result.nodes;
  NodeTable& nodes = r.nodes;
  nodes.sketch_dim = from.sketch_dim;
  const size_t dim = static_cast<size_t>(from.sketch_dim);
  auto add_node = [&](size_t k) {
    nodes.ids.push_back(from.ids[k]);
    nodes.is_item.push_back(from.is_item[k]);
    nodes.records.push_back(from.records[k]);
    nodes.sketch.insert(nodes.sketch.end(), from.sketch.begin() + k * dim,
                        from.sketch.begin() + (k + 1) * dim);
  };
  for (size_t u = 0; u < users; ++u) {
    if (new_index[u] != UINT32_MAX) add_node(u);
  }
  for (size_t k = users; k < from.ids.size(); ++k) add_node(k);
  r.model = result.model;
  r.achieved_negative_mean_rate = result.achieved_negative_mean_rate;
  r.num_components = result.num_components;
  r.solves = result.solves;
  r.uncertainty_iterations = result.uncertainty_iterations;
  r.score_iterations = result.score_iterations;
  r.uncertainty_converged = result.uncertainty_converged;
  r.score_converged = result.score_converged;
  r.resistance_route = result.resistance_route;
  r.rho = result.rho;
  r.timings = result.timings;
  return out;
}

}  // namespace graphsieve
