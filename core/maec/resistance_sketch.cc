// The sketch routes of ComputeResistance (resistance.h): the sketch's
// right-hand sides, storing solved sketch columns, the node rows' exact
// coordinates, the residual share ρ and the pair sketch's distances
// (docs/METHOD.md "Control variate", "Unseen pairs"). Contracts in
// resistance_internal.h.
#include <algorithm>
#include <cmath>

#include "core/distributed/communicator.h"
#include "core/maec/resistance_internal.h"

namespace graphsieve {
namespace maec_internal {
namespace {

uint64_t SplitMix64(uint64_t* state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

double ExactPart(const PositiveGraph& g, uint32_t u, uint32_t v, uint8_t label) {
  return ControlVariateExactPart(g.degree(u), g.degree(v), label != 0);
}

}  // namespace

void SketchRhs(const ComponentLaplacian& lap, const PositiveGraph& g, int k, uint32_t begin,
               uint32_t end, uint64_t seed, RowMatrix* rhs) {
  rhs->setZero(lap.size(), end - begin);
  const double scale = 1.0 / std::sqrt(static_cast<double>(k));
  for (size_t i = 0; i < lap.size(); ++i) {
    const uint32_t u = lap.nodes[i];
    if (u >= g.num_users) break;  // users come first in a component
    for (uint64_t e = lap.row_ptr[i]; e < lap.row_ptr[i + 1]; ++e) {
      const uint32_t j = lap.cols[e];
      uint64_t state = seed ^ (uint64_t{u} * 0x100000001b3ULL) ^ (uint64_t{lap.nodes[j]} << 32);
      SplitMix64(&state);
      // SplitMix64 advances its state by a constant per call: jump to the
      // word of column `begin` (the same bits as drawing every word before).
      state += uint64_t{begin / 64} * 0x9e3779b97f4a7c15ULL;
      uint64_t bits = 0;
      for (uint32_t c = begin - begin % 64; c < end; ++c) {
        if (c % 64 == 0) bits = SplitMix64(&state);
        if (c >= begin) {
          const double q = ((bits >> (c % 64)) & 1) ? scale : -scale;
          (*rhs)(i, c - begin) += q;
          (*rhs)(j, c - begin) -= q;
        }
      }
    }
  }
}

void StoreSketchColumns(Work& w, const Task& task, const ComponentLaplacian& lap,
                        const RowMatrix& rhs, const RowMatrix& x) {
  const int k = w.o.sketch_dim;
  const size_t row = size_t(w.out->sketch_dim);
  const bool pair_sketch = w.plan.pair_sketch[task.component];
  const bool cv = pair_sketch && w.o.pair_sketch_control_variate;
  for (size_t i = 0; i < lap.size(); ++i) {
    const double inv_degree = 1.0 / lap.degree[i];
    for (uint32_t j = task.begin; j < task.end; ++j) {
      const double v = x(i, j - task.begin), shift = rhs(i, j - task.begin) * inv_degree;
      if (j < uint32_t(k)) {
        w.out->sketch[lap.nodes[i] * row + j] =
            static_cast<float>(w.o.unseen_control_variate ? v - shift : v);
      }
      if (pair_sketch) w.PairZ(lap.nodes[i], j) = static_cast<float>(cv ? v - shift : v);
    }
  }
}

void NodeRowExactCoordinates(const PositiveGraph& g, const ResistanceOptions& o,
                             ResistanceResult* out) {
  if (!o.unseen_control_variate) return;
  const size_t row = size_t(out->sketch_dim), k = size_t(o.sketch_dim);
  for (uint32_t v = 0; v < g.num_nodes(); ++v) {
    const uint32_t d = g.degree(v);
    if (d > 0)
      out->sketch[v * row + k + (v < g.num_users ? 0 : 1)] = static_cast<float>(std::sqrt(1.0 / d));
  }
}

double ResidualShare(Work& w) {
  const PositiveGraph& g = w.g;
  const uint32_t U = g.num_users, K = uint32_t(w.o.sketch_dim);
  uint64_t total = 0;
  for (uint32_t c = 0; c < g.num_components; ++c)
    total += w.plan.pair_sketch[c] ? w.plan.pairs_in[c] : 0;
  const uint64_t m = std::max<uint64_t>(1, total / 16384);
  double sums[2] = {0.0, 0.0};  // Σ ρ², count
  for (size_t p = 0; p < w.pairs.num_pairs(); ++p) {
    const uint32_t u = w.pairs.pair_user[p], v = U + w.pairs.pair_item[p], c = g.component[u];
    if (g.component[v] != c || !w.plan.pair_sketch[c]) continue;
    uint64_t h = (uint64_t{u} << 32 | w.pairs.pair_item[p]) ^ w.o.seed;
    if (SplitMix64(&h) % m != 0) continue;
    double r = 0;
    for (uint32_t j = 0; j < K; ++j) {
      const double d = double(w.PairZ(u, j)) - w.PairZ(v, j);
      r += d * d;
    }
    const double exact = ExactPart(g, u, v, w.pairs.label[p]);
    sums[0] += (r / (exact + r)) * (r / (exact + r));
    sums[1] += 1.0;
  }
  if (Distributed(w.o)) w.o.comm->AllReduceSum(absl::MakeSpan(sums, 2));
  return sums[1] > 0 ? std::sqrt(sums[0] / sums[1]) : 1.0;
}

void SketchDistances(Work& w, size_t begin, size_t end) {
  const PositiveGraph& g = w.g;
  const uint32_t U = g.num_users, B = Work::kDistBlock;
  const size_t N = g.num_nodes();
  std::vector<uint32_t> pos, urow, vrow;  // positions in [begin, end), node rows
  for (size_t p = begin; p < end; ++p) {
    const uint32_t u = w.pairs.pair_user[p], v = U + w.pairs.pair_item[p], c = g.component[u];
    if (g.component[v] != c || w.plan.route[c] != Route::kSketch) continue;
    pos.push_back(static_cast<uint32_t>(p - begin));
    urow.push_back(u);
    vrow.push_back(v);
  }
  std::vector<double> acc(pos.size(), 0.0);
  // Item rows are visited in random order: their lines are requested
  // kAhead pairs early, so the L3 misses overlap once the rows outgrow L2.
  constexpr size_t kAhead = 16;
  for (uint32_t b = 0; b < (uint32_t(w.plan.pair_k) + B - 1) / B; ++b) {
    const float* base = w.pair_z.data() + size_t(b) * N * B;
    for (size_t i = 0; i < pos.size(); ++i) {
      if (i + kAhead < pos.size()) {
        const float* ahead = base + size_t(vrow[i + kAhead]) * B;
        for (uint32_t line = 0; line < B; line += 16) __builtin_prefetch(ahead + line);
      }
      const float* zu = base + size_t(urow[i]) * B;
      const float* zv = base + size_t(vrow[i]) * B;
      float r = 0.0f;
      for (uint32_t j = 0; j < B; ++j) r += (zu[j] - zv[j]) * (zu[j] - zv[j]);
      acc[i] += r;
    }
  }
  const double scale = double(w.o.sketch_dim) / w.plan.pair_k;
  for (size_t i = 0; i < pos.size(); ++i) {
    const double exact = w.o.pair_sketch_control_variate
                             ? ExactPart(g, urow[i], vrow[i], w.pairs.label[begin + pos[i]])
                             : 0.0;
    w.out->resistance[begin + pos[i]] = exact + scale * acc[i];
  }
}

void ReducePhaseTwoColumns(Work& w) {
  const uint32_t first_block = uint32_t(w.o.sketch_dim) / Work::kDistBlock;
  if (Rank(w.o) != 0) {
    for (uint32_t col = first_block * Work::kDistBlock; col < uint32_t(w.o.sketch_dim); ++col) {
      for (uint32_t v = 0; v < w.g.num_nodes(); ++v) w.PairZ(v, col) = 0.0f;
    }
  }
  const size_t from = size_t(first_block) * w.g.num_nodes() * Work::kDistBlock;
  w.o.comm->AllReduceSum(absl::MakeSpan(w.pair_z.data() + from, w.pair_z.size() - from));
}

}  // namespace maec_internal
}  // namespace graphsieve
