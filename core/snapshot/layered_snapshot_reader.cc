#include "core/snapshot/layered_snapshot_reader.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "core/snapshot/partitioned_snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"

namespace graphsieve {
namespace {

// Bases opened for layered readers, by root, version and reader options.
struct BaseCache {
  absl::Mutex mu;
  absl::flat_hash_map<std::string, std::weak_ptr<const SnapshotReader>> bases ABSL_GUARDED_BY(mu);
};
BaseCache& Cache() {
  static BaseCache* cache = new BaseCache;
  return *cache;
}

std::string CacheKey(const std::string& root, const std::string& version,
                     const SnapshotReaderOptions& o) {
  return absl::StrCat(root, "/", version, "|", LookupModeName(o.lookup), "|", o.partition, "|",
                      o.use_index_file, "|", o.verify_checksums);
}

// Keeps `reader` as the shared reader of `key`, or returns the one already
// kept and alive (the two are the same files: keep one mapping). Drops the
// entries of readers nobody holds any more.
std::shared_ptr<const SnapshotReader> Register(const std::string& key,
                                               std::shared_ptr<const SnapshotReader> reader) {
  BaseCache& cache = Cache();
  absl::MutexLock lock(&cache.mu);
  absl::erase_if(cache.bases,
                 [&key](const auto& kv) { return kv.first != key && kv.second.expired(); });
  std::weak_ptr<const SnapshotReader>& slot = cache.bases[key];
  if (std::shared_ptr<const SnapshotReader> alive = slot.lock()) return alive;
  slot = reader;
  return reader;
}

absl::StatusOr<std::shared_ptr<const SnapshotReader>> SharedBase(const std::string& root,
                                                                 const std::string& version,
                                                                 const SnapshotReaderOptions& o) {
  const std::string key = CacheKey(root, version, o);
  BaseCache& cache = Cache();
  {
    absl::MutexLock lock(&cache.mu);
    auto it = cache.bases.find(key);
    if (it != cache.bases.end()) {
      if (std::shared_ptr<const SnapshotReader> alive = it->second.lock()) return alive;
    }
  }
  // Opened outside the lock (a checksum pass); two racing opens keep one.
  auto opened = SnapshotReader::Open(root, version, o);
  if (!opened.ok()) return opened.status();
  return Register(key, *std::move(opened));
}

}  // namespace

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

namespace {

// Part I of a delta layers over part I of its base: a delta written in
// another part count than its base's is refused before either is opened,
// naming both (the builder writes none; a copied or hand-made one may exist).
// When either manifest cannot be read, the opens below report it.
absl::Status CheckPartCounts(const std::string& root, const std::string& version) {
  auto store = SnapshotStore::Create({root});
  if (!store.ok()) return absl::OkStatus();
  absl::StatusOr<ManifestSummary> delta = ReadPublishedManifest(**store, version);
  if (!delta.ok() || delta->base_version.empty()) return absl::OkStatus();
  absl::StatusOr<ManifestSummary> base = ReadPublishedManifest(**store, delta->base_version);
  if (!base.ok() || base->num_partitions == delta->num_partitions) return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "delta version ", version, " is written in ", delta->num_partitions,
      delta->num_partitions == 1 ? " part" : " parts", ", its base ", delta->base_version, " in ",
      base->num_partitions, "; a delta must have its base's part count (build a new delta over ",
      delta->base_version, ")"));
}

}  // namespace

absl::StatusOr<std::shared_ptr<const SnapshotReader>> OpenServingVersion(
    const std::string& root, const std::string& version, const SnapshotReaderOptions& options) {
  if (absl::Status s = CheckPartCounts(root, version); !s.ok()) return s;
  auto delta = SnapshotReader::Open(root, version, options);
  if (!delta.ok()) return delta.status();
  const std::string& base_version = (*delta)->manifest().base_version;
  // A full version is kept as the shared base its deltas will layer over, so
  // the first delta after it maps nothing again and serves from the same index.
  if (base_version.empty()) return Register(CacheKey(root, version, options), *std::move(delta));
  auto base = SharedBase(root, base_version, options);
  if (!base.ok()) {
    return absl::Status(base.status().code(),
                        absl::StrCat("delta version ", version, ": its base ", base_version, ": ",
                                     base.status().message()));
  }
  const ManifestSummary& b = (*base)->manifest();
  if (!b.base_version.empty() || b.version != base_version) {
    return absl::FailedPreconditionError(absl::StrCat("delta version ", version, ": its base ",
                                                      base_version, " is not a full version"));
  }
  return std::shared_ptr<const SnapshotReader>(
      std::make_shared<LayeredSnapshotReader>(std::move(*base), std::move(*delta)));
}

uint64_t ServedPairsBound(const SnapshotReader& reader) {
  if (const auto* layered = dynamic_cast<const LayeredSnapshotReader*>(&reader)) {
    return layered->base().manifest().pairs + layered->delta().manifest().pairs;
  }
  return reader.manifest().pairs;
}

int OpenSharedBases() {
  BaseCache& cache = Cache();
  absl::MutexLock lock(&cache.mu);
  int n = 0;
  for (const auto& [key, weak] : cache.bases) n += weak.expired() ? 0 : 1;
  return n;
}

}  // namespace graphsieve
