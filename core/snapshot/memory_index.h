// The serving index of one snapshot version: every stored pair's rate and
// every node's record and sketch row. The builder writes it as a file of the
// version (index.gsi, covered by the manifest's checksums; the layout is in
// docs/SNAPSHOT.md "The serving index file") and the server maps it (MapFile):
// loading a version costs a checksum pass and an mmap, and a swap holds no
// second anonymous copy. For snapshots written before the file existed the
// index is built in anonymous memory (Build) by one scan of the RocksDB store.
//
// Why: RocksDB point lookups cost 0.3–2 µs per pair (block-based ~0.45M/s per
// core, CuckooTable ~1.2M/s through the batched path on this machine), which
// caps a 2-core server near 1M pairs/s. The pairs of a snapshot are a static
// key → float map, so the server keeps them in a flat open-addressing table:
//   - nodes get dense ids (users 0..U-1, items 0..I-1) through two small
//     absl::flat_hash_maps (a few MB, cache resident);
//   - each user's pairs live in their own small open-addressing region of
//     8-byte slots {item index, rate}, sized n + n/4 + 1 for the user's n
//     pairs (load factor <= 0.8, always one free slot so a miss ends), one
//     after the other in one array; linear probing inside the region from a
//     hash of the item index, the region in key order (RegionOrder) so an
//     absent item's probe ends as soon as a stored one's. About 10.5 bytes
//     per pair (11.7M pairs: ~117 MiB), read with one cache miss per lookup;
//   - a batch lookup goes in rounds of 32 pairs and passes: prefetch the id
//     maps for every key, find the ids and prefetch the region bounds, compute
//     and prefetch the home slot's line, then probe that line, so the cache
//     misses of a round overlap instead of queueing; a probe that must read
//     on prefetches its next line and waits with the others set aside, so
//     that miss overlaps too (docs/SERVER.md "Request path").
// RocksDB stays the system of record (checksummed, versioned, published
// atomically); the index is derived from it and verified against the manifest
// counts. docs/SNAPSHOT.md has the measurements behind the choice.
//
// Thread-safety: immutable after Build()/MapFile(); all lookups are const and
// may run concurrently. A mapped index owns its mapping (munmap on destruction).
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_MEMORY_INDEX_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_MEMORY_INDEX_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/records/node_record.h"

namespace graphsieve {

// How each user's region holds its pairs (docs/SNAPSHOT.md "Ordered regions").
//   kInsertion: plain linear probing; a probe for an absent item reads on to
//     the first free slot (about 13 slots at the index's load of 0.8).
//   kKeyOrdered: ordered linear probing (Amble and Knuth, 1974): along the
//     probe from an item's home slot, every item met before it is smaller,
//     so a probe also ends at the first larger item (an absent item reads
//     about as many slots as a stored one, about 3). Still a valid
//     kInsertion layout: a reader that probes plainly finds the same pairs.
// The builder writes kKeyOrdered and says so in the manifest
// (storage.serving_index.region_order); files written before are kInsertion.
enum class RegionOrder { kInsertion, kKeyOrdered };

// What the index file says about itself besides the tables (docs/SNAPSHOT.md).
struct IndexFileInfo {
  uint32_t format_version = 0;
  uint32_t partition = 0;       // the part this file serves (0-based)
  uint32_t num_partitions = 1;  // parts of the version (core/io/partition.h)
  std::string unseen_model;     // snapshot::EncodeUnseenModel text
};

// How MapFile checks the file's bytes before mapping it.
struct MapFileOptions {
  // Read the file once (pread, not through the mapping) and check the XXH3-64
  // of its body against the header's; with check_file_xxh3 also the whole
  // file's against the manifest's (`file_xxh3`, `file_bytes`) in the same pass.
  bool verify = true;
  bool check_file_xxh3 = false;
  uint64_t file_xxh3 = 0;
  uint64_t file_bytes = 0;
  // Map the file with 2 MiB pages where the kernel can (docs/SERVER.md "Huge
  // pages for the mapped index"): a random lookup over a 4 KiB-page mapping
  // of hundreds of MB misses the TLB, and its page walk is most of the wait.
  // The file's clean page-cache pages are dropped (POSIX_FADV_DONTNEED: pages
  // another mapping uses stay), the mapping is advised MADV_HUGEPAGE and read
  // once through MADV_POPULATE_READ in windows, so the page cache holds it in
  // 2 MiB folios, and each window's page-table entries are dropped again:
  // the mapping joins the RSS only as lookups read it, as without this. Costs
  // one read of the file at load (from disk when it was cached before). A
  // hint throughout: where the kernel or file system cannot, the mapping
  // keeps 4 KiB pages and lookups are the same.
  bool huge_pages = true;
  // The regions' layout, as the version's manifest states it (the file does
  // not record it). kKeyOrdered on a file that is not would answer some
  // stored pairs as absent; kInsertion is right for every file.
  RegionOrder region_order = RegionOrder::kInsertion;
};

class MemoryIndex {
 public:
  // Streams the snapshot into the index. `for_each_node` must call its
  // callback once per node (any order) and `for_each_pair` once per pair with
  // each user's pairs contiguous (the pairs table's key order does that); both
  // return their own I/O status. `expected_pairs` sizes the table (the
  // manifest's count). Errors: DATA_LOSS when a pair names a node the nodes
  // table lacks, a node or pair appears twice, a user's pairs are not
  // contiguous, or the pair count differs from `expected_pairs`. Regions are
  // laid out in `order` (kInsertion only to test files written before
  // kKeyOrdered).
  using NodeSink = std::function<void(bool is_item, uint64_t id, const NodeRecord& record,
                                      absl::Span<const float> sketch)>;
  using PairSink = std::function<void(uint64_t user, uint64_t item, float rate)>;
  static absl::StatusOr<std::unique_ptr<const MemoryIndex>> Build(
      int sketch_dim, uint64_t expected_pairs,
      const std::function<absl::Status(const NodeSink&)>& for_each_node,
      const std::function<absl::Status(const PairSink&)>& for_each_pair,
      RegionOrder order = RegionOrder::kKeyOrdered);

  // Writes this index as an index file at `path` (layout: index_file.h; fsync'ed).
  // `info.format_version` 1 writes the layout before snapshot format 3
  // (20-byte node records, no counts) for compatibility tests; any other
  // value writes the current one. When `file_xxh3` is given it receives the
  // XXH3-64 of the whole file's bytes (the manifest's digest), hashed from
  // memory while writing.
  absl::Status WriteFile(const std::string& path, const IndexFileInfo& info,
                         uint64_t* file_xxh3 = nullptr) const;

  // Maps an index file read-only. With options.verify the bytes are checked
  // (MapFileOptions); always the structure: magic, header checksum,
  // format version, section and region bounds, counts against
  // `expected_pairs`/`sketch_dim`. No page stays in the process's RSS from
  // here but the few the structure checks read (with options.huge_pages the
  // file is read through the mapping, and each window's page-table entries
  // are dropped again): pages join the RSS as lookups first read them.
  // Errors: DATA_LOSS ("checksum mismatch", ...) / FAILED_PRECONDITION
  // (another format version), naming `path`.
  static absl::StatusOr<std::unique_ptr<const MemoryIndex>> MapFile(const std::string& path,
                                                                    int sketch_dim,
                                                                    uint64_t expected_pairs,
                                                                    const MapFileOptions& options,
                                                                    IndexFileInfo* info);

  // For each i: found[i] = whether (users[i], items[i]) is stored, rates[i] its
  // rate (0 when not found).
  // REQUIRES: all four spans have the same size.
  void LookupPairs(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                   absl::Span<bool> found, absl::Span<float> rates) const;

  // One pair without the batch's prefetching, probing plainly to the first
  // free slot in either layout: the reference the batched path is tested
  // against. False (rate 0) when not stored.
  bool LookupPair(uint64_t user, uint64_t item, float* rate) const;

  // The node, or false when unknown. The view points into the index.
  bool FindNode(bool is_item, uint64_t id, NodeView* view) const;
  // Hints before FindNode on a user and an item (no effect on any result),
  // meant to run a few pairs ahead of the scoring (BatchScorer): the first
  // brings the id maps' groups toward the cache, the second (after the
  // first's lines arrived) finds the dense ids and brings the records and
  // every line of the sketch rows.
  void PrefetchNodeIds(uint64_t user, uint64_t item) const;
  void PrefetchNodeRows(uint64_t user, uint64_t item) const;

  size_t pairs() const { return pairs_; }
  size_t users() const { return user_ids_.size(); }
  size_t items() const { return item_ids_.size(); }
  bool mapped() const { return mapping_ != nullptr; }
  RegionOrder region_order() const { return order_; }
  // A mapped index: drops this process's page-table entries for the file
  // (madvise MADV_DONTNEED on a read-only file mapping: the contents stay the
  // file's, the pages stay in the page cache, a later lookup faults them back
  // in). The server calls it when a version stops being the active one but
  // stays open for requests pinned to it (server/snapshot_manager.h), so the
  // held version adds nothing to the RSS until asked. No-op when not mapped.
  // Thread-safe: concurrent lookups stay correct.
  void ReleaseResidentPages() const;
  // How many times ReleaseResidentPages dropped this mapping's pages (tests).
  int resident_releases() const { return resident_releases_.load(std::memory_order_relaxed); }
  // Bytes held by the index (slots, node maps, records, sketches); for a
  // mapped index the mapped file's share counts too (resident once touched).
  size_t memory_bytes() const;

 private:
  struct Slot {
    uint32_t item;  // kEmpty = free slot
    float rate;
  };
  static_assert(sizeof(Slot) == 8);
  static constexpr uint32_t kEmpty = 0xffffffffu;
  // Slots in one 64-byte cache line; the slots array starts on a page.
  static constexpr size_t kSlotsPerLine = 8;
  // One pair's probe of its user's region [start, end), where it stands.
  struct Probe {
    size_t pair;     // index into the batch
    uint64_t start;  // the region's first slot
    uint64_t end;    // one past its last slot
    size_t slot;     // the next slot to read
    uint32_t steps;  // slots it may still read (the region's size at first)
    uint32_t item;   // dense item index sought
    float rate;      // set when found
  };
  enum class ProbeEnd { kFound, kAbsent, kNextLine };
  // Reads the probe's slots up to the end of the current cache line: kFound
  // (rate set), kAbsent (a free slot, in key-ordered regions also a larger
  // item, or no steps left), or kNextLine (slot now names the first slot of
  // another line, wrapping at the region's end).
  ProbeEnd ProbeLine(Probe* probe) const;
  // An mmap'ed range (anonymous or file), unmapped on destruction.
  struct Mapping {
    void* address = nullptr;
    size_t bytes = 0;
    ~Mapping();
  };

  MemoryIndex() = default;
  // The first slot to probe for `item` in a region of `cap` slots at `start`.
  static size_t Home(uint64_t start, uint32_t cap, uint32_t item);
  // Lays out one user's pairs as its region; `items` holds (item index, rate).
  // In order_.
  absl::Status AddUser(uint32_t user, absl::Span<const std::pair<uint32_t, float>> items);
  // Points the views below at the owned vectors (Build).
  void ViewOwned();

  // Constant after Build()/MapFile().
  int sketch_dim_ = 0;
  RegionOrder order_ = RegionOrder::kInsertion;
  absl::flat_hash_map<uint64_t, uint32_t> user_ids_, item_ids_;
  // Views read by lookups: into the owned vectors (Build) or the file (MapFile).
  absl::Span<const NodeRecord> user_records_, item_records_;
  absl::Span<const float> user_sketch_, item_sketch_;  // row-major, sketch_dim_ per node
  absl::Span<const uint64_t> region_start_;            // per user index: first slot of its region
  absl::Span<const uint32_t> region_size_;             // per user index: slots (0 = no pairs)
  const Slot* slots_ = nullptr;
  size_t slots_used_ = 0;  // slots handed out to regions
  size_t pairs_ = 0;
  // Build only: the owned data behind the views.
  std::vector<uint64_t> user_id_list_, item_id_list_;  // dense index -> id
  std::vector<NodeRecord> owned_user_records_, owned_item_records_;
  std::vector<float> owned_user_sketch_, owned_item_sketch_;
  std::vector<uint64_t> owned_region_start_;
  std::vector<uint32_t> owned_region_size_;
  // Anonymous mapping, huge pages advised (madvise): random probes over
  // hundreds of MB would otherwise miss the TLB on nearly every access. Sized
  // for the largest layout the manifest's count allows; unused pages stay unbacked.
  std::unique_ptr<Mapping> owned_slots_;
  size_t slot_capacity_ = 0;  // Build: slots mapped
  // MapFile only: the whole file.
  std::unique_ptr<Mapping> mapping_;
  mutable std::atomic<int> resident_releases_{0};
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_MEMORY_INDEX_H_
