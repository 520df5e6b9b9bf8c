// Buffered output for the generator (internal to graphsieve_gen): a file
// descriptor, optionally through a gzip (deflate) stream. Errors name the path.
//
// Not thread-safe. Owns its buffers and zlib state; the caller owns the fd.
#ifndef GRAPHSIEVE_GEN_OUTPUT_SINK_H_
#define GRAPHSIEVE_GEN_OUTPUT_SINK_H_

#include <cstddef>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace graphsieve {
namespace gen_internal {

class OutputSink {
 public:
  virtual ~OutputSink() = default;
  // `path` is only used in error messages. gzip_level 0 = plain output.
  static absl::StatusOr<std::unique_ptr<OutputSink>> Create(int fd, std::string path,
                                                            int gzip_level);
  virtual absl::Status Write(const char* data, size_t n) = 0;
  // Flushes everything (and ends the gzip stream). REQUIRES: called once, last.
  virtual absl::Status Close() = 0;
};

}  // namespace gen_internal
}  // namespace graphsieve

#endif  // GRAPHSIEVE_GEN_OUTPUT_SINK_H_
