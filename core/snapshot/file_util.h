// Small POSIX file helpers for durable, atomic publishing (leveldb
// SetCurrentFile style): fsync of files and directories, write-temp-then-rename,
// and XXH3-64 file digests.
//
// Thread-safety: all functions are reentrant; concurrent calls on the same
// path race like the underlying syscalls do.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_FILE_UTIL_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_FILE_UTIL_H_

#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace graphsieve {
namespace snapshot {

// Closes a file descriptor when it goes out of scope (fd < 0: nothing).
struct FdCloser {
  int fd;
  ~FdCloser() {
    if (fd >= 0) ::close(fd);
  }
};

// fsync(2) of a file or a directory. Errors name the path.
absl::Status FsyncPath(const std::string& path);

// fsync of every regular file below `dir` (recursively) and of every directory.
absl::Status FsyncTree(const std::string& dir);

// Writes `contents` to `path` atomically: `path`.tmp, fsync, rename over
// `path`, fsync of the parent directory.
absl::Status WriteFileAtomic(const std::string& path, absl::string_view contents);

// Whole file. NOT_FOUND when missing; errors name the path.
absl::StatusOr<std::string> ReadFileToString(const std::string& path);

struct FileDigest {
  uint64_t size_bytes = 0;
  uint64_t xxh3 = 0;  // XXH3-64, seed 0, of the file's bytes
};
// Streams the file through XXH3-64. NOT_FOUND when missing.
absl::StatusOr<FileDigest> DigestFile(const std::string& path);

// 16 lowercase hex digits.
std::string Hex64(uint64_t v);

// Regular files below `dir`, as paths relative to it, sorted.
absl::StatusOr<std::vector<std::string>> ListFilesRecursive(const std::string& dir);

// rm -rf; OK when `path` does not exist.
absl::Status RemoveTree(const std::string& path);

}  // namespace snapshot
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_FILE_UTIL_H_
