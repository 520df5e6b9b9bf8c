// The one object that opens snapshot versions (docs/DESIGN.md §1.1 "The
// version opener"), owned by whoever serves them: the server's
// SnapshotManager, the CLI's offline reader (client/snapshot_rates.h), a
// delta build over its base. It picks the reader for the lookup mode
// (memory_snapshot_reader.h, rocksdb_snapshot_reader.h), layers a delta over
// its base (layered_snapshot_reader.h) and routes a partitioned version's
// parts (partitioned_snapshot_reader.h); the abstract reader
// (snapshot_reader.h) knows none of them.
//
// It keeps a weak reference to every full version Open() opened (served alone
// or as a base), so a delta over a base that is served, or that an older
// delta's reader still holds, maps nothing again: the base's index stays one
// mapping however many deltas arrive, and a server keeps it resident across
// their swaps. It counts the RocksDB instances open over its versions. Both
// belong to this object: two openers share nothing.
//
// Thread-safety: thread-safe. Readers may outlive their opener.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_VERSION_OPENER_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_VERSION_OPENER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "core/snapshot/snapshot_reader.h"

namespace graphsieve {

class MemoryIndex;    // memory_index.h
class SnapshotStore;  // snapshot_store.h

class VersionOpener {
 public:
  VersionOpener();
  VersionOpener(const VersionOpener&) = delete;
  VersionOpener& operator=(const VersionOpener&) = delete;

  // Opens `version` under `root` for serving: a full version (part
  // `options.partition` of a partitioned one) as OpenStored, kept as the
  // shared base its deltas layer over; a delta version layered over its base
  // (opened once and shared, see above). A partitioned delta is opened part
  // by part: part `options.partition` of the delta over the same part of its
  // base. Errors: OpenStored's, for the delta and then for the base (the
  // message names which); FAILED_PRECONDITION when the base is itself a
  // delta, its version does not match, or the delta's part count is not its
  // base's (naming both versions and both counts).
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> Open(const std::string& root,
                                                             const std::string& version,
                                                             const SnapshotReaderOptions& options);

  // Opens the published version `version` of `store` read-only as stored:
  // one directory (a delta's own layer, without its base); the store
  // resolves it (SnapshotStore::PublishedPartDir). With verify_checksums,
  // every file's size and XXH3-64 are checked against the manifest, then
  // RocksDB's own block checksums: by VerifyChecksum() for kRocksDb, and for
  // kMemory by the index scan itself, which reads every pairs and nodes block
  // with checksum verification on (a second full pass would only repeat it).
  // A version with an index file (kMemory) serves from that file alone: it is
  // mapped after one read pass matched both the manifest's XXH3-64 and the
  // body digest in its header, while a second thread checks the RocksDB
  // files' sizes and digests; RocksDB is not opened (ForEachPair opens it for
  // its scan and closes it at the end). Errors: INVALID_ARGUMENT (not a
  // version id), NOT_FOUND (no such version), DATA_LOSS (checksum mismatch,
  // truncated manifest, missing file — the message names the file),
  // FAILED_PRECONDITION (unknown format version).
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> OpenStored(
      const SnapshotStore& store, const std::string& version,
      const SnapshotReaderOptions& options) const;
  // The same through a store over `root` (NOT_FOUND when root is not a directory).
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> OpenStored(
      const std::string& root, const std::string& version,
      const SnapshotReaderOptions& options) const;

  // Opens every part of the published `version` with `options` (its
  // `partition` is ignored) as one reader (partitioned_snapshot_reader.h),
  // for a program that needs the whole version in one process. An
  // unpartitioned version is returned as OpenStored opens it. Errors:
  // OpenStored's for any part (the message names the part), DATA_LOSS when a
  // part's manifest disagrees with part 0's on the part count.
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> OpenAllParts(
      const SnapshotStore& store, const std::string& version, SnapshotReaderOptions options) const;

  // Full versions Open() keeps that some reader still holds (tests, metrics).
  int SharedBases() const;
  // RocksDB instances open over versions this opener opened: one per
  // kRocksDb reader, plus one per ForEachPair scan in progress over a mapped
  // index (closed at the scan's end). A server that serves mapped versions
  // holds none between scans (docs/SERVER.md "Memory across many swaps").
  int64_t OpenRocksDbInstances() const { return open_dbs_->load(std::memory_order_relaxed); }

 private:
  // Keeps `reader` as the shared reader of `key`, or returns the one already
  // kept and alive (the same files: keep one mapping).
  std::shared_ptr<const SnapshotReader> Register(const std::string& key,
                                                 std::shared_ptr<const SnapshotReader> reader);
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> SharedBase(
      const std::string& root, const std::string& version, const SnapshotReaderOptions& options);

  // Shared with the RocksDB handles it opened, which may outlive the opener.
  const std::shared_ptr<std::atomic<int64_t>> open_dbs_;
  mutable absl::Mutex mu_;
  // Full versions opened by Open(), by root, version and reader options.
  absl::flat_hash_map<std::string, std::weak_ptr<const SnapshotReader>> bases_ ABSL_GUARDED_BY(mu_);
};

// The in-memory index a reader an opener opened answers from, for its size
// and residency (logs, metrics): a kMemory reader's, a delta's base's (the
// large one); nullptr for kRocksDb and a reader of all parts.
const MemoryIndex* ServingIndex(const SnapshotReader& reader);
// Every in-memory index the reader answers from: a delta's own, then its
// base's; empty for kRocksDb (what a swap may release the pages of).
std::vector<const MemoryIndex*> ServingIndexes(const SnapshotReader& reader);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_VERSION_OPENER_H_
