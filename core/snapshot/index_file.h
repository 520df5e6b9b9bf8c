// The serving index file's layout (docs/SNAPSHOT.md "The serving index
// file"): header, sections, digests, and the write and check helpers that
// MemoryIndex::WriteFile and MemoryIndex::MapFile (memory_index.h) share.
// Internal to graphsieve_snapshot; not a public interface.
//
// Thread-safety: constants and functions without shared state.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_INDEX_FILE_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_INDEX_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>

#include "absl/status/status.h"
#include "core/records/node_record.h"
#include "core/records/unseen_model.h"
#include "core/snapshot/format.h"
#include "xxhash.h"

namespace graphsieve {
namespace index_file {

inline constexpr char kMagic[8] = {'G', 'S', 'I', 'N', 'D', 'E', 'X', '\n'};
inline constexpr uint32_t kIndexFormatVersion = snapshot::kIndexFileFormatVersion;
inline constexpr uint64_t kHeaderBytes = 4096;  // the header, zero-padded
inline constexpr uint64_t kAlign = 4096;        // every section starts on a page

// NodeRecord is stored as its in-memory bytes: seven 4-byte little-endian
// fields in declaration order (x86-64/aarch64 are little-endian). Index
// format 1 stored the first five (20 bytes, no counts); MapFile copies such
// records into memory with positives = impressions = 0.
static_assert(std::is_trivially_copyable_v<NodeRecord> &&
              sizeof(NodeRecord) == snapshot::kNodeRecordBytes);
static_assert(offsetof(NodeRecord, degree) == 4 && offsetof(NodeRecord, mean_rate) == 16 &&
              offsetof(NodeRecord, positives) == 20 && offsetof(NodeRecord, impressions) == 24);
constexpr uint64_t RecordBytes(uint32_t format_version) {
  return format_version == 1 ? snapshot::kNodeRecordBytesV2 : sizeof(NodeRecord);
}

enum Section {
  kUserIds,      // u64 per user, dense order
  kItemIds,      // u64 per item
  kUserRecords,  // NodeRecord per user
  kItemRecords,
  kUserSketch,  // f32 x sketch_dim per user
  kItemSketch,
  kRegionStart,  // u64 per user: first slot of its region
  kRegionSize,   // u32 per user: slots of its region (0 = no pairs)
  kSlots,        // {u32 item index, f32 rate} per slot
  kUnseenModel,  // UTF-8 JSON text
  kSections,
};

struct Header {
  char magic[8];
  uint32_t format_version;
  uint32_t sketch_dim;
  uint64_t users, items, pairs, slots;
  uint32_t partition, num_partitions;
  uint64_t model_bytes;
  uint64_t offset[kSections];
  uint64_t body_xxh3;    // XXH3-64 of bytes [kHeaderBytes, end of file), from the writer's memory
  uint64_t header_xxh3;  // XXH3-64 of this struct with header_xxh3 = 0
};
static_assert(std::is_trivially_copyable_v<Header> && sizeof(Header) <= kHeaderBytes);

// Bytes of each section given the counts.
void SectionBytes(const Header& h, uint64_t bytes[kSections]);

inline uint64_t AlignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

// XXH3-64 of the header with header_xxh3 = 0.
uint64_t HeaderDigest(Header h);

using XxhState = std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)>;
// A fresh XXH3-64 state, reset.
XxhState NewXxhState();

// Writes `n` bytes in pieces of 8 MiB and, when `hash` is set, hashes them
// into it; `*offset` is the file offset, advanced. Each piece's write-back is
// started once it is written (a hint: its failure is ignored, the closing
// fsync reports real I/O errors). INTERNAL naming `path` on a write error.
absl::Status WriteAll(int fd, const void* data, size_t n, const std::string& path,
                      XXH3_state_t* hash, uint64_t* offset);

// One read(2) pass over the whole file (not through a mapping, so the pages
// do not join the process's RSS): XXH3-64 of the body after the header
// against `body_xxh3` (the header's), and with `check_file_xxh3` of the whole
// file against `file_xxh3` (the manifest's). DATA_LOSS naming `path`.
absl::Status CheckDigests(int fd, const std::string& path, bool check_file_xxh3, uint64_t file_xxh3,
                          uint64_t body_xxh3);

}  // namespace index_file
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_INDEX_FILE_H_
