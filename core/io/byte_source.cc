#include "core/io/byte_source.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace graphsieve {
namespace {

absl::Status ErrnoError(int err, const std::string& what) {
  const std::string msg = absl::StrCat(what, ": ", std::strerror(err));
  if (err == ENOENT || err == ENOTDIR) return absl::NotFoundError(msg);
  if (err == EACCES || err == EPERM) return absl::PermissionDeniedError(msg);
  return absl::InternalError(msg);
}

// A file descriptor with a few bytes already read from its start (the peek
// used to detect gzip), handed out before the rest of the file.
class RawFile {
 public:
  RawFile(std::string path, int fd, bool owns_fd)
      : path_(std::move(path)), fd_(fd), owns_fd_(owns_fd) {}
  ~RawFile() {
    if (owns_fd_) ::close(fd_);
  }
  RawFile(const RawFile&) = delete;
  RawFile& operator=(const RawFile&) = delete;

  // Reads until `n` bytes or the end of the file (so a peek of 2 bytes is exact).
  absl::StatusOr<size_t> Read(char* buf, size_t n) {
    size_t got = 0;
    if (prefix_pos_ < prefix_.size()) {
      got = std::min(n, prefix_.size() - prefix_pos_);
      std::memcpy(buf, prefix_.data() + prefix_pos_, got);
      prefix_pos_ += got;
      return got;
    }
    while (got == 0) {
      const ssize_t r = ::read(fd_, buf, n);
      if (r < 0) {
        if (errno == EINTR) continue;
        return ErrnoError(errno, absl::StrCat("reading ", path_));
      }
      if (r == 0) break;
      got = static_cast<size_t>(r);
    }
    bytes_read_ += got;
    return got;
  }

  // Reads exactly up to `n` bytes (fewer only at end of file) and keeps them
  // to be returned again by Read().
  absl::StatusOr<std::string> Peek(size_t n) {
    std::string peek(n, '\0');
    size_t got = 0;
    while (got < n) {
      absl::StatusOr<size_t> r = Read(peek.data() + got, n - got);
      if (!r.ok()) return r.status();
      if (*r == 0) break;
      got += *r;
    }
    peek.resize(got);
    prefix_ = peek;
    prefix_pos_ = 0;
    return peek;
  }

  const std::string& path() const { return path_; }
  uint64_t bytes_read() const { return bytes_read_; }

 private:
  const std::string path_;
  const int fd_;
  const bool owns_fd_;
  std::string prefix_;
  size_t prefix_pos_ = 0;
  uint64_t bytes_read_ = 0;
};

class PlainSource final : public ByteSource {
 public:
  PlainSource(std::unique_ptr<RawFile> file, uint64_t size) : file_(std::move(file)), size_(size) {}
  absl::StatusOr<size_t> Read(char* buf, size_t n) override { return file_->Read(buf, n); }
  bool compressed() const override { return false; }
  uint64_t file_bytes_read() const override { return file_->bytes_read(); }
  uint64_t file_size() const override { return size_; }

 private:
  std::unique_ptr<RawFile> file_;
  const uint64_t size_;
};

// Inflates one or more concatenated gzip members (as `cat a.gz b.gz` makes).
class GzipSource final : public ByteSource {
 public:
  GzipSource(std::unique_ptr<RawFile> file, uint64_t size)
      : file_(std::move(file)), size_(size), in_(size_t{1} << 18) {
    std::memset(&zs_, 0, sizeof(zs_));
  }
  ~GzipSource() override {
    if (initialised_) inflateEnd(&zs_);
  }

  absl::Status Init() {
    // 15 + 16: zlib window, gzip wrapper only.
    if (inflateInit2(&zs_, 15 + 16) != Z_OK) {
      return absl::InternalError(absl::StrCat(file_->path(), ": zlib inflateInit2 failed"));
    }
    initialised_ = true;
    return absl::OkStatus();
  }

  absl::StatusOr<size_t> Read(char* buf, size_t n) override {
    const size_t want = std::min<size_t>(n, size_t{1} << 30);
    zs_.next_out = reinterpret_cast<Bytef*>(buf);
    zs_.avail_out = static_cast<uInt>(want);
    while (zs_.avail_out > 0) {
      if (zs_.avail_in == 0 && !eof_) {
        absl::StatusOr<size_t> r = file_->Read(in_.data(), in_.size());
        if (!r.ok()) return r.status();
        if (*r == 0) {
          eof_ = true;
        } else {
          zs_.next_in = reinterpret_cast<Bytef*>(in_.data());
          zs_.avail_in = static_cast<uInt>(*r);
        }
      }
      if (zs_.avail_in == 0 && eof_) {
        if (in_member_) {
          return absl::DataLossError(absl::StrCat(
              file_->path(),
              ": truncated gzip stream (the file ends inside a compressed member after ",
              file_->bytes_read(), " bytes)"));
        }
        break;  // clean end after a complete member
      }
      in_member_ = true;
      const int rc = inflate(&zs_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        in_member_ = false;
        inflateReset(&zs_);
        continue;
      }
      // Z_BUF_ERROR with input left would mean no progress is possible.
      if (rc == Z_BUF_ERROR && zs_.avail_in == 0)
        continue;  // next pass reads more or reports truncation
      if (rc != Z_OK) {
        return absl::DataLossError(absl::StrCat(
            file_->path(), ": corrupt gzip data near compressed byte ",
            file_->bytes_read() - zs_.avail_in, ": ", zs_.msg != nullptr ? zs_.msg : zError(rc)));
      }
    }
    return want - zs_.avail_out;
  }

  bool compressed() const override { return true; }
  uint64_t file_bytes_read() const override { return file_->bytes_read(); }
  uint64_t file_size() const override { return size_; }

 private:
  std::unique_ptr<RawFile> file_;
  const uint64_t size_;
  std::vector<char> in_;
  z_stream zs_;
  bool initialised_ = false;
  bool eof_ = false;
  bool in_member_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<ByteSource>> ByteSource::Open(const std::string& path) {
  if (path.empty()) return absl::InvalidArgumentError("empty input path");
  int fd = 0;
  const bool is_stdin = path == "-";
  if (!is_stdin) {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return ErrnoError(errno, absl::StrCat("cannot open ", path));
  }
  struct stat st;
  uint64_t size = 0;
  if (::fstat(fd, &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      if (!is_stdin) ::close(fd);
      return absl::InvalidArgumentError(absl::StrCat(path, " is a directory, expected a log file"));
    }
    if (S_ISREG(st.st_mode)) size = static_cast<uint64_t>(st.st_size);
  }
  auto file = std::make_unique<RawFile>(is_stdin ? std::string("<stdin>") : path, fd, !is_stdin);
#if defined(POSIX_FADV_SEQUENTIAL)
  if (!is_stdin) ::posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
#endif
  absl::StatusOr<std::string> magic = file->Peek(2);
  if (!magic.ok()) return magic.status();
  if (magic->size() == 2 && static_cast<unsigned char>((*magic)[0]) == 0x1f &&
      static_cast<unsigned char>((*magic)[1]) == 0x8b) {
    auto gz = std::make_unique<GzipSource>(std::move(file), size);
    if (absl::Status s = gz->Init(); !s.ok()) return s;
    return std::unique_ptr<ByteSource>(std::move(gz));
  }
  return std::unique_ptr<ByteSource>(std::make_unique<PlainSource>(std::move(file), size));
}

}  // namespace graphsieve
