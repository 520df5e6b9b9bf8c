#include "core/maec/rate_walk.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <limits>
#include <vector>

namespace graphsieve {
namespace maec_internal {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr uint32_t kBuckets = 1 << 15;  // 40 B each: the histogram stays in L2
constexpr int kMaxGatherPasses = 16;

struct Entry {
  double score;
  double weight;
};

bool Descending(const Entry& a, const Entry& b) { return a.score > b.score; }

// The upper 32 bits of a non-negative double: monotone in its value.
uint32_t UpperBits(double s) {
  uint64_t bits;
  std::memcpy(&bits, &s, sizeof bits);
  return static_cast<uint32_t>(bits >> 32);
}

// The merge walk's state: which entries are capped, linear or at the floor.
struct Walk {
  double alpha, floor, total_w;
  double cap_w = 0.0, lin_ws = 0.0, floor_w = 0.0;  // Σ w capped, Σ w·s linear, Σ w at the floor
  uint64_t left_floor = 0, capped = 0;              // entries moved by each stream
  double rho_prev = 0.0;
  double F(double rho) const { return (cap_w + rho * lin_ws + floor * floor_w) / total_w; }
  // ρ on the linear piece that ends at rho_next (f(rho_next) ≥ α).
  double Solve(double rho_next) const {
    const double rho =
        lin_ws > 0.0 ? (alpha * total_w - cap_w - floor * floor_w) / lin_ws : rho_next;
    return std::min(std::max(rho, rho_prev), rho_next);
  }
  void Move(bool leave_floor, double w, double ws, uint64_t n) {
    if (leave_floor) {
      floor_w -= w, lin_ws += ws, left_floor += n;
    } else {
      cap_w += w, lin_ws -= ws, capped += n;
    }
    if (left_floor == capped) lin_ws = 0.0;  // linear set empty: drop rounding residue
  }
};

// Per bucket (bucket 0 = the largest scores) of the positive-score entries.
struct Histogram {
  uint32_t kmin = 0;
  uint64_t span = 1;  // upper bits of the largest minus the smallest score, + 1
  std::vector<double> w, ws, smin, smax;
  std::vector<uint64_t> count;
  uint32_t Of(double s) const {
    return kBuckets - 1 - static_cast<uint32_t>(uint64_t(UpperBits(s) - kmin) * kBuckets / span);
  }
};

// One side of the walk: breakpoints c/s in descending s (c = ϱ: leaving the
// floor; c = 1: reaching the cap), a whole bucket at a time until a bucket
// is opened (its entries gathered and sorted).
struct Stream {
  double c = 1.0;
  bool leave_floor = false;
  uint32_t bucket = 0;  // kBuckets: exhausted
  std::vector<Entry> open;
  size_t next = 0;
  void Skip(const Histogram& h) {
    while (bucket < kBuckets && h.count[bucket] == 0) ++bucket;
  }
  double Lower(const Histogram& h) const {
    if (bucket == kBuckets) return kInf;
    return c / (open.empty() ? h.smax[bucket] : open[next].score);
  }
};

bool BuildHistogram(absl::Span<const double> scores, absl::Span<const uint32_t> weights,
                    Histogram* h) {
  double lo = kInf, hi = 0.0;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (weights[i] == 0 || !(scores[i] > 0.0)) continue;
    lo = std::min(lo, scores[i]);
    hi = std::max(hi, scores[i]);
  }
  if (hi == 0.0) return false;
  h->kmin = UpperBits(lo);
  h->span = uint64_t(UpperBits(hi) - h->kmin) + 1;
  h->w.assign(kBuckets, 0.0);
  h->ws.assign(kBuckets, 0.0);
  h->smin.assign(kBuckets, kInf);
  h->smax.assign(kBuckets, 0.0);
  h->count.assign(kBuckets, 0);
  for (size_t i = 0; i < scores.size(); ++i) {
    const double s = scores[i], w = weights[i];
    if (w == 0 || !(s > 0.0)) continue;
    const uint32_t b = h->Of(s);
    h->w[b] += w;
    h->ws[b] += w * s;
    h->smin[b] = std::min(h->smin[b], s);
    h->smax[b] = std::max(h->smax[b], s);
    ++h->count[b];
  }
  return true;
}

// The entries of `st`'s bucket in descending score (a copy of the other
// stream's when it has the same bucket open, else one pass over the scores).
void OpenBucket(absl::Span<const double> scores, absl::Span<const uint32_t> weights,
                const Histogram& h, const Stream& other, Stream* st, int* passes) {
  st->next = 0;
  if (other.bucket == st->bucket && !other.open.empty()) {
    st->open.assign(other.open.begin(), other.open.end());
    return;
  }
  ++*passes;
  st->open.clear();
  st->open.reserve(h.count[st->bucket]);
  for (size_t i = 0; i < scores.size(); ++i) {
    const double s = scores[i];
    if (weights[i] == 0 || !(s > 0.0) || h.Of(s) != st->bucket) continue;
    st->open.push_back({s, double(weights[i])});
  }
  std::sort(st->open.begin(), st->open.end(), Descending);
}

// Sorts by descending score: an LSD radix sort (two 16-bit passes) on the
// upper 32 bits, then each run of equal upper bits by std::sort.
void SortDescending(std::vector<Entry>* v) {
  const size_t n = v->size();
  std::vector<Entry> tmp(n);
  std::vector<size_t> count(1 << 16);
  for (int shift : {0, 16}) {
    std::fill(count.begin(), count.end(), 0);
    for (const Entry& e : *v) ++count[(UpperBits(e.score) >> shift) & 0xffff];
    size_t sum = 0;
    for (int d = (1 << 16) - 1; d >= 0; --d) {  // descending: larger digits first
      const size_t c = count[d];
      count[d] = sum;
      sum += c;
    }
    for (const Entry& e : *v) tmp[count[(UpperBits(e.score) >> shift) & 0xffff]++] = e;
    v->swap(tmp);
  }
  for (size_t i = 0; i < n;) {
    size_t j = i + 1;
    while (j < n && UpperBits((*v)[j].score) == UpperBits((*v)[i].score)) ++j;
    if (j - i > 1) std::sort(v->begin() + i, v->begin() + j, Descending);
    i = j;
  }
}

}  // namespace

double SolveRhoSorted(absl::Span<const double> scores, absl::Span<const uint32_t> weights,
                      double alpha, double floor, double total_w) {
  assert(scores.size() == weights.size() && total_w > 0);
  std::vector<Entry> pos;
  for (size_t i = 0; i < scores.size(); ++i) {
    if (weights[i] != 0 && scores[i] > 0.0) pos.push_back({scores[i], double(weights[i])});
  }
  SortDescending(&pos);
  Walk walk{alpha, floor, total_w};
  walk.floor_w = total_w;
  size_t i_floor = 0, i_cap = 0;
  while (true) {
    const double next_floor = i_floor < pos.size() ? floor / pos[i_floor].score : kInf;
    const double next_cap = i_cap < pos.size() ? 1.0 / pos[i_cap].score : kInf;
    const double rho_next = std::min(next_floor, next_cap);
    if (rho_next == kInf) break;
    if (walk.F(rho_next) >= alpha) return walk.Solve(rho_next);
    const Entry& e = next_floor <= next_cap ? pos[i_floor++] : pos[i_cap++];
    walk.Move(next_floor <= next_cap, e.weight, e.weight * e.score, 1);
    walk.rho_prev = rho_next;
  }
  return pos.empty() ? 1.0 : 1.0 / pos.back().score;  // α = f(∞): all capped
}

double SolveRho(absl::Span<const double> scores, absl::Span<const uint32_t> weights, double alpha,
                double floor, double total_w, RateWalkStats* stats) {
  assert(scores.size() == weights.size() && total_w > 0);
  RateWalkStats local;
  RateWalkStats& st = stats != nullptr ? *stats : local;
  Histogram h;
  if (!BuildHistogram(scores, weights, &h)) return 1.0;  // no positive score: f is constant
  Walk walk{alpha, floor, total_w};
  walk.floor_w = total_w;
  Stream fs, cs;
  fs.c = floor, fs.leave_floor = true;
  cs.c = 1.0, cs.leave_floor = false;
  fs.Skip(h);
  cs.Skip(h);
  while (true) {
    const double nf = fs.Lower(h), nc = cs.Lower(h);
    const double rho_next = std::min(nf, nc);
    if (rho_next == kInf) break;
    const bool floor_side = nf <= nc;
    Stream& s = floor_side ? fs : cs;
    if (s.open.empty()) {
      // The whole bucket, if every breakpoint in it comes before the other
      // side's next one and f is still below α after the last of them.
      const double last = s.c / h.smin[s.bucket];
      Walk after = walk;
      after.Move(s.leave_floor, h.w[s.bucket], h.ws[s.bucket], h.count[s.bucket]);
      if (last <= (floor_side ? nc : nf) && after.F(last) < alpha) {
        walk = after;
        walk.rho_prev = last;
        ++s.bucket;
        s.Skip(h);
        continue;
      }
      if (st.gather_passes == kMaxGatherPasses) {
        st.fell_back = true;
        return SolveRhoSorted(scores, weights, alpha, floor, total_w);
      }
      OpenBucket(scores, weights, h, floor_side ? cs : fs, &s, &st.gather_passes);
      continue;
    }
    // Inside an open bucket: one entry at a time, as the sorted walk.
    if (walk.F(rho_next) >= alpha) return walk.Solve(rho_next);
    const Entry& e = s.open[s.next++];
    walk.Move(s.leave_floor, e.weight, e.weight * e.score, 1);
    walk.rho_prev = rho_next;
    if (s.next == s.open.size()) {
      s.open.clear();
      ++s.bucket;
      s.Skip(h);
    }
  }
  // α = f(∞): all capped; ρ at the last breakpoint, 1 / the smallest score.
  uint32_t last = kBuckets - 1;
  while (h.count[last] == 0) --last;
  return 1.0 / h.smin[last];
}

}  // namespace maec_internal
}  // namespace graphsieve
