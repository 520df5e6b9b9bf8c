// A sequential source of bytes from a file: plain, or gzip (detected from the
// magic bytes 1f 8b, not from the name). Used by the log reader; exposed so
// benchmarks and tools can time the decompression alone.
//
// Not thread-safe. Owns its file descriptor and zlib state.
#ifndef GRAPHSIEVE_CORE_IO_BYTE_SOURCE_H_
#define GRAPHSIEVE_CORE_IO_BYTE_SOURCE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace graphsieve {

class ByteSource {
 public:
  virtual ~ByteSource() = default;

  // Opens `path` ("-" = standard input). NOT_FOUND / PERMISSION_DENIED name the path.
  static absl::StatusOr<std::unique_ptr<ByteSource>> Open(const std::string& path);

  // Reads up to `n` bytes into `buf`; returns 0 only at the end of the data.
  // DATA_LOSS for a truncated or corrupt gzip stream, naming the file.
  // REQUIRES: n > 0.
  virtual absl::StatusOr<size_t> Read(char* buf, size_t n) = 0;

  virtual bool compressed() const = 0;
  // Bytes consumed from the file so far (compressed bytes for gzip).
  virtual uint64_t file_bytes_read() const = 0;
  // Size of the file when known (a regular file), else 0.
  virtual uint64_t file_size() const = 0;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_IO_BYTE_SOURCE_H_
