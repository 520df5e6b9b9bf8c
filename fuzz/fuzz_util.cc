#include "fuzz/fuzz_util.h"

#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

namespace graphsieve {
namespace fuzz {

const std::string& ScratchDir() {
  static const std::string* dir = [] {
    const char* base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    auto* d = new std::string(std::string(base) + "/graphsieve-fuzz-" + std::to_string(getpid()));
    mkdir(d->c_str(), 0700);
    std::atexit([] {
      std::error_code ec;
      std::filesystem::remove_all(ScratchDir(), ec);
    });
    return d;
  }();
  return *dir;
}

void WriteFileOrDie(const std::string& path, std::string_view data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  out.close();
  Check(out.good(), ("cannot write " + path).c_str());
}

std::string Gzip(std::string_view data) {
  z_stream z;
  std::memset(&z, 0, sizeof(z));
  // windowBits 15 + 16: a gzip header and trailer instead of zlib's.
  Check(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK, "deflateInit2");
  std::string out(deflateBound(&z, data.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(data.data()));
  z.avail_in = static_cast<uInt>(data.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  Check(deflate(&z, Z_FINISH) == Z_STREAM_END, "deflate");
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

void Check(bool ok, const char* what) {
  if (ok) return;
  std::fprintf(stderr, "fuzz check failed: %s\n", what);
  std::abort();
}

std::string_view Input::Line() {
  const char* begin = reinterpret_cast<const char*>(data_);
  size_t n = 0;
  while (n < size_ && begin[n] != '\n') ++n;
  std::string_view line(begin, n);
  const size_t used = n < size_ ? n + 1 : n;
  data_ += used;
  size_ -= used;
  return line;
}

}  // namespace fuzz
}  // namespace graphsieve
