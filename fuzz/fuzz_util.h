// Helpers shared by the fuzz targets: a per-process scratch directory on
// tmpfs, whole-file writes, and a check that aborts (so libFuzzer records the
// input) when a documented contract of the code under test is broken.
//
// Not thread-safe (fuzz targets run one input at a time).
#ifndef GRAPHSIEVE_FUZZ_FUZZ_UTIL_H_
#define GRAPHSIEVE_FUZZ_FUZZ_UTIL_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace graphsieve {
namespace fuzz {

// /dev/shm/graphsieve-fuzz-<pid> (created once, removed at exit; /tmp when
// /dev/shm is absent).
const std::string& ScratchDir();

// Writes `data` to `path` (truncating). Aborts on an I/O error: the fuzzer
// itself is broken then, not the code under test.
void WriteFileOrDie(const std::string& path, std::string_view data);

// gzip (RFC 1952) of `data`, for inputs that must reach the inflating reader
// with a valid stream.
std::string Gzip(std::string_view data);

// Prints `what` and aborts when `ok` is false.
void Check(bool ok, const char* what);

// Consumes bytes from the front of a fuzz input.
class Input {
 public:
  Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t Byte() { return size_ > 0 ? (--size_, *data_++) : 0; }
  // Bytes up to (not including) the next '\n', or all that is left.
  std::string_view Line();
  std::string_view Rest() const { return {reinterpret_cast<const char*>(data_), size_}; }

 private:
  const uint8_t* data_;
  size_t size_;
};

}  // namespace fuzz
}  // namespace graphsieve

#endif  // GRAPHSIEVE_FUZZ_FUZZ_UTIL_H_
