// A ByteSource that runs another source on a background thread, a few chunks
// ahead of the reader, so gzip inflation overlaps with parsing (internal to
// graphsieve_io; used by the log reader for compressed input).
//
// Thread-safety: Read() and the accessors are for one consumer thread; the
// background thread only touches the inner source and the chunk queue, which
// is guarded by mu_. The destructor stops and joins the thread, also when the
// consumer stops early (an error in a row): no hang, no leak.
#ifndef GRAPHSIEVE_CORE_IO_PREFETCH_SOURCE_H_
#define GRAPHSIEVE_CORE_IO_PREFETCH_SOURCE_H_

#include <cstddef>
#include <deque>
#include <memory>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "core/io/byte_source.h"

namespace graphsieve {

class PrefetchSource final : public ByteSource {
 public:
  // REQUIRES: inner != nullptr, chunk_bytes > 0, chunks >= 2.
  PrefetchSource(std::unique_ptr<ByteSource> inner, size_t chunk_bytes, int chunks);
  ~PrefetchSource() override;
  PrefetchSource(const PrefetchSource&) = delete;
  PrefetchSource& operator=(const PrefetchSource&) = delete;

  absl::StatusOr<size_t> Read(char* buf, size_t n) override;
  bool compressed() const override { return compressed_; }
  // Compressed bytes behind the data handed out so far (not the read-ahead).
  uint64_t file_bytes_read() const override { return consumed_file_bytes_; }
  uint64_t file_size() const override { return file_size_; }

 private:
  struct Chunk {
    int buffer = -1;
    absl::StatusOr<size_t> size;
    uint64_t file_bytes = 0;  // inner->file_bytes_read() after filling it
  };
  void Produce();

  // Constant after construction.
  const bool compressed_;
  const uint64_t file_size_;
  // Owned by the background thread while it runs.
  std::unique_ptr<ByteSource> inner_;
  std::vector<std::vector<char>> buffers_;  // a buffer is either free, filled, or current

  absl::Mutex mu_;
  std::deque<int> free_ ABSL_GUARDED_BY(mu_);
  std::deque<Chunk> filled_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;

  // Consumer state.
  Chunk current_;
  size_t offset_ = 0;
  bool done_ = false;  // end of data or an error was handed out
  absl::Status error_;
  uint64_t consumed_file_bytes_ = 0;

  std::thread thread_;  // last: starts after every member above exists
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_IO_PREFETCH_SOURCE_H_
