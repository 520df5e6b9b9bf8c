#include "core/snapshot/file_util.h"

#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace graphsieve {
namespace snapshot {
namespace {

namespace fs = std::filesystem;

absl::Status ErrnoError(absl::string_view what, const std::string& path, int err) {
  std::string msg = absl::StrCat(what, " ", path, ": ", std::strerror(err));
  if (err == ENOENT) return absl::NotFoundError(msg);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
  return absl::InternalError(msg);
}

std::string ParentDir(const std::string& path) {
  fs::path p(path);
  fs::path parent = p.parent_path();
  return parent.empty() ? "." : parent.string();
}

}  // namespace

absl::Status FsyncPath(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", path, errno);
  FdCloser closer{fd};
  if (::fsync(fd) != 0) return ErrnoError("fsync", path, errno);
  return absl::OkStatus();
}

absl::Status FsyncTree(const std::string& dir) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file() || it->is_directory()) {
      absl::Status s = FsyncPath(it->path().string());
      if (!s.ok()) return s;
    }
  }
  if (ec) return absl::InternalError(absl::StrCat("list ", dir, ": ", ec.message()));
  return FsyncPath(dir);
}

absl::Status WriteFileAtomic(const std::string& path, absl::string_view contents) {
  const std::string tmp = path + ".tmp";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoError("create", tmp, errno);
  {
    FdCloser closer{fd};
    size_t done = 0;
    while (done < contents.size()) {
      ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoError("write", tmp, errno);
      }
      done += static_cast<size_t>(n);
    }
    if (::fsync(fd) != 0) return ErrnoError("fsync", tmp, errno);
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) return ErrnoError("rename to " + path, tmp, errno);
  return FsyncPath(ParentDir(path));
}

absl::StatusOr<std::string> ReadFileToString(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", path, errno);
  FdCloser closer{fd};
  std::string out;
  // On the heap: callers include civetweb's admin threads (/status.json reads
  // CURRENT), whose stacks are small; 64 KiB here overflowed one under ASan
  // (docs/RELIABILITY.md, "Sanitizers").
  constexpr size_t kChunk = 1 << 16;
  std::unique_ptr<char[]> buf(new char[kChunk]);
  for (;;) {
    ssize_t n = ::read(fd, buf.get(), kChunk);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("read", path, errno);
    }
    if (n == 0) break;
    out.append(buf.get(), static_cast<size_t>(n));
  }
  return out;
}

absl::StatusOr<FileDigest> DigestFile(const std::string& path) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", path, errno);
  FdCloser closer{fd};
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(),
                                                                 &XXH3_freeState);
  XXH3_64bits_reset(state.get());
  std::unique_ptr<char[]> buf(new char[1 << 20]);
  FileDigest d;
  for (;;) {
    ssize_t n = ::read(fd, buf.get(), 1 << 20);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("read", path, errno);
    }
    if (n == 0) break;
    XXH3_64bits_update(state.get(), buf.get(), static_cast<size_t>(n));
    d.size_bytes += static_cast<uint64_t>(n);
  }
  d.xxh3 = XXH3_64bits_digest(state.get());
  return d;
}

std::string Hex64(uint64_t v) { return absl::StrFormat("%016x", v); }

absl::StatusOr<std::vector<std::string>> ListFilesRecursive(const std::string& dir) {
  std::vector<std::string> out;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::end(it);
       it.increment(ec)) {
    if (it->is_regular_file()) out.push_back(fs::relative(it->path(), dir).string());
  }
  if (ec) {
    if (ec == std::errc::no_such_file_or_directory) {
      return absl::NotFoundError(absl::StrCat("list ", dir, ": ", ec.message()));
    }
    return absl::InternalError(absl::StrCat("list ", dir, ": ", ec.message()));
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::Status RemoveTree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);
  if (ec) return absl::InternalError(absl::StrCat("remove ", path, ": ", ec.message()));
  return absl::OkStatus();
}

}  // namespace snapshot
}  // namespace graphsieve
