// MemoryIndex as a file of the version (docs/SNAPSHOT.md "The serving index
// file"): WriteFile (the builder) and MapFile (the server).
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/format.h"
#include "core/snapshot/memory_index.h"
#include "xxhash.h"

namespace graphsieve {
namespace {

constexpr char kMagic[8] = {'G', 'S', 'I', 'N', 'D', 'E', 'X', '\n'};
constexpr uint32_t kIndexFormatVersion = snapshot::kIndexFileFormatVersion;
constexpr uint64_t kHeaderBytes = 4096;  // the header, zero-padded
constexpr uint64_t kAlign = 4096;        // every section starts on a page

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
void SectionBytes(const Header& h, uint64_t bytes[kSections]) {
  bytes[kUserIds] = h.users * 8;
  bytes[kItemIds] = h.items * 8;
  bytes[kUserRecords] = h.users * RecordBytes(h.format_version);
  bytes[kItemRecords] = h.items * RecordBytes(h.format_version);
  bytes[kUserSketch] = h.users * h.sketch_dim * 4;
  bytes[kItemSketch] = h.items * h.sketch_dim * 4;
  bytes[kRegionStart] = h.users * 8;
  bytes[kRegionSize] = h.users * 4;
  bytes[kSlots] = h.slots * 8;
  bytes[kUnseenModel] = h.model_bytes;
}

uint64_t AlignUp(uint64_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

uint64_t HeaderDigest(Header h) {
  h.header_xxh3 = 0;
  return XXH3_64bits(&h, sizeof h);
}

using XxhState = std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)>;
XxhState NewXxhState() {
  XxhState state(XXH3_createState(), &XXH3_freeState);
  XXH3_64bits_reset(state.get());
  return state;
}

// Bytes after which WriteAll starts the file's write-back (sync_file_range),
// so the closing fsync does not find the whole file dirty.
constexpr size_t kWriteBehindBytes = size_t{8} << 20;

// Writes `n` bytes in pieces of kWriteBehindBytes and, when `hash` is set,
// hashes them into it; `*offset` is the file offset, advanced. Each piece's
// write-back is started once it is written (a hint: its failure is ignored,
// the closing fsync reports real I/O errors).
absl::Status WriteAll(int fd, const void* data, size_t n, const std::string& path,
                      XXH3_state_t* hash, uint64_t* offset) {
  const char* p = static_cast<const char*>(data);
  while (n > 0) {
    const size_t piece = std::min(n, kWriteBehindBytes);
    if (hash != nullptr) XXH3_64bits_update(hash, p, piece);
    for (size_t left = piece; left > 0;) {
      ssize_t w = ::write(fd, p + (piece - left), left);
      if (w < 0) {
        if (errno == EINTR) continue;
        return absl::InternalError(absl::StrCat(path, ": write: ", std::strerror(errno)));
      }
      left -= static_cast<size_t>(w);
    }
    (void)::sync_file_range(fd, static_cast<off_t>(*offset), static_cast<off_t>(piece),
                            SYNC_FILE_RANGE_WRITE);
    *offset += piece;
    p += piece;
    n -= piece;
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status MemoryIndex::WriteFile(const std::string& path, const IndexFileInfo& info,
                                    uint64_t* file_xxh3) const {
  if (mapped()) return absl::FailedPreconditionError("WriteFile: the index is a mapped file");
  Header h;
  std::memset(&h, 0, sizeof h);
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  // Format 1 (20-byte records) only on request: compatibility tests.
  h.format_version = info.format_version == 1 ? 1 : kIndexFormatVersion;
  h.sketch_dim = static_cast<uint32_t>(sketch_dim_);
  h.users = user_id_list_.size();
  h.items = item_id_list_.size();
  h.pairs = pairs_;
  h.slots = slots_used_;
  h.partition = info.partition;
  h.num_partitions = info.num_partitions;
  h.model_bytes = info.unseen_model.size();
  std::vector<char> v1_records[2];  // format 1: the records' first 20 bytes
  if (h.format_version == 1) {
    for (int side = 0; side < 2; ++side) {
      absl::Span<const NodeRecord> records = side ? item_records_ : user_records_;
      v1_records[side].resize(records.size() * snapshot::kNodeRecordBytesV2);
      for (size_t k = 0; k < records.size(); ++k) {
        std::memcpy(&v1_records[side][k * snapshot::kNodeRecordBytesV2], &records[k],
                    snapshot::kNodeRecordBytesV2);
      }
    }
  }
  const bool v1 = h.format_version == 1;
  const void* data[kSections] = {user_id_list_.data(),
                                 item_id_list_.data(),
                                 v1 ? static_cast<const void*>(v1_records[0].data())
                                    : static_cast<const void*>(user_records_.data()),
                                 v1 ? static_cast<const void*>(v1_records[1].data())
                                    : static_cast<const void*>(item_records_.data()),
                                 user_sketch_.data(),
                                 item_sketch_.data(),
                                 region_start_.data(),
                                 region_size_.data(),
                                 slots_,
                                 info.unseen_model.data()};
  uint64_t bytes[kSections];
  SectionBytes(h, bytes);
  uint64_t at = kHeaderBytes;
  for (int s = 0; s < kSections; ++s) {
    h.offset[s] = at;
    at = AlignUp(at + bytes[s]);
  }
  const std::vector<char> zeros(kAlign, 0);
  // The body: sections, each padded to the next page but the last. With
  // fd < 0 only hashes (the body digest goes into the header, written first);
  // with fd >= 0 writes and, when `hash` is set, hashes what it writes.
  auto body = [&](int fd, XXH3_state_t* hash, uint64_t* offset) {
    uint64_t written = kHeaderBytes;
    absl::Status st;
    for (int s = 0; s < kSections && st.ok(); ++s) {
      if (written < h.offset[s]) {
        const size_t pad = h.offset[s] - written;
        st = fd < 0 ? (XXH3_64bits_update(hash, zeros.data(), pad), absl::OkStatus())
                    : WriteAll(fd, zeros.data(), pad, path, hash, offset);
        written = h.offset[s];
      }
      if (st.ok() && bytes[s] > 0) {
        st = fd < 0 ? (XXH3_64bits_update(hash, data[s], bytes[s]), absl::OkStatus())
                    : WriteAll(fd, data[s], bytes[s], path, hash, offset);
      }
      written += bytes[s];
    }
    return st;
  };
  XxhState hash = NewXxhState();
  body(-1, hash.get(), nullptr).IgnoreError();  // hashing cannot fail
  h.body_xxh3 = XXH3_64bits_digest(hash.get());
  h.header_xxh3 = HeaderDigest(h);
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) return absl::InternalError(absl::StrCat(path, ": create: ", std::strerror(errno)));
  std::vector<char> page(kHeaderBytes, 0);
  std::memcpy(page.data(), &h, sizeof h);
  // The whole file's digest (header page + body), from the bytes written.
  XxhState file = NewXxhState();
  XXH3_state_t* file_hash = file_xxh3 != nullptr ? file.get() : nullptr;
  uint64_t offset = 0;
  absl::Status st = WriteAll(fd, page.data(), page.size(), path, file_hash, &offset);
  if (st.ok()) st = body(fd, file_hash, &offset);
  if (st.ok() && ::fsync(fd) != 0) {
    st = absl::InternalError(absl::StrCat(path, ": fsync: ", std::strerror(errno)));
  }
  ::close(fd);
  if (st.ok() && file_xxh3 != nullptr) *file_xxh3 = XXH3_64bits_digest(file.get());
  return st;
}

namespace {

// One read(2) pass over the whole file (not through the mapping, so the
// pages do not join the process's RSS): XXH3-64 of the file (the manifest's
// digest) and of the body after the header (the header's body_xxh3).
absl::Status CheckDigests(int fd, const std::string& path, const MapFileOptions& options,
                          uint64_t body_xxh3) {
  XxhState file = NewXxhState(), body = NewXxhState();
  std::unique_ptr<char[]> buf(new char[1 << 20]);
  uint64_t at = 0;
  for (;;) {
    ssize_t n = ::pread(fd, buf.get(), 1 << 20, static_cast<off_t>(at));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return absl::DataLossError(absl::StrCat(path, ": read: ", std::strerror(errno)));
    if (n == 0) break;
    XXH3_64bits_update(file.get(), buf.get(), static_cast<size_t>(n));
    const uint64_t skip = at < kHeaderBytes ? std::min<uint64_t>(kHeaderBytes - at, n) : 0;
    XXH3_64bits_update(body.get(), buf.get() + skip, static_cast<size_t>(n) - skip);
    at += static_cast<uint64_t>(n);
  }
  if (options.check_file_xxh3 && XXH3_64bits_digest(file.get()) != options.file_xxh3) {
    return absl::DataLossError(absl::StrCat(
        path, ": checksum mismatch (XXH3-64 ", snapshot::Hex64(XXH3_64bits_digest(file.get())),
        ", manifest says ", snapshot::Hex64(options.file_xxh3), ")"));
  }
  if (XXH3_64bits_digest(body.get()) != body_xxh3) {
    return absl::DataLossError(absl::StrCat(path, ": checksum mismatch (XXH3-64 of the body ",
                                            snapshot::Hex64(XXH3_64bits_digest(body.get())),
                                            ", its header says ", snapshot::Hex64(body_xxh3), ")"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<const MemoryIndex>> MemoryIndex::MapFile(
    const std::string& path, int sketch_dim, uint64_t expected_pairs, const MapFileOptions& options,
    IndexFileInfo* info) {
  auto loss = [&](const std::string& what) {
    return absl::DataLossError(absl::StrCat(path, ": ", what));
  };
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return loss(absl::StrCat("open: ", std::strerror(errno)));
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size < static_cast<off_t>(kHeaderBytes)) {
    ::close(fd);
    return loss("shorter than the 4096-byte header");
  }
  if (options.check_file_xxh3 && static_cast<uint64_t>(st.st_size) != options.file_bytes) {
    ::close(fd);
    return loss(absl::StrCat(st.st_size, " bytes, manifest says ", options.file_bytes));
  }
  Header h;
  if (::pread(fd, &h, sizeof h, 0) != static_cast<ssize_t>(sizeof h)) {
    ::close(fd);
    return loss("cannot read the header");
  }
  if (options.verify) {
    absl::Status digests = CheckDigests(fd, path, options, h.body_xxh3);
    if (!digests.ok()) {
      ::close(fd);
      return digests;
    }
  }
  std::unique_ptr<MemoryIndex> index(new MemoryIndex());
  index->mapping_ = std::make_unique<Mapping>();
  const uint64_t file_bytes = static_cast<uint64_t>(st.st_size);
  void* mem = ::mmap(nullptr, file_bytes, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);  // the mapping keeps the file
  if (mem == MAP_FAILED) return loss(absl::StrCat("mmap: ", std::strerror(errno)));
  if (options.advise_huge_pages) ::madvise(mem, file_bytes, MADV_HUGEPAGE);  // a hint
  index->mapping_->address = mem;
  index->mapping_->bytes = file_bytes;
  const char* base = static_cast<const char*>(mem);
  std::memcpy(&h, base, sizeof h);
  if (std::memcmp(h.magic, kMagic, sizeof kMagic) != 0) return loss("not a graphsieve index file");
  if (h.header_xxh3 != HeaderDigest(h)) return loss("header checksum mismatch");
  if (h.format_version < snapshot::kOldestIndexFileFormatVersion ||
      h.format_version > kIndexFormatVersion) {
    return absl::FailedPreconditionError(
        absl::StrCat(path, ": index format_version ", h.format_version, ", this reader reads ",
                     snapshot::kOldestIndexFileFormatVersion, " to ", kIndexFormatVersion));
  }
  if (static_cast<int>(h.sketch_dim) != sketch_dim || h.pairs != expected_pairs) {
    return loss(absl::StrCat("holds ", h.pairs, " pairs with sketch_dim ", h.sketch_dim,
                             "; the manifest says ", expected_pairs, " and ", sketch_dim));
  }
  if (h.num_partitions < 1 || h.partition >= h.num_partitions) {
    return loss(absl::StrCat("partition ", h.partition, " of ", h.num_partitions));
  }
  // Counts bounded by the file size before any multiplication can overflow.
  if (h.users > file_bytes || h.items > file_bytes || h.slots > file_bytes ||
      h.model_bytes > file_bytes || h.sketch_dim > (1u << 20) || h.pairs > h.slots ||
      h.users >= kEmpty || h.items >= kEmpty) {
    return loss("counts larger than the file");
  }
  uint64_t bytes[kSections];
  SectionBytes(h, bytes);
  uint64_t end = kHeaderBytes;
  for (int s = 0; s < kSections; ++s) {
    if (h.offset[s] % kAlign != 0 || h.offset[s] < end || h.offset[s] > file_bytes ||
        bytes[s] > file_bytes - h.offset[s]) {
      return loss(absl::StrCat("section ", s, " at ", h.offset[s], " (", bytes[s],
                               " bytes) is outside the file or overlaps"));
    }
    end = h.offset[s] + bytes[s];
  }
  auto at = [&](int s) { return base + h.offset[s]; };
  index->sketch_dim_ = sketch_dim;
  index->pairs_ = h.pairs;
  index->slots_used_ = h.slots;
  index->slots_ = reinterpret_cast<const Slot*>(at(kSlots));
  if (h.format_version == kIndexFormatVersion) {
    index->user_records_ = {reinterpret_cast<const NodeRecord*>(at(kUserRecords)), h.users};
    index->item_records_ = {reinterpret_cast<const NodeRecord*>(at(kItemRecords)), h.items};
  } else {  // format 1: 20-byte records without counts, copied
    for (int side = 0; side < 2; ++side) {
      const uint64_t n = side ? h.items : h.users;
      const char* src = at(side ? kItemRecords : kUserRecords);
      std::vector<NodeRecord>& owned =
          side ? index->owned_item_records_ : index->owned_user_records_;
      owned.resize(n);
      for (uint64_t k = 0; k < n; ++k) {
        std::memcpy(static_cast<void*>(&owned[k]), src + k * snapshot::kNodeRecordBytesV2,
                    snapshot::kNodeRecordBytesV2);
      }
    }
    index->user_records_ = index->owned_user_records_;
    index->item_records_ = index->owned_item_records_;
  }
  index->user_sketch_ = {reinterpret_cast<const float*>(at(kUserSketch)), h.users * h.sketch_dim};
  index->item_sketch_ = {reinterpret_cast<const float*>(at(kItemSketch)), h.items * h.sketch_dim};
  index->region_start_ = {reinterpret_cast<const uint64_t*>(at(kRegionStart)), h.users};
  index->region_size_ = {reinterpret_cast<const uint32_t*>(at(kRegionSize)), h.users};
  // Regions inside the slot array and exactly covering it.
  uint64_t covered = 0;
  for (uint64_t u = 0; u < h.users; ++u) {
    const uint64_t start = index->region_start_[u], size = index->region_size_[u];
    if (size > h.slots || start > h.slots - size) {
      return loss(absl::StrCat("user index ", u, ": region [", start, ", +", size, ") outside the ",
                               h.slots, " slots"));
    }
    covered += size;
  }
  if (covered != h.slots) {
    return loss(absl::StrCat("regions cover ", covered, " slots of ", h.slots));
  }
  // The id -> dense index maps (small: one entry per node).
  for (int side = 0; side < 2; ++side) {
    const uint64_t n = side ? h.items : h.users;
    const uint64_t* ids = reinterpret_cast<const uint64_t*>(at(side ? kItemIds : kUserIds));
    auto& map = side ? index->item_ids_ : index->user_ids_;
    map.reserve(n);
    for (uint64_t k = 0; k < n; ++k) {
      if (!map.emplace(ids[k], static_cast<uint32_t>(k)).second) {
        return loss(absl::StrCat(side ? "item " : "user ", ids[k], " is stored twice"));
      }
    }
  }
  info->format_version = h.format_version;
  info->partition = h.partition;
  info->num_partitions = h.num_partitions;
  info->unseen_model.assign(at(kUnseenModel), h.model_bytes);
  return std::unique_ptr<const MemoryIndex>(std::move(index));
}

}  // namespace graphsieve
