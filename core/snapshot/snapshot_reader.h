// Read-only access to one published snapshot version (docs/DESIGN.md §3).
//
// DRAFT CONTRACT shared by core/snapshot (implements), server/ and tests. The
// snapshot owner may add members; changing these needs the server's owner.
//
// Open() verifies MANIFEST.json (format version, per-file checksums) and runs
// RocksDB's own checksum verification before returning, so a returned reader
// is trustworthy. Thread-safe: all lookups are const and may run concurrently
// from many threads. The reader owns its RocksDB handle; it closes when the
// last shared_ptr to it goes away.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_READER_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_READER_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/records/node_record.h"
#include "core/records/unseen_model.h"

namespace graphsieve {

class MemoryIndex;    // memory_index.h
class SnapshotStore;  // snapshot_store.h

// Where LookupPairs and the node lookups are answered from.
enum class LookupMode {
  // The version's serving index (memory_index.h): its index file mapped, or
  // for a version without one, built in memory by a scan on Open. ~10 bytes
  // of RAM per pair, lookups without I/O. The default.
  kMemory,
  // RocksDB point reads (sorted MultiGet) on every lookup: little RAM, slower.
  kRocksDb,
};
const char* LookupModeName(LookupMode mode);

// RocksDB instances open in this process over snapshot versions: one per
// kRocksDb reader, plus one per ForEachPair scan in progress over a mapped
// index (closed at the scan's end). For tests and metrics: a server that
// serves mapped versions holds none between scans (docs/SERVER.md "Memory
// across many swaps"). Thread-safe.
int64_t OpenRocksDbInstances();
// "memory" | "rocksdb"; INVALID_ARGUMENT otherwise.
absl::StatusOr<LookupMode> ParseLookupMode(absl::string_view name);

struct SnapshotReaderOptions {
  size_t block_cache_bytes = 256 << 20;  // RocksDB block cache for this version
  bool verify_checksums = true;          // file checksums + RocksDB VerifyChecksum on open
  bool warm = true;                      // kRocksDb: read every table once on open
  LookupMode lookup = LookupMode::kMemory;
  // Which part of a partitioned version to open (docs/SNAPSHOT.md
  // "Partitioned versions"); -1: whole versions only (a partitioned one is
  // FAILED_PRECONDITION). Partition 0 of an unpartitioned version is all of it.
  int partition = -1;
  // kMemory: map the version's index file when it has one (false: build the
  // index in anonymous memory by a scan, as for versions without the file —
  // the baseline of bench/server_bench.cc).
  bool use_index_file = true;
  // kMemory with the index file: MapFileOptions::huge_pages.
  bool index_huge_pages = true;
};

// A parsed summary of MANIFEST.json (the whole JSON text is kept too).
struct ManifestSummary {
  std::string version;
  std::string created_at;
  std::string method;
  std::string resistance;
  double alpha = 0, floor = 0, gamma = 0;
  int sketch_dim = 0;
  uint64_t seed = 0;  // keep-decision seed
  uint64_t instances = 0, pairs = 0, positive_pairs = 0, users = 0, items = 0, components = 0;
  double achieved_negative_mean_rate = 0;
  std::string input_digest;
  std::string pairs_table_format;  // "block" | "cuckoo" (format.h)
  uint64_t db_bytes = 0;           // bytes of all files under db/
  uint64_t index_bytes = 0;        // the serving index file (0: none, built on load)
  // The part of the version this directory holds (docs/SNAPSHOT.md
  // "Partitioned versions"); 0 of 1 for an unpartitioned version.
  uint32_t partition = 0;
  uint32_t num_partitions = 1;
  // A delta version (docs/SNAPSHOT.md "Delta versions"): the full version it
  // overrides, and the newest input it covers (RFC 3339 UTC); empty for a
  // full version.
  std::string base_version;
  std::string covers_through;
  std::string json;  // MANIFEST.json as written
};

// Where the time of Open() went (seconds).
struct SnapshotLoadStats {
  double verify_files_seconds = 0;    // manifest sizes + XXH3-64 of every file
  double verify_rocksdb_seconds = 0;  // RocksDB VerifyChecksum (kRocksDb only, see Open)
  double open_seconds = 0;            // RocksDB open read-only + meta
  double index_seconds = 0;           // kMemory: map (or scan + build); kRocksDb: warm
  bool index_mapped = false;          // kMemory: the version's index file was mapped
};

class SnapshotReader {
 public:
  // Opens the published version `version` of `store` read-only; the store
  // resolves its directory (SnapshotStore::PublishedVersionDir). With
  // verify_checksums, every file's size and XXH3-64 are checked against the
  // manifest, then RocksDB's own block checksums: by VerifyChecksum() for
  // kRocksDb, and for kMemory by the index scan itself, which reads every
  // pairs and nodes block with checksum verification on (a second full pass
  // would only repeat it). A version with an index file (kMemory) serves from
  // that file alone: it is mapped after one read pass matched both the
  // manifest's XXH3-64 and the body digest in its header, while a second
  // thread checks the RocksDB files' sizes and digests; RocksDB is not opened
  // (ForEachPair opens it for its scan and closes it at the end). Errors:
  // INVALID_ARGUMENT (not a version id),
  // NOT_FOUND (no such version), DATA_LOSS (checksum mismatch, truncated
  // manifest, missing file — the message names the file), FAILED_PRECONDITION
  // (unknown format version).
  static absl::StatusOr<std::shared_ptr<const SnapshotReader>> Open(
      const SnapshotStore& store, const std::string& version, const SnapshotReaderOptions& options);
  // The same through a store over `root` (NOT_FOUND when root is not a directory).
  static absl::StatusOr<std::shared_ptr<const SnapshotReader>> Open(
      const std::string& root, const std::string& version, const SnapshotReaderOptions& options);

  virtual ~SnapshotReader() = default;

  virtual const ManifestSummary& manifest() const = 0;
  virtual const SnapshotLoadStats& load_stats() const = 0;
  virtual const UnseenModel& model() const = 0;

  // Batched pair lookup. For each i: found[i] = whether (users[i], items[i]) is
  // a stored pair, and rates[i] its rate when found. kMemory: the in-memory
  // index; kRocksDb: sorted MultiGet in chunks of 256.
  // REQUIRES: users.size() == items.size() == found.size() == rates.size().
  virtual absl::Status LookupPairs(absl::Span<const uint64_t> users,
                                   absl::Span<const uint64_t> items, absl::Span<bool> found,
                                   absl::Span<float> rates) const = 0;

  // The node's record and sketch row for unseen pairs and the default policy
  // (core/serving/batch_scorer.h), or false when the snapshot does not know
  // it; one call whatever the lookup mode. The view points into memory the
  // reader owns — kMemory: the index; kRocksDb: a cache of the nodes met so
  // far (node_cache.h) — and stays valid as long as the reader.
  virtual bool FindNode(bool is_item, uint64_t id, NodeView* view) const = 0;

  // Node lookup into caller-owned memory (copies). Returns false when the node
  // is unknown. `sketch` must have model().sketch_dim floats.
  virtual bool LookupUser(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const = 0;
  virtual bool LookupItem(uint64_t id, NodeRecord* record, absl::Span<float> sketch) const = 0;

  // The in-memory index (LookupMode::kMemory), or nullptr (kRocksDb): its size
  // for logs and metrics.
  virtual const MemoryIndex* memory_index() const = 0;

  // Iterates all stored pairs in key order (tests, canary offline mode, export).
  virtual absl::Status ForEachPair(
      const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const = 0;
};

// <root>/CURRENT, the versions on disk, pins: see snapshot_store.h.

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_READER_H_
