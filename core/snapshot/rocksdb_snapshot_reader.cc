#include "core/snapshot/rocksdb_snapshot_reader.h"

#include <algorithm>
#include <numeric>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/snapshot/format.h"
#include "rocksdb/cache.h"
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

OpenDb::~OpenDb() {
  if (db == nullptr) return;
  for (auto* h : handles) db->DestroyColumnFamilyHandle(h);
  db->Close();
  if (open_dbs != nullptr) open_dbs->fetch_sub(1, std::memory_order_relaxed);
}

absl::StatusOr<std::unique_ptr<OpenDb>> OpenRocksDb(const std::string& dir,
                                                    snapshot::TableFormat format,
                                                    const SnapshotReaderOptions& options,
                                                    std::shared_ptr<std::atomic<int64_t>> open_dbs,
                                                    bool scan_only) {
  snapshot::InitRocksDbDefaults();
  auto out = std::make_unique<OpenDb>();
  out->cache = rocksdb::NewLRUCache(std::max<size_t>(options.block_cache_bytes, 1 << 20));
  rocksdb::DBOptions db_options;
  db_options.info_log = snapshot::NullLogger();
  // CuckooTable requires mmap reads. Block-based tables use pread: mmapped
  // pages of a scanned table would count as the server's RSS.
  db_options.allow_mmap_reads = format == snapshot::TableFormat::kCuckoo;
  db_options.max_open_files = -1;
  db_options.paranoid_checks = true;
  std::vector<rocksdb::ColumnFamilyDescriptor> cfs = {
      {rocksdb::kDefaultColumnFamilyName, snapshot::SmallCfOptions(out->cache)},
      {snapshot::kPairsCf, snapshot::PairsCfOptions(format, false, out->cache, scan_only)},
      {snapshot::kNodesCf, snapshot::SmallCfOptions(out->cache)},
      {snapshot::kMetaCf, snapshot::SmallCfOptions(out->cache)},
  };
  const std::string db_dir = absl::StrCat(dir, "/", snapshot::kDbDir);
  rocksdb::DB* raw = nullptr;
  rocksdb::Status rs = rocksdb::DB::OpenForReadOnly(db_options, db_dir, cfs, &out->handles, &raw);
  if (!rs.ok()) {
    return absl::DataLossError(absl::StrCat(db_dir, ": cannot open: ", rs.ToString()));
  }
  out->db.reset(raw);
  if (open_dbs != nullptr) open_dbs->fetch_add(1, std::memory_order_relaxed);
  out->open_dbs = std::move(open_dbs);
  return out;
}

using snapshot::FromRocks;

RocksDbSnapshotReader::RocksDbSnapshotReader(snapshot::ParsedManifest manifest, UnseenModel model,
                                             std::unique_ptr<OpenDb> db, std::string dir,
                                             SnapshotReaderOptions options)
    : ReaderBase(std::move(manifest), model, std::move(dir), options),
      db_(std::move(db)),
      handles_(db_->handles),
      nodes_(std::make_unique<const NodeCache>(*this)) {}

bool RocksDbSnapshotReader::FindNode(bool is_item, uint64_t id, NodeView* view) const {
  const CachedNode* node = nodes_->Find(is_item, id);
  if (node == nullptr) return false;
  *view = node->view();
  return true;
}

absl::Status RocksDbSnapshotReader::LookupPairs(absl::Span<const uint64_t> users,
                                                absl::Span<const uint64_t> items,
                                                absl::Span<bool> found,
                                                absl::Span<float> rates) const {
  const size_t n = users.size();
  if (absl::Status s =
          snapshot_internal::CheckLookupSpans(n, items.size(), found.size(), rates.size());
      !s.ok()) {
    return s;
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
    db_->db->MultiGet(ro, handles_[1], m, sc.slices.data(), sc.values.data(), sc.statuses.data(),
                      /*sorted_input=*/true);
    for (size_t k = 0; k < m; ++k) {
      const uint32_t i = sc.order[begin + k];
      const rocksdb::Status& st = sc.statuses[k];
      if (st.ok()) {
        if (sc.values[k].size() != snapshot::kPairValueBytes) {
          return absl::DataLossError(absl::StrCat("snapshot ", manifest().version, ": pair (",
                                                  users[i], ",", items[i], ") has a ",
                                                  sc.values[k].size(), "-byte value"));
        }
        found[i] = true;
        rates[i] = snapshot::DecodeRate(sc.values[k].data());
      } else if (st.IsNotFound()) {
        found[i] = false;
        rates[i] = 0.0f;
      } else {
        return FromRocks(st, absl::StrCat("snapshot ", manifest().version, " pairs"));
      }
      sc.values[k].Reset();
    }
  }
  return absl::OkStatus();
}

absl::Status RocksDbSnapshotReader::ForEachPair(
    const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.verify_checksums = true;
  ro.readahead_size = 4 << 20;
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(ro, handles_[1]));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key(), v = it->value();
    if (k.size() != snapshot::kPairKeyBytes || v.size() != snapshot::kPairValueBytes) {
      return absl::DataLossError(absl::StrCat("snapshot ", manifest().version,
                                              ": pairs entry with ", k.size(), "-byte key and ",
                                              v.size(), "-byte value"));
    }
    fn(snapshot::GetBigEndian64(k.data()), snapshot::GetBigEndian64(k.data() + 8),
       snapshot::DecodeRate(v.data()));
  }
  return FromRocks(it->status(), absl::StrCat("snapshot ", manifest().version, " pairs"));
}

absl::Status RocksDbSnapshotReader::ForEachNode(const MemoryIndex::NodeSink& fn) const {
  rocksdb::ReadOptions ro;
  ro.fill_cache = false;
  ro.verify_checksums = true;
  std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(ro, handles_[2]));
  NodeRecord record;
  std::vector<float> sketch(static_cast<size_t>(model().sketch_dim));
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    rocksdb::Slice k = it->key(), v = it->value();
    if (k.size() != snapshot::kNodeKeyBytes || (k[0] != 0 && k[0] != 1)) {
      return absl::DataLossError(absl::StrCat("snapshot ", manifest().version,
                                              ": nodes entry with a malformed ", k.size(),
                                              "-byte key"));
    }
    const uint64_t id = snapshot::GetBigEndian64(k.data() + 1);
    absl::Status s = snapshot::DecodeNodeValue(absl::string_view(v.data(), v.size()), &record,
                                               absl::MakeSpan(sketch));
    if (!s.ok()) {
      return absl::DataLossError(
          absl::StrCat("snapshot ", manifest().version, ": node ", id, ": ", s.message()));
    }
    fn(k[0] == 1, id, record, sketch);
  }
  return FromRocks(it->status(), absl::StrCat("snapshot ", manifest().version, " nodes"));
}

absl::Status RocksDbSnapshotReader::Warm() const {
  for (size_t cf : {size_t{1}, size_t{2}}) {
    rocksdb::ReadOptions ro;
    ro.fill_cache = true;
    std::unique_ptr<rocksdb::Iterator> it(db_->db->NewIterator(ro, handles_[cf]));
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
    absl::Status s = FromRocks(it->status(), "warm");
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

bool RocksDbSnapshotReader::LookupNode(bool is_item, uint64_t id, NodeRecord* record,
                                       absl::Span<float> sketch) const {
  if (sketch.size() != static_cast<size_t>(model().sketch_dim)) return false;
  char key[snapshot::kNodeKeyBytes];
  snapshot::EncodeNodeKey(is_item, id, key);
  rocksdb::PinnableSlice value;
  rocksdb::ReadOptions ro;
  rocksdb::Status st = db_->db->Get(ro, handles_[2], rocksdb::Slice(key, sizeof(key)), &value);
  if (!st.ok()) return false;
  return snapshot::DecodeNodeValue(absl::string_view(value.data(), value.size()), record, sketch)
      .ok();
}

}  // namespace snapshot_internal
}  // namespace graphsieve
