#include "core/offline/delta_records.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/model/unseen.h"

namespace graphsieve {
namespace {

// A fresh node without positive edges gets a component of its own (no graph
// evidence: conductance 0 to everything, as ScoreUnknownNodePair assumes).
constexpr uint32_t kOwnComponentBase = 0xC0000000u;
// New nodes joined only to new nodes: a component id per new cluster.
constexpr uint32_t kNewClusterBase = 0x80000000u;

// The working state of one touched node (users 0..U-1, then items).
struct Work {
  int dim = 0, columns = 0;
  int graph = 0;  // the graph's floats of a row; the pilot's row follows them
  bool cv = false;
  size_t users = 0;
  std::vector<uint8_t> known;
  std::vector<NodeRecord> rec;
  std::vector<float> rows;                  // nodes x dim
  std::vector<double> base_pos_degree;      // the row's weight in the extension
  std::vector<std::vector<uint32_t>> nbrs;  // new positive neighbours
  float* Row(size_t n) { return rows.data() + n * dim; }
  bool IsItem(size_t n) const { return n >= users; }
};

absl::Status LoadBaseNodes(const SnapshotReader& base, const PairTable& fresh, Work* w) {
  const size_t nodes = fresh.num_users() + fresh.num_items();
  w->users = fresh.num_users();
  w->known.assign(nodes, 0);
  w->rec.assign(nodes, NodeRecord{});
  w->rows.assign(nodes * w->dim, 0.0f);
  w->base_pos_degree.assign(nodes, 0.0);
  w->nbrs.assign(nodes, {});
  for (size_t n = 0; n < nodes; ++n) {
    const bool item = w->IsItem(n);
    const uint64_t id = item ? fresh.item_ids[n - w->users] : fresh.user_ids[n];
    NodeView view;
    if (!base.FindNode(item, id, &view)) continue;
    if (static_cast<int>(view.sketch.size()) != w->dim) {
      return absl::DataLossError(absl::StrCat("base ", item ? "item " : "user ", id, ": row of ",
                                              view.sketch.size(), " floats, expected ", w->dim));
    }
    w->known[n] = 1;
    w->rec[n] = view.record;
    std::copy(view.sketch.begin(), view.sketch.end(), w->Row(n));
    if (w->cv) {  // the exact slot holds √(1/d), d the positive degree
      const double s = view.sketch[w->columns + (item ? 1 : 0)];
      w->base_pos_degree[n] = s > 0 ? std::round(1.0 / (s * s)) : 0.0;
    } else {
      w->base_pos_degree[n] = view.record.degree;
    }
  }
  return absl::OkStatus();
}

// Jacobi sweeps of the harmonic extension over the touched nodes' rows (the
// first `columns` floats with the control variate, all of them without).
void ExtendRows(int sweeps, Work* w) {
  const int z = w->cv ? w->columns : w->graph;
  std::vector<size_t> touched;
  for (size_t n = 0; n < w->nbrs.size(); ++n) {
    if (!w->nbrs[n].empty()) touched.push_back(n);
  }
  // A new node starts at the mean of its known neighbours' base rows (its
  // harmonic value were they fixed), not at zero: from zero the sweeps would
  // pull its base neighbours towards the origin and, the graph being
  // bipartite, oscillate. Then a new node attached to one base node, or to
  // base nodes of equal degree, is a fixed point of the sweeps (exact).
  for (size_t n : touched) {
    if (w->known[n]) continue;
    int k = 0;
    std::vector<double> acc(z, 0.0);
    for (uint32_t m : w->nbrs[n]) {
      if (!w->known[m]) continue;
      ++k;
      for (int j = 0; j < z; ++j) acc[j] += w->rows[m * w->dim + j];
    }
    for (int j = 0; k > 0 && j < z; ++j) w->Row(n)[j] = static_cast<float>(acc[j] / k);
  }
  const std::vector<float> base_rows = w->rows;
  std::vector<float> next(touched.size() * z);
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    for (size_t t = 0; t < touched.size(); ++t) {
      const size_t n = touched[t];
      const double w0 = w->base_pos_degree[n];
      const double total = w0 + static_cast<double>(w->nbrs[n].size());
      for (int j = 0; j < z; ++j) {
        double acc = w0 * base_rows[n * w->dim + j];
        for (uint32_t m : w->nbrs[n]) acc += w->rows[m * w->dim + j];
        next[t * z + j] = static_cast<float>(acc / total);
      }
    }
    for (size_t t = 0; t < touched.size(); ++t) {
      std::copy_n(next.data() + t * z, z, w->Row(touched[t]));
    }
  }
  if (!w->cv) return;
  for (size_t n : touched) {
    const double d = w->base_pos_degree[n] + static_cast<double>(w->nbrs[n].size());
    w->Row(n)[w->columns + (w->IsItem(n) ? 1 : 0)] = static_cast<float>(std::sqrt(1.0 / d));
  }
}

// New nodes take the smallest component among their positive neighbours
// (label propagation over the new edges); clusters of new nodes alone get a
// new id, nodes without positive edges one of their own.
void AssignComponents(Work* w) {
  const size_t nodes = w->rec.size();
  for (size_t n = 0; n < nodes; ++n) {
    if (w->known[n]) continue;
    w->rec[n].component = static_cast<uint32_t>(
        (w->nbrs[n].empty() ? kOwnComponentBase : kNewClusterBase) + std::min<size_t>(n, 1u << 29));
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t n = 0; n < nodes; ++n) {
      if (w->known[n]) continue;
      for (uint32_t m : w->nbrs[n]) {
        if (w->rec[m].component < w->rec[n].component) {
          w->rec[n].component = w->rec[m].component;
          changed = true;
        }
      }
    }
  }
}

// Σ B̂ and Σ score at the new degree, keeping the per-pair mean.
void ScaleSums(const std::vector<uint32_t>& base_degree, const PairTable& fresh,
               const std::vector<uint8_t>& stored, Work* w) {
  const size_t nodes = w->rec.size();
  std::vector<double> mu_b(nodes, 0), mu_s(nodes, 0), partners(nodes, 0);
  for (size_t n = 0; n < nodes; ++n) {
    if (!w->known[n] || base_degree[n] == 0) continue;
    mu_b[n] = w->rec[n].sum_uncertainty / base_degree[n];
    mu_s[n] = w->rec[n].sum_score / base_degree[n];
  }
  std::vector<double> nb(nodes, 0), ns(nodes, 0);
  for (size_t p = 0; p < fresh.num_pairs(); ++p) {
    if (!stored[p]) continue;
    const size_t u = fresh.pair_user[p], i = w->users + fresh.pair_item[p];
    if (!w->known[u] && w->known[i]) nb[u] += mu_b[i], ns[u] += mu_s[i], partners[u] += 1;
    if (!w->known[i] && w->known[u]) nb[i] += mu_b[u], ns[i] += mu_s[u], partners[i] += 1;
  }
  for (size_t n = 0; n < nodes; ++n) {
    const double d = w->rec[n].degree;
    if (w->known[n]) {
      w->rec[n].sum_uncertainty = static_cast<float>(mu_b[n] * d);
      w->rec[n].sum_score = static_cast<float>(mu_s[n] * d);
    } else if (partners[n] > 0) {
      w->rec[n].sum_uncertainty = static_cast<float>(nb[n] / partners[n] * d);
      w->rec[n].sum_score = static_cast<float>(ns[n] / partners[n] * d);
    }
  }
}

// The new nodes' pilot rows fitted on the new log's pairs, with the base
// nodes' rows held (delta_records.h "pilot").
absl::Status FoldInPilot(const PairTable& fresh, const UnseenModel& model, PilotOptions o,
                         Work* w) {
  PilotData d;
  d.num_users = static_cast<uint32_t>(fresh.num_users());
  d.num_items = static_cast<uint32_t>(fresh.num_items());
  d.user = fresh.pair_user, d.item = fresh.pair_item, d.instances = fresh.instances;
  d.positives.resize(fresh.num_pairs());
  for (size_t p = 0; p < fresh.num_pairs(); ++p)
    d.positives[p] = fresh.instances[p] - fresh.negatives[p];
  d.fold.assign(fresh.num_pairs(), 0);
  PilotFactors f;
  f.dim = model.pilot_dim;
  f.bias = model.pilot_bias;
  const size_t row = size_t(f.dim) + 1;
  std::vector<uint8_t> user_fixed(w->known.begin(), w->known.begin() + w->users);
  std::vector<uint8_t> item_fixed(w->known.begin() + w->users, w->known.end());
  for (size_t n = 0; n < w->known.size(); ++n) {
    std::vector<float>& rows = n < w->users ? f.user_rows : f.item_rows;
    rows.insert(rows.end(), w->Row(n) + w->graph, w->Row(n) + w->graph + row);
  }
  o.dim = f.dim;
  absl::Status s = FoldInPilotRows(d, o, user_fixed, item_fixed, &f);
  if (!s.ok()) return s;
  for (size_t n = 0; n < w->known.size(); ++n) {
    if (w->known[n]) continue;
    const float* from = n < w->users ? f.UserRow(static_cast<uint32_t>(n))
                                     : f.ItemRow(static_cast<uint32_t>(n - w->users));
    std::copy_n(from, row, w->Row(n) + w->graph);
  }
  return absl::OkStatus();
}

uint32_t SaturatingAdd(uint32_t a, uint64_t b) {
  return static_cast<uint32_t>(std::min<uint64_t>(uint64_t{a} + b, 0xFFFFFFFFu));
}

}  // namespace

absl::StatusOr<DeltaRecords> ComputeDeltaRecords(const SnapshotReader& base, const PairTable& fresh,
                                                 const DeltaRecordOptions& options) {
  if (options.sweeps < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--delta_sweeps must be >= 1, got ", options.sweeps));
  }
  const UnseenModel& model = base.model();
  Work w;
  w.dim = model.sketch_dim;
  w.columns = options.sketch_columns;
  w.cv = options.control_variate;
  w.graph = model.GraphRowFloats();
  if (w.graph < 0 || (w.cv && w.columns + 2 != w.graph)) {
    return absl::InvalidArgumentError(
        absl::StrCat("base rows hold ", w.graph, " graph floats; the control variate layout needs ",
                     w.columns, " + 2"));
  }
  absl::Status s = LoadBaseNodes(base, fresh, &w);
  if (!s.ok()) return s;

  // Which pairs the base already stores (and so which are new).
  const size_t n = fresh.num_pairs();
  std::vector<uint64_t> us(n), is(n);
  for (size_t p = 0; p < n; ++p) {
    us[p] = fresh.user_ids[fresh.pair_user[p]];
    is[p] = fresh.item_ids[fresh.pair_item[p]];
  }
  std::unique_ptr<bool[]> found(new bool[n]);
  std::vector<float> base_rate(n);
  s = base.LookupPairs(us, is, absl::MakeSpan(found.get(), n), absl::MakeSpan(base_rate));
  if (!s.ok()) return s;

  DeltaRecords out;
  std::vector<uint32_t> base_degree(w.rec.size());
  for (size_t k = 0; k < w.rec.size(); ++k) base_degree[k] = w.rec[k].degree;
  std::vector<uint8_t> stored(n, 0);
  for (size_t p = 0; p < n; ++p) {
    const size_t u = fresh.pair_user[p], i = w.users + fresh.pair_item[p];
    const uint32_t positives = fresh.instances[p] - fresh.negatives[p];
    w.rec[u].impressions = SaturatingAdd(w.rec[u].impressions, fresh.instances[p]);
    w.rec[i].impressions = SaturatingAdd(w.rec[i].impressions, fresh.instances[p]);
    w.rec[u].positives = SaturatingAdd(w.rec[u].positives, positives);
    w.rec[i].positives = SaturatingAdd(w.rec[i].positives, positives);
    stored[p] = !found[p] || fresh.label[p] != 0;
    if (!stored[p]) ++out.carried_pairs;
    if (found[p]) continue;
    ++w.rec[u].degree, ++w.rec[i].degree;
    if (fresh.label[p] != 0) {
      w.nbrs[u].push_back(static_cast<uint32_t>(i));
      w.nbrs[i].push_back(static_cast<uint32_t>(u));
      ++out.new_positive_edges;
    }
  }
  ExtendRows(options.sweeps, &w);
  if (model.pilot_dim > 0) {
    if (absl::Status s = FoldInPilot(fresh, model, options.pilot, &w); !s.ok()) return s;
  }
  AssignComponents(&w);
  ScaleSums(base_degree, fresh, stored, &w);

  // The stored pairs and their rates under the base's rule.
  PairTable& pt = out.pairs;
  PipelineResult& r = out.result;
  pt.user_ids = fresh.user_ids;
  pt.item_ids = fresh.item_ids;
  std::vector<double> rate_sum(w.rec.size(), 0), rate_n(w.rec.size(), 0);
  double neg_rate_sum = 0;
  for (size_t p = 0; p < n; ++p) {
    if (!stored[p]) continue;
    const size_t u = fresh.pair_user[p], i = w.users + fresh.pair_item[p];
    const NodeView uv{w.rec[u], absl::MakeConstSpan(w.Row(u), w.dim)};
    const NodeView iv{w.rec[i], absl::MakeConstSpan(w.Row(i), w.dim)};
    const float rate = ScoreUnseenPair(uv, iv, model);
    pt.pair_user.push_back(fresh.pair_user[p]);
    pt.pair_item.push_back(fresh.pair_item[p]);
    pt.label.push_back(fresh.label[p]);
    pt.instances.push_back(fresh.instances[p]);
    pt.negatives.push_back(fresh.negatives[p]);
    if (!fresh.pilot_mean.empty()) pt.pilot_mean.push_back(fresh.pilot_mean[p]);
    pt.total_instances += fresh.instances[p];
    pt.total_negatives += fresh.negatives[p];
    r.rate.push_back(rate);
    r.positive_pairs += fresh.label[p] != 0;
    neg_rate_sum += double(rate) * fresh.negatives[p];
    for (size_t node : {u, i}) rate_sum[node] += double(rate) * fresh.negatives[p];
    for (size_t node : {u, i}) rate_n[node] += fresh.negatives[p];
  }
  for (size_t k = 0; k < w.rec.size(); ++k) {
    if (!w.known[k] && rate_n[k] > 0) w.rec[k].mean_rate = float(rate_sum[k] / rate_n[k]);
    if (!w.known[k]) ++(w.IsItem(k) ? out.new_items : out.new_users);
  }
  const size_t m = pt.num_pairs();
  r.geff.assign(m, 0.0f);
  r.hardness.assign(m, 0.0f);
  r.uncertainty.assign(m, 0.0f);
  r.propagated_score.assign(m, 0.0f);
  r.score.assign(m, 0.0f);
  r.achieved_negative_mean_rate = pt.total_negatives > 0 ? neg_rate_sum / pt.total_negatives : 0;
  r.model = model;
  r.rho = model.rho;
  r.resistance_route = "delta: harmonic extension";
  r.nodes.sketch_dim = w.dim;
  r.nodes.sketch = std::move(w.rows);
  r.nodes.records = std::move(w.rec);
  for (size_t k = 0; k < r.nodes.records.size(); ++k) {
    const bool item = k >= w.users;
    r.nodes.ids.push_back(item ? fresh.item_ids[k - w.users] : fresh.user_ids[k]);
    r.nodes.is_item.push_back(item ? 1 : 0);
  }
  std::vector<uint32_t> comps;
  for (const NodeRecord& rec : r.nodes.records) comps.push_back(rec.component);
  std::sort(comps.begin(), comps.end());
  r.num_components = static_cast<uint32_t>(std::unique(comps.begin(), comps.end()) - comps.begin());
  return out;
}

}  // namespace graphsieve
