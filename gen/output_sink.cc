#include "gen/output_sink.h"

#include <unistd.h>
#include <zlib.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "absl/strings/str_cat.h"

namespace graphsieve {
namespace gen_internal {
namespace {

constexpr size_t kBufferBytes = size_t{4} << 20;

absl::Status WriteAll(int fd, const std::string& path, const char* data, size_t n) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return absl::InternalError(absl::StrCat("writing ", path, ": ", std::strerror(errno)));
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return absl::OkStatus();
}

class PlainSink final : public OutputSink {
 public:
  PlainSink(int fd, std::string path) : fd_(fd), path_(std::move(path)) {
    buffer_.reserve(kBufferBytes);
  }
  absl::Status Write(const char* data, size_t n) override {
    if (buffer_.size() + n > kBufferBytes) {
      if (absl::Status s = Flush(); !s.ok()) return s;
      if (n > kBufferBytes) return WriteAll(fd_, path_, data, n);
    }
    buffer_.insert(buffer_.end(), data, data + n);
    return absl::OkStatus();
  }
  absl::Status Close() override { return Flush(); }

 private:
  absl::Status Flush() {
    absl::Status s = WriteAll(fd_, path_, buffer_.data(), buffer_.size());
    buffer_.clear();
    return s;
  }
  const int fd_;
  const std::string path_;
  std::vector<char> buffer_;
};

class GzipSink final : public OutputSink {
 public:
  GzipSink(int fd, std::string path) : fd_(fd), path_(std::move(path)), out_(kBufferBytes) {
    std::memset(&zs_, 0, sizeof(zs_));
  }
  ~GzipSink() override {
    if (initialised_) deflateEnd(&zs_);
  }
  absl::Status Init(int level) {
    // windowBits 15 + 16: a gzip wrapper with mtime 0, so the bytes are deterministic.
    if (deflateInit2(&zs_, level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      return absl::InternalError(absl::StrCat(path_, ": zlib deflateInit2 failed"));
    }
    initialised_ = true;
    return absl::OkStatus();
  }
  absl::Status Write(const char* data, size_t n) override { return Deflate(data, n, Z_NO_FLUSH); }
  absl::Status Close() override { return Deflate(nullptr, 0, Z_FINISH); }

 private:
  absl::Status Deflate(const char* data, size_t n, int flush) {
    zs_.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data));
    zs_.avail_in = static_cast<uInt>(n);
    while (true) {
      zs_.next_out = reinterpret_cast<Bytef*>(out_.data());
      zs_.avail_out = static_cast<uInt>(out_.size());
      const int rc = deflate(&zs_, flush);
      if (rc == Z_STREAM_ERROR)
        return absl::InternalError(absl::StrCat(path_, ": zlib deflate failed"));
      const size_t have = out_.size() - zs_.avail_out;
      if (absl::Status s = WriteAll(fd_, path_, out_.data(), have); !s.ok()) return s;
      if (flush == Z_FINISH ? rc == Z_STREAM_END : (zs_.avail_in == 0 && zs_.avail_out > 0)) break;
    }
    return absl::OkStatus();
  }
  const int fd_;
  const std::string path_;
  std::vector<char> out_;
  z_stream zs_;
  bool initialised_ = false;
};

}  // namespace

absl::StatusOr<std::unique_ptr<OutputSink>> OutputSink::Create(int fd, std::string path,
                                                               int gzip_level) {
  if (gzip_level == 0)
    return std::unique_ptr<OutputSink>(std::make_unique<PlainSink>(fd, std::move(path)));
  auto gz = std::make_unique<GzipSink>(fd, std::move(path));
  if (absl::Status s = gz->Init(gzip_level); !s.ok()) return s;
  return std::unique_ptr<OutputSink>(std::move(gz));
}

}  // namespace gen_internal
}  // namespace graphsieve
