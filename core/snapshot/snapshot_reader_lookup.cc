// SnapshotReaderImpl's lookups and scans (snapshot_reader_internal.h): point
// lookups from the serving index or RocksDB, full-table scans, and the
// in-memory index built from them. Open lives in snapshot_reader.cc.
#include <algorithm>
#include <numeric>

#include "absl/strings/str_cat.h"
#include "core/snapshot/format.h"
#include "core/snapshot/snapshot_reader_internal.h"
#include "rocksdb/db.h"

namespace graphsieve {
namespace snapshot_internal {
namespace {

// MultiGet batch; RocksDB's batched path is tuned for a few hundred keys.
constexpr size_t kMultiGetChunk = 256;

struct Scratch {
  std::vector<uint32_t> order;
  std::vector<char> keys;
  std::vector<rocksdb::Slice> slices;
  std::vector<rocksdb::PinnableSlice> values;
  std::vector<rocksdb::Status> statuses;
};

}  // namespace

using snapshot::FromRocks;

bool SnapshotReaderImpl::FindNode(bool is_item, uint64_t id, NodeView* view) const {
  // In-memory snapshots answer without I/O or locks.
  if (index_ != nullptr) return index_->FindNode(is_item, id, view);
  const CachedNode* node = nodes_->Find(is_item, id);
  if (node == nullptr) return false;
  *view = node->view();
  return true;
}

absl::Status SnapshotReaderImpl::LookupPairs(absl::Span<const uint64_t> users,
                                             absl::Span<const uint64_t> items,
                                             absl::Span<bool> found,
                                             absl::Span<float> rates) const {
  const size_t n = users.size();
  if (items.size() != n || found.size() != n || rates.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat("LookupPairs: users has ", n, " entries, items ",
                                                   items.size(), ", found ", found.size(),
                                                   ", rates ", rates.size(), "; all must match"));
  }
  if (index_ != nullptr) {
    index_->LookupPairs(users, items, found, rates);
    return absl::OkStatus();
  }
  thread_local Scratch scratch;
  Scratch& sc = scratch;
  sc.order.resize(n);
  std::iota(sc.order.begin(), sc.order.end(), 0u);
  std::sort(sc.order.begin(), sc.order.end(), [&](uint32_t a, uint32_t b) {
    return users[a] != users[b] ? users[a] < users[b] : items[a] < items[b];
  });
  sc.keys.resize(n * snapshot::kPairKeyBytes);
  sc.slices.resize(std::min(n, kMultiGetChunk));
  if (sc.values.size() < kMultiGetChunk) sc.values.resize(kMultiGetChunk);
  sc.statuses.resize(kMultiGetChunk);
  for (size_t k = 0; k < n; ++k) {
    char* key = sc.keys.data() + k * snapshot::kPairKeyBytes;
    snapshot::EncodePairKey(users[sc.order[k]], items[sc.order[k]], key);
  }
  rocksdb::ReadOptions ro;
  ro.verify_checksums = false;  // verified once on Open
  for (size_t begin = 0; begin < n; begin += kMultiGetChunk) {
    const size_t m = std::min(kMultiGetChunk, n - begin);
    for (size_t k = 0; k < m; ++k) {
      sc.slices[k] = rocksdb::Slice(sc.keys.data() + (begin + k) * snapshot::kPairKeyBytes,
                                    snapshot::kPairKeyBytes);
      sc.values[k].Reset();
    }
    db_->MultiGet(ro, handles_[1], m, sc.slices.data(), sc.values.data(), sc.statuses.data(),
                  /*sorted_input=*/true);
    for (size_t k = 0; k < m; ++k) {
      const uint32_t i = sc.order[begin + k];
      const rocksdb::Status& st = sc.statuses[k];
      if (st.ok()) {
        if (sc.values[k].size() != snapshot::kPairValueBytes) {
          return absl::DataLossError(absl::StrCat("snapshot ", parsed_.summary.version, ": pair (",
                                                  users[i], ",", items[i], ") has a ",
                                                  sc.values[k].size(), "-byte value"));
        }
        found[i] = true;
        rates[i] = snapshot::DecodeRate(sc.values[k].data());
      } else if (st.IsNotFound()) {
        found[i] = false;
        rates[i] = 0.0f;
      } else {
        return FromRocks(st, absl::StrCat("snapshot ", parsed_.summary.version, " pairs"));
      }
      sc.values[k].Reset();
    }
  }
  return absl::OkStatus();
}

absl::Status SnapshotReaderImpl::ForEachPair(
    const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const {
  if (db_ == nullptr) {
    absl::StatusOr<std::unique_ptr<const SnapshotReaderImpl>> db = OpenScanDb();
    if (!db.ok()) return db.status();
    return (*db)->ForEachPair(fn);  // RocksDB closes here, with the scan
  }
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.verify_checksums = true;
  ro.readahead_size = 4 << 20;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, handles_[1]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key(), v = it->value();
    if (k.size() != snapshot::kPairKeyBytes || v.size() != snapshot::kPairValueBytes) {
      return absl::DataLossError(absl::StrCat("snapshot ", parsed_.summary.version,
                                              ": pairs entry with ", k.size(), "-byte key and ",
                                              v.size(), "-byte value"));
    }
    fn(snapshot::GetBigEndian64(k.data()), snapshot::GetBigEndian64(k.data() + 8),
       snapshot::DecodeRate(v.data()));
  }
  return FromRocks(it->status(), absl::StrCat("snapshot ", parsed_.summary.version, " pairs"));
}

absl::Status SnapshotReaderImpl::ForEachNode(const MemoryIndex::NodeSink& fn) const {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.verify_checksums = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, handles_[2]));
  NodeRecord record;
  std::vector<float> sketch(static_cast<size_t>(model_.sketch_dim));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key(), v = it->value();
    if (k.size() != snapshot::kNodeKeyBytes || (k[0] != 0 && k[0] != 1)) {
      return absl::DataLossError(absl::StrCat("snapshot ", parsed_.summary.version,
                                              ": nodes entry with a malformed ", k.size(),
                                              "-byte key"));
    }
    const uint64_t id = snapshot::GetBigEndian64(k.data() + 1);
    absl::Status s = snapshot::DecodeNodeValue(absl::string_view(v.data(), v.size()), &record,
                                               absl::MakeSpan(sketch));
    if (!s.ok()) {
      return absl::DataLossError(
          absl::StrCat("snapshot ", parsed_.summary.version, ": node ", id, ": ", s.message()));
    }
    fn(k[0] == 1, id, record, sketch);
  }
  return FromRocks(it->status(), absl::StrCat("snapshot ", parsed_.summary.version, " nodes"));
}

absl::Status SnapshotReaderImpl::BuildIndex() {
  // The table is sized from the manifest's count before the scan: refuse a
  // count the files cannot hold (a stored pair takes >= 4 bytes: its rate)
  // rather than map memory for it.
  uint64_t file_bytes = 0;
  for (const snapshot::ManifestFileEntry& f : parsed_.files) file_bytes += f.size_bytes;
  if (parsed_.summary.pairs > file_bytes / snapshot::kPairValueBytes) {
    return absl::DataLossError(absl::StrCat(
        "snapshot ", parsed_.summary.version, ": the manifest claims ", parsed_.summary.pairs,
        " pairs, more than its ", file_bytes, " bytes of table files can hold"));
  }
  absl::StatusOr<std::unique_ptr<const MemoryIndex>> index = MemoryIndex::Build(
      model_.sketch_dim, parsed_.summary.pairs,
      [this](const MemoryIndex::NodeSink& fn) { return ForEachNode(fn); },
      [this](const MemoryIndex::PairSink& fn) { return ForEachPair(fn); });
  if (!index.ok()) {
    return absl::DataLossError(absl::StrCat("snapshot ", parsed_.summary.version,
                                            ": in-memory index: ", index.status().message()));
  }
  index_ = std::move(*index);
  return absl::OkStatus();
}

absl::Status SnapshotReaderImpl::Warm() const {
  for (size_t cf : {size_t{1}, size_t{2}}) {
    rocksdb::ReadOptions ro;
    ro.fill_cache = true;
    std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(ro, handles_[cf]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    absl::Status s = FromRocks(it->status(), "warm");
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

bool SnapshotReaderImpl::LookupNode(bool is_item, uint64_t id, NodeRecord* record,
                                    absl::Span<float> sketch) const {
  if (sketch.size() != static_cast<size_t>(model_.sketch_dim)) return false;
  if (index_ != nullptr) {
    NodeView view;
    if (!index_->FindNode(is_item, id, &view)) return false;
    *record = view.record;
    std::copy(view.sketch.begin(), view.sketch.end(), sketch.begin());
    return true;
  }
  char key[snapshot::kNodeKeyBytes];
  snapshot::EncodeNodeKey(is_item, id, key);
  rocksdb::PinnableSlice value;
  rocksdb::ReadOptions ro;
  rocksdb::Status st = db_->Get(ro, handles_[2], rocksdb::Slice(key, sizeof(key)), &value);
  if (!st.ok()) return false;
  return snapshot::DecodeNodeValue(absl::string_view(value.data(), value.size()), record, sketch)
      .ok();
}

absl::StatusOr<std::unique_ptr<const SnapshotReaderImpl>> SnapshotReaderImpl::OpenScanDb() const {
  SnapshotReaderOptions o = options_;
  o.lookup = LookupMode::kRocksDb;
  o.verify_checksums = false;
  o.warm = false;
  absl::StatusOr<std::unique_ptr<OpenDb>> db = OpenRocksDb(dir_, parsed_.pairs_format, o);
  if (!db.ok()) return db.status();
  return std::make_unique<const SnapshotReaderImpl>(parsed_, model_, std::move(*db), dir_, o);
}

}  // namespace snapshot_internal
}  // namespace graphsieve
