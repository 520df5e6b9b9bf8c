// Read-only access to one published snapshot version (docs/DESIGN.md §3).
//
// DRAFT CONTRACT shared by core/snapshot (implements), server/ and tests. The
// snapshot owner may add members; changing these needs the server's owner.
//
// A reader comes from a VersionOpener (version_opener.h), which verifies
// MANIFEST.json (format version, per-file checksums) and runs RocksDB's own
// checksum verification before returning it, so a returned reader is
// trustworthy. Thread-safe: all lookups are const and may run concurrently
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
#include "core/snapshot/manifest.h"

namespace graphsieve {

// Where LookupPairs and the node lookups are answered from.
enum class LookupMode {
  // The version's serving index (memory_index.h): its index file mapped, or
  // for a version without one, built in memory by a scan when opened. ~10 bytes
  // of RAM per pair, lookups without I/O. The default.
  kMemory,
  // RocksDB point reads (sorted MultiGet) on every lookup: little RAM, slower.
  kRocksDb,
};
const char* LookupModeName(LookupMode mode);

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

// Where the time of opening the version went (seconds; version_opener.h).
struct SnapshotLoadStats {
  double verify_files_seconds = 0;    // manifest sizes + XXH3-64 of every file
  double verify_rocksdb_seconds = 0;  // RocksDB VerifyChecksum (kRocksDb only, VersionOpener)
  double open_seconds = 0;            // RocksDB open read-only + meta
  double index_seconds = 0;           // kMemory: map (or scan + build); kRocksDb: warm
  bool index_mapped = false;          // kMemory: the version's index file was mapped
};

class SnapshotReader {
 public:
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

  // Whether PrefetchNodes brings anything toward the cache (an in-memory
  // index answers FindNode); false: its lookups gain nothing from it.
  virtual bool prefetches() const { return false; }
  // Requests the memory FindNode(false, user) and FindNode(true, item) will
  // read, in two stages a caller issues a few lookups apart, so that one
  // pair's lines arrive while another is scored (the batch scorer's misses,
  // core/serving/batch_scorer.cc): kIds the id maps, then kRows the node
  // records and sketch rows (which need kIds' lines). A hint: no effect on
  // any answer; nothing when !prefetches().
  enum class PrefetchStage { kIds, kRows };
  virtual void PrefetchNodes(PrefetchStage stage, uint64_t user, uint64_t item) const {}

  // Iterates all stored pairs in key order (tests, canary offline mode, export).
  virtual absl::Status ForEachPair(
      const std::function<void(uint64_t user, uint64_t item, float rate)>& fn) const = 0;
};

// <root>/CURRENT, the versions on disk, pins: see snapshot_store.h.

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_SNAPSHOT_READER_H_
