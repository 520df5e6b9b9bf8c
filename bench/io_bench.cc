// graphsieve-bench-io: throughput of the log reader and the generator.
//
// 1. graphsieve-gen's kuairec preset (x --scale) written as CSV and as gzip:
//    wall seconds.
// 2. Baselines on the same files, page cache warm: read() in 1 MiB chunks +
//    memchr line counting (plain), zlib gzread + memchr (gzip).
// 3. ReadImpressionLog on both: MB/s of uncompressed text per wall second and
//    per CPU second (= per core; the reader is single-threaded), rows/s, and
//    the ratio to the baseline. Each read is repeated --repeats times; the
//    best run is reported.
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>
#include <zlib.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "core/cli/flags.h"
#include "core/io/log_reader.h"
#include "gen/generator.h"
#include "graphsieve/version.h"

ABSL_FLAG(double, scale, 1.0, "Scale of the kuairec preset (1 = ~12M rows, ~141 MB of CSV).");
ABSL_FLAG(std::string, dir, "/tmp",
          "Directory for the generated files (removed at the end unless --keep).");
ABSL_FLAG(int, repeats, 3, "Runs of each read measurement; the best is reported.");
ABSL_FLAG(bool, keep, false, "Keep the generated files.");
ABSL_FLAG(bool, pilot, true, "Generate and read a pilot_score column too.");

namespace {

struct Timing {
  double wall = 0;
  double cpu = 0;
};

double CpuSeconds() {
  rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

Timing Time(const std::function<void()>& fn) {
  const double cpu0 = CpuSeconds();
  const auto t0 = std::chrono::steady_clock::now();
  fn();
  Timing t;
  t.wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  t.cpu = CpuSeconds() - cpu0;
  return t;
}

Timing Best(int repeats, const std::function<void()>& fn) {
  Timing best;
  for (int i = 0; i < repeats; ++i) {
    const Timing t = Time(fn);
    if (i == 0 || t.wall < best.wall) best = t;
  }
  return best;
}

uint64_t CountLinesRead(const std::string& path, uint64_t* bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return 0;
  std::vector<char> buf(1 << 20);
  uint64_t lines = 0;
  *bytes = 0;
  while (true) {
    const ssize_t r = ::read(fd, buf.data(), buf.size());
    if (r <= 0) break;
    *bytes += static_cast<uint64_t>(r);
    const char* p = buf.data();
    const char* end = p + r;
    while ((p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)))) !=
           nullptr) {
      ++lines;
      ++p;
    }
  }
  ::close(fd);
  return lines;
}

uint64_t CountLinesGz(const std::string& path, uint64_t* bytes) {
  gzFile gz = gzopen(path.c_str(), "rb");
  if (gz == nullptr) return 0;
  gzbuffer(gz, 1 << 18);
  std::vector<char> buf(1 << 20);
  uint64_t lines = 0;
  *bytes = 0;
  while (true) {
    const int r = gzread(gz, buf.data(), static_cast<unsigned>(buf.size()));
    if (r <= 0) break;
    *bytes += static_cast<uint64_t>(r);
    const char* p = buf.data();
    const char* end = p + r;
    while ((p = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)))) !=
           nullptr) {
      ++lines;
      ++p;
    }
  }
  gzclose(gz);
  return lines;
}

void PrintRead(const char* what, const Timing& t, uint64_t bytes, uint64_t rows,
               const Timing& base) {
  const double mb = static_cast<double>(bytes) / 1e6;
  std::printf(
      "%-34s %7.3f s wall %7.3f s cpu  %7.1f MB/s wall  %7.1f MB/s per core  %6.2f M rows/s  "
      "%5.2fx baseline time\n",
      what, t.wall, t.cpu, mb / t.wall, mb / std::max(t.cpu, 1e-9),
      static_cast<double>(rows) / 1e6 / t.wall, t.wall / std::max(base.wall, 1e-9));
}

int Run() {
  const double scale = absl::GetFlag(FLAGS_scale);
  const int repeats = std::max(1, absl::GetFlag(FLAGS_repeats));
  const bool pilot = absl::GetFlag(FLAGS_pilot);
  absl::StatusOr<graphsieve::GeneratorOptions> options =
      graphsieve::GeneratorPreset("kuairec", scale);
  if (!options.ok()) {
    std::fprintf(stderr, "graphsieve-bench-io: --scale: %s\n",
                 std::string(options.status().message()).c_str());
    return 2;
  }
  options->pilot = pilot;
  const std::string base =
      absl::StrFormat("%s/graphsieve-bench-io-%d", absl::GetFlag(FLAGS_dir), ::getpid());
  const std::string csv = base + ".csv", gz = base + ".csv.gz";
  std::printf(
      "graphsieve-bench-io: kuairec preset, scale %g (%lld users, %lld items, %lld target "
      "instances), pilot %s\n",
      scale, static_cast<long long>(options->num_users), static_cast<long long>(options->num_items),
      static_cast<long long>(options->num_instances), pilot ? "on" : "off");

  absl::StatusOr<graphsieve::GeneratorStats> stats;
  const Timing gen = Time([&] { stats = graphsieve::WriteGeneratedLog(*options, csv); });
  if (!stats.ok()) {
    std::fprintf(stderr, "graphsieve-bench-io: %s\n",
                 std::string(stats.status().message()).c_str());
    return 1;
  }
  std::printf(
      "generator (CSV)                    %7.3f s wall %7.3f s cpu  %lld rows, %.1f MB, %.2f M "
      "rows/s\n",
      gen.wall, gen.cpu, static_cast<long long>(stats->instances),
      static_cast<double>(stats->bytes_written) / 1e6,
      static_cast<double>(stats->instances) / 1e6 / gen.wall);
  options->gzip = true;
  absl::StatusOr<graphsieve::GeneratorStats> gz_stats;
  const Timing gen_gz = Time([&] { gz_stats = graphsieve::WriteGeneratedLog(*options, gz); });
  if (!gz_stats.ok()) {
    std::fprintf(stderr, "graphsieve-bench-io: %s\n",
                 std::string(gz_stats.status().message()).c_str());
    return 1;
  }
  std::printf("generator (gzip level 1)           %7.3f s wall %7.3f s cpu\n", gen_gz.wall,
              gen_gz.cpu);

  graphsieve::LogReaderOptions read_options;
  if (pilot) read_options.pilot_column = "pilot_score";
  int failures = 0;
  auto read_once = [&](const std::string& path, uint64_t* rows, uint64_t* bytes) {
    graphsieve::ImpressionLog log;
    const absl::Status s = graphsieve::ReadImpressionLog(path, read_options, &log);
    if (!s.ok()) {
      std::fprintf(stderr, "graphsieve-bench-io: %s\n", std::string(s.message()).c_str());
      ++failures;
    }
    *rows = log.size();
    *bytes = log.bytes_read;
  };
  uint64_t lines = 0, bytes = 0, rows = 0, read_bytes = 0;
  lines = CountLinesRead(csv, &bytes);  // warm the page cache
  const Timing base_plain = Best(repeats, [&] { lines = CountLinesRead(csv, &bytes); });
  PrintRead("baseline read()+memchr (plain)", base_plain, bytes, lines, base_plain);
  const Timing reader_plain = Best(repeats, [&] { read_once(csv, &rows, &read_bytes); });
  PrintRead("ReadImpressionLog (plain)", reader_plain, read_bytes, rows, base_plain);
  uint64_t gz_lines = 0, gz_bytes = 0;
  const Timing base_gz = Best(repeats, [&] { gz_lines = CountLinesGz(gz, &gz_bytes); });
  PrintRead("baseline zlib gzread+memchr (gzip)", base_gz, gz_bytes, gz_lines, base_gz);
  const Timing reader_gz = Best(repeats, [&] { read_once(gz, &rows, &read_bytes); });
  PrintRead("ReadImpressionLog (gzip)", reader_gz, read_bytes, rows, base_gz);
  if (rows + 1 != lines || gz_lines != lines) {
    std::fprintf(
        stderr,
        "graphsieve-bench-io: row counts disagree: reader %llu, lines %llu, gzip lines %llu\n",
        static_cast<unsigned long long>(rows), static_cast<unsigned long long>(lines),
        static_cast<unsigned long long>(gz_lines));
    ++failures;
  }
  if (!absl::GetFlag(FLAGS_keep)) {
    ::unlink(csv.c_str());
    ::unlink(gz.c_str());
  } else {
    std::printf("kept %s and %s\n", csv.c_str(), gz.c_str());
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  graphsieve::ConfigureFlagUsage(
      "measures the log reader (MB/s per core, plain and gzip, against read()+memchr and zlib "
      "baselines) and the "
      "generator's seconds for the kuairec preset.\nExample: graphsieve-bench-io --scale 1 "
      "--repeats 3",
      "io_bench.cc", "graphsieve-bench-io " GRAPHSIEVE_VERSION);
  absl::ParseCommandLine(argc, argv);
  return Run();
}
