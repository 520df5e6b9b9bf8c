#include "core/snapshot/index_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "core/snapshot/file_util.h"

namespace graphsieve {
namespace index_file {
namespace {

// Bytes after which WriteAll starts the file's write-back (sync_file_range),
// so the closing fsync does not find the whole file dirty.
constexpr size_t kWriteBehindBytes = size_t{8} << 20;

}  // namespace

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

uint64_t HeaderDigest(Header h) {
  h.header_xxh3 = 0;
  return XXH3_64bits(&h, sizeof h);
}

XxhState NewXxhState() {
  XxhState state(XXH3_createState(), &XXH3_freeState);
  XXH3_64bits_reset(state.get());
  return state;
}

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

absl::Status CheckDigests(int fd, const std::string& path, bool check_file_xxh3, uint64_t file_xxh3,
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
  if (check_file_xxh3 && XXH3_64bits_digest(file.get()) != file_xxh3) {
    return absl::DataLossError(absl::StrCat(path, ": checksum mismatch (XXH3-64 ",
                                            snapshot::Hex64(XXH3_64bits_digest(file.get())),
                                            ", manifest says ", snapshot::Hex64(file_xxh3), ")"));
  }
  if (XXH3_64bits_digest(body.get()) != body_xxh3) {
    return absl::DataLossError(absl::StrCat(path, ": checksum mismatch (XXH3-64 of the body ",
                                            snapshot::Hex64(XXH3_64bits_digest(body.get())),
                                            ", its header says ", snapshot::Hex64(body_xxh3), ")"));
  }
  return absl::OkStatus();
}

}  // namespace index_file
}  // namespace graphsieve
