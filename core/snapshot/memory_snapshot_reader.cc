#include "core/snapshot/memory_snapshot_reader.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/snapshot/format.h"

namespace graphsieve {
namespace snapshot_internal {

MemorySnapshotReader::MemorySnapshotReader(snapshot::ParsedManifest manifest, UnseenModel model,
                                           std::string dir, SnapshotReaderOptions options,
                                           std::unique_ptr<const MemoryIndex> index,
                                           std::shared_ptr<std::atomic<int64_t>> open_dbs)
    : ReaderBase(std::move(manifest), model, std::move(dir), options),
      index_(std::move(index)),
      open_dbs_(std::move(open_dbs)) {}

MemorySnapshotReader::MemorySnapshotReader(std::unique_ptr<const RocksDbSnapshotReader> store,
                                           std::unique_ptr<const MemoryIndex> index)
    : ReaderBase(store->parsed(), store->model(), store->dir(), store->options()),
      index_(std::move(index)),
      store_(std::move(store)) {}

absl::StatusOr<std::unique_ptr<MemorySnapshotReader>> MemorySnapshotReader::BuildFrom(
    std::unique_ptr<const RocksDbSnapshotReader> store) {
  const snapshot::ParsedManifest& parsed = store->parsed();
  // The table is sized from the manifest's count before the scan: refuse a
  // count the files cannot hold (a stored pair takes >= 4 bytes: its rate)
  // rather than map memory for it.
  uint64_t file_bytes = 0;
  for (const snapshot::ManifestFileEntry& f : parsed.files) file_bytes += f.size_bytes;
  if (parsed.summary.pairs > file_bytes / snapshot::kPairValueBytes) {
    return absl::DataLossError(absl::StrCat(
        "snapshot ", parsed.summary.version, ": the manifest claims ", parsed.summary.pairs,
        " pairs, more than its ", file_bytes, " bytes of table files can hold"));
  }
  const RocksDbSnapshotReader& db = *store;
  absl::StatusOr<std::unique_ptr<const MemoryIndex>> index = MemoryIndex::Build(
      db.model().sketch_dim, parsed.summary.pairs,
      [&db](const MemoryIndex::NodeSink& fn) { return db.ForEachNode(fn); },
      [&db](const MemoryIndex::PairSink& fn) { return db.ForEachPair(fn); });
  if (!index.ok()) {
    return absl::DataLossError(absl::StrCat("snapshot ", parsed.summary.version,
                                            ": in-memory index: ", index.status().message()));
  }
  return std::unique_ptr<MemorySnapshotReader>(
      new MemorySnapshotReader(std::move(store), *std::move(index)));
}

absl::Status MemorySnapshotReader::LookupPairs(absl::Span<const uint64_t> users,
                                               absl::Span<const uint64_t> items,
                                               absl::Span<bool> found,
                                               absl::Span<float> rates) const {
  const size_t n = users.size();
  if (absl::Status s =
          snapshot_internal::CheckLookupSpans(n, items.size(), found.size(), rates.size());
      !s.ok()) {
    return s;
  }
  index_->LookupPairs(users, items, found, rates);
  return absl::OkStatus();
}

absl::Status MemorySnapshotReader::ForEachPair(
    const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const {
  if (store_ != nullptr) return store_->ForEachPair(fn);
  // A mapped index: RocksDB opened for this scan (Open digested its files;
  // block checksums are verified as the scan reads) and closed at its end,
  // without loading the pairs tables' Bloom filters (a scan never reads them):
  // the server's version profiler runs this scan on every version it adopts.
  SnapshotReaderOptions o = options();
  o.lookup = LookupMode::kRocksDb;
  o.verify_checksums = false;
  o.warm = false;
  absl::StatusOr<std::unique_ptr<OpenDb>> db =
      OpenRocksDb(dir(), parsed().pairs_format, o, open_dbs_, /*scan_only=*/true);
  if (!db.ok()) return db.status();
  const RocksDbSnapshotReader scan(parsed(), model(), *std::move(db), dir(), o);
  return scan.ForEachPair(fn);
}

bool MemorySnapshotReader::LookupNode(bool is_item, uint64_t id, NodeRecord* record,
                                      absl::Span<float> sketch) const {
  if (sketch.size() != static_cast<size_t>(model().sketch_dim)) return false;
  NodeView view;
  if (!index_->FindNode(is_item, id, &view)) return false;
  *record = view.record;
  std::copy(view.sketch.begin(), view.sketch.end(), sketch.begin());
  return true;
}

}  // namespace snapshot_internal
}  // namespace graphsieve
