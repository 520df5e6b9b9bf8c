#include "core/snapshot/layered_snapshot_reader.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"

namespace graphsieve {
LayeredSnapshotReader::LayeredSnapshotReader(std::shared_ptr<const SnapshotReader> base,
                                             std::shared_ptr<const SnapshotReader> delta)
    : base_(std::move(base)), delta_(std::move(delta)) {}

absl::Status LayeredSnapshotReader::LookupPairs(absl::Span<const uint64_t> users,
                                                absl::Span<const uint64_t> items,
                                                absl::Span<bool> found,
                                                absl::Span<float> rates) const {
  absl::Status s = delta_->LookupPairs(users, items, found, rates);
  if (!s.ok()) return s;
  // Per-thread buffers for the pairs the delta lacks (most of a batch): no allocation
  // per call once a thread has served its largest batch (as the batch scorer's).
  struct Scratch {
    std::vector<size_t> missing;
    std::vector<uint64_t> mu, mi;
    std::vector<float> mr;
    std::unique_ptr<bool[]> mf;
    size_t mf_size = 0;
  };
  thread_local Scratch sc;
  std::vector<size_t>& missing = sc.missing;
  missing.clear();
  for (size_t i = 0; i < found.size(); ++i) {
    if (!found[i]) missing.push_back(i);
  }
  if (missing.empty()) return absl::OkStatus();
  std::vector<uint64_t>& mu = sc.mu;
  std::vector<uint64_t>& mi = sc.mi;
  mu.resize(missing.size());
  mi.resize(missing.size());
  for (size_t k = 0; k < missing.size(); ++k) mu[k] = users[missing[k]], mi[k] = items[missing[k]];
  if (sc.mf_size < missing.size()) {
    sc.mf.reset(new bool[missing.size()]);
    sc.mf_size = missing.size();
  }
  bool* mf = sc.mf.get();
  std::vector<float>& mr = sc.mr;
  mr.resize(missing.size());
  s = base_->LookupPairs(mu, mi, absl::MakeSpan(mf, missing.size()), absl::MakeSpan(mr));
  if (!s.ok()) return s;
  for (size_t k = 0; k < missing.size(); ++k) {
    found[missing[k]] = mf[k];
    rates[missing[k]] = mr[k];
  }
  return absl::OkStatus();
}

bool LayeredSnapshotReader::FindNode(bool is_item, uint64_t id, NodeView* view) const {
  return delta_->FindNode(is_item, id, view) || base_->FindNode(is_item, id, view);
}

bool LayeredSnapshotReader::LookupUser(uint64_t id, NodeRecord* record,
                                       absl::Span<float> sketch) const {
  return delta_->LookupUser(id, record, sketch) || base_->LookupUser(id, record, sketch);
}

bool LayeredSnapshotReader::LookupItem(uint64_t id, NodeRecord* record,
                                       absl::Span<float> sketch) const {
  return delta_->LookupItem(id, record, sketch) || base_->LookupItem(id, record, sketch);
}

absl::Status LayeredSnapshotReader::ForEachPair(
    const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const {
  // The base's pairs go through in batches, each looked up in the delta: the
  // ones it overrides are left out. Memory stays one batch whatever the sizes
  // (a set of the delta's pairs held ~30 MiB for a day's delta over a 12M log
  // while the server profiled the version; docs/FRESHNESS.md "Memory after
  // many deltas").
  constexpr size_t kBatch = 4096;
  std::vector<uint64_t> users, items;
  std::vector<float> rates, delta_rates(kBatch);
  std::unique_ptr<bool[]> in_delta(new bool[kBatch]);
  users.reserve(kBatch);
  items.reserve(kBatch);
  rates.reserve(kBatch);
  absl::Status lookup;
  auto flush = [&]() {
    const size_t n = users.size();
    if (n == 0 || !lookup.ok()) return;
    lookup = delta_->LookupPairs(users, items, absl::MakeSpan(in_delta.get(), n),
                                 absl::MakeSpan(delta_rates.data(), n));
    if (!lookup.ok()) return;
    for (size_t k = 0; k < n; ++k) {
      if (!in_delta[k]) fn(users[k], items[k], rates[k]);
    }
    users.clear();
    items.clear();
    rates.clear();
  };
  absl::Status s = base_->ForEachPair([&](uint64_t u, uint64_t i, float r) {
    users.push_back(u);
    items.push_back(i);
    rates.push_back(r);
    if (users.size() == kBatch) flush();
  });
  if (!s.ok()) return s;
  flush();
  if (!lookup.ok()) return lookup;
  return delta_->ForEachPair(fn);
}

uint64_t ServedPairsBound(const SnapshotReader& reader) {
  if (const auto* layered = dynamic_cast<const LayeredSnapshotReader*>(&reader)) {
    return layered->base().manifest().pairs + layered->delta().manifest().pairs;
  }
  return reader.manifest().pairs;
}

}  // namespace graphsieve
