#include "core/io/line_splitter.h"

#include <cstring>

#include "absl/strings/str_cat.h"

namespace graphsieve {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "Split's SWAR scan assumes little-endian words");

LineReader::LineReader(ByteSource* source, const LogReaderOptions& options)
    : source_(source),
      max_line_bytes_(options.max_line_bytes),
      buffer_(options.read_buffer_bytes) {}

absl::Status LineReader::Refill() {
  if (begin_ > 0) {  // keep the partial line, move it to the front
    std::memmove(buffer_.data(), buffer_.data() + begin_, end_ - begin_);
    end_ -= begin_;
    begin_ = 0;
  }
  if (end_ == buffer_.size()) {
    if (buffer_.size() >= max_line_bytes_) {
      return absl::InvalidArgumentError(absl::StrCat(
          "line longer than ", max_line_bytes_, " bytes (max_line_bytes); is this a text log?"));
    }
    buffer_.resize(std::min(buffer_.size() * 2, max_line_bytes_));
  }
  absl::StatusOr<size_t> got = source_->Read(buffer_.data() + end_, buffer_.size() - end_);
  if (!got.ok()) return got.status();
  if (*got == 0) eof_ = true;
  end_ += *got;
  bytes_ += *got;
  return absl::OkStatus();
}

absl::StatusOr<bool> LineReader::Next(std::string_view* line) {
  while (true) {
    const char* base = buffer_.data();
    const void* nl = begin_ < end_ ? std::memchr(base + begin_, '\n', end_ - begin_) : nullptr;
    size_t len = 0;
    if (nl != nullptr) {
      len = static_cast<size_t>(static_cast<const char*>(nl) - (base + begin_));
    } else if (eof_) {
      if (begin_ == end_) return false;
      len = end_ - begin_;  // last line without '\n'
    } else {
      if (absl::Status s = Refill(); !s.ok()) {
        if (s.code() == absl::StatusCode::kInvalidArgument) ++line_number_;  // the long line
        return s;
      }
      continue;
    }
    *line = std::string_view(base + begin_, len);
    begin_ += len + (nl != nullptr ? 1 : 0);
    if (!line->empty() && line->back() == '\r') line->remove_suffix(1);
    ++line_number_;
    return true;
  }
}

size_t LineSplitter::Split(std::string_view line, std::vector<std::string_view>* fields) {
  error_ = nullptr;
  const char* const begin = line.data();
  const char* const end = begin + line.size();
  if (begin < end && *begin == '"') return SplitQuoted(line, 0, 0, fields);
  std::string_view* out = fields->data();
  size_t capacity = fields->size();
  size_t n = 0;
  const char* start = begin;
  // Ends the field at `d`; false when the next field is quoted (slow path).
  auto emit = [&](const char* d) {
    if (n == capacity) {
      fields->resize(2 * capacity + 4);
      out = fields->data();
      capacity = fields->size();
    }
    out[n++] = std::string_view(start, static_cast<size_t>(d - start));
    start = d + 1;
    return !(start < end && *start == '"');
  };
  // Eight bytes at a time (SWAR): mark the bytes equal to the delimiter
  // exactly (no borrow between bytes), then visit the marks in order.
  constexpr uint64_t kLow7 = 0x7F7F7F7F7F7F7F7Full;
  const uint64_t pattern = 0x0101010101010101ull * static_cast<unsigned char>(delimiter_);
  const char* p = begin;
  for (; end - p >= 8; p += 8) {
    uint64_t word;
    std::memcpy(&word, p, 8);
    const uint64_t x = word ^ pattern;  // zero bytes where the delimiter is
    uint64_t marks = ~(((x & kLow7) + kLow7) | x | kLow7);
    while (marks != 0) {
      const char* d = p + (__builtin_ctzll(marks) >> 3);
      if (!emit(d)) return SplitQuoted(line, static_cast<size_t>(start - begin), n, fields);
      marks &= marks - 1;
    }
  }
  for (; p < end; ++p) {
    if (*p == delimiter_ && !emit(p))
      return SplitQuoted(line, static_cast<size_t>(start - begin), n, fields);
  }
  if (n == capacity) {
    fields->resize(2 * capacity + 4);
    out = fields->data();
  }
  out[n++] = std::string_view(start, static_cast<size_t>(end - start));
  return n;
}

// Slow path from the first quoted field on: fields are split one character at
// a time; a quoted field may contain the delimiter and "" for a quote.
size_t LineSplitter::SplitQuoted(std::string_view line, size_t pos, size_t n,
                                 std::vector<std::string_view>* fields) {
  const size_t size = line.size();
  while (true) {
    if (n >= fields->size()) fields->resize(n + 1);
    if (pos < size && line[pos] == '"') {
      size_t i = pos + 1;
      bool escaped = false;
      while (true) {
        const size_t q = line.find('"', i);
        if (q == std::string_view::npos) {
          error_ = "unterminated quoted field (a quoted field may not span lines)";
          return 0;
        }
        if (q + 1 < size && line[q + 1] == '"') {
          escaped = true;
          i = q + 2;
          continue;
        }
        std::string_view inner = line.substr(pos + 1, q - pos - 1);
        if (escaped) {
          if (scratch_.size() <= n) scratch_.resize(n + 1);
          std::string& s = scratch_[n];
          s.clear();
          for (size_t k = 0; k < inner.size(); ++k) {
            s.push_back(inner[k]);
            if (inner[k] == '"') ++k;  // skip the second quote of ""
          }
          inner = s;
        }
        (*fields)[n++] = inner;
        pos = q + 1;
        break;
      }
      if (pos == size) return n;
      if (line[pos] != delimiter_) {
        error_ = "unexpected text after a closing quote";
        return 0;
      }
      ++pos;
      continue;
    }
    const size_t d = line.find(delimiter_, pos);
    const size_t end = d == std::string_view::npos ? size : d;
    (*fields)[n++] = line.substr(pos, end - pos);
    if (d == std::string_view::npos) return n;
    pos = d + 1;
  }
}

}  // namespace graphsieve
