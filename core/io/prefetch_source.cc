#include "core/io/prefetch_source.h"

#include <cstring>
#include <utility>

namespace graphsieve {

PrefetchSource::PrefetchSource(std::unique_ptr<ByteSource> inner, size_t chunk_bytes, int chunks)
    : compressed_(inner->compressed()),
      file_size_(inner->file_size()),
      inner_(std::move(inner)),
      buffers_(static_cast<size_t>(chunks), std::vector<char>(chunk_bytes)) {
  {
    absl::MutexLock lock(&mu_);
    for (int i = 0; i < chunks; ++i) free_.push_back(i);
  }
  thread_ = std::thread([this] { Produce(); });
}

PrefetchSource::~PrefetchSource() {
  {
    absl::MutexLock lock(&mu_);
    stop_ = true;
  }
  thread_.join();
}

void PrefetchSource::Produce() {
  while (true) {
    int buffer = -1;
    {
      absl::MutexLock lock(&mu_);
      auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return stop_ || !free_.empty(); };
      mu_.Await(absl::Condition(&ready));
      if (stop_) return;
      buffer = free_.front();
      free_.pop_front();
    }
    std::vector<char>& b = buffers_[static_cast<size_t>(buffer)];
    Chunk chunk;
    chunk.buffer = buffer;
    // Fill the whole chunk (the inner source may return less per call).
    size_t filled = 0;
    absl::Status status;
    while (filled < b.size()) {
      absl::StatusOr<size_t> got = inner_->Read(b.data() + filled, b.size() - filled);
      if (!got.ok()) {
        status = got.status();
        break;
      }
      if (*got == 0) break;
      filled += *got;
    }
    const bool last = !status.ok() || filled < b.size();
    // With an error after some good bytes, the bytes go first, the error next.
    if (status.ok() || filled > 0) {
      chunk.size = filled;
    } else {
      chunk.size = status;
    }
    chunk.file_bytes = inner_->file_bytes_read();
    absl::MutexLock lock(&mu_);
    filled_.push_back(std::move(chunk));
    if (!status.ok() && filled > 0) {
      Chunk error;
      error.size = status;
      error.file_bytes = inner_->file_bytes_read();
      filled_.push_back(std::move(error));
    } else if (last && filled > 0) {
      Chunk end;
      end.size = size_t{0};
      end.file_bytes = inner_->file_bytes_read();
      filled_.push_back(std::move(end));
    }
    if (last) return;
  }
}

absl::StatusOr<size_t> PrefetchSource::Read(char* buf, size_t n) {
  while (true) {
    if (done_) {
      if (!error_.ok()) return error_;
      return size_t{0};
    }
    if (current_.buffer >= 0 && current_.size.ok() && offset_ < *current_.size) {
      const size_t take = std::min(n, *current_.size - offset_);
      std::memcpy(buf, buffers_[static_cast<size_t>(current_.buffer)].data() + offset_, take);
      offset_ += take;
      return take;
    }
    absl::MutexLock lock(&mu_);
    if (current_.buffer >= 0) free_.push_back(current_.buffer);  // give the used chunk back
    auto ready = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return !filled_.empty(); };
    mu_.Await(absl::Condition(&ready));
    current_ = std::move(filled_.front());
    filled_.pop_front();
    offset_ = 0;
    consumed_file_bytes_ = current_.file_bytes;
    if (!current_.size.ok()) {
      done_ = true;
      error_ = current_.size.status();
      if (current_.buffer >= 0) free_.push_back(current_.buffer);
      current_.buffer = -1;
    } else if (*current_.size == 0) {
      done_ = true;
      if (current_.buffer >= 0) free_.push_back(current_.buffer);
      current_.buffer = -1;
    }
  }
}

}  // namespace graphsieve
