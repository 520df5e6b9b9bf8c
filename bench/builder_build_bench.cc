// graphsieve-bench-build: the build job end to end on a real log (default
// target: the 12M-instance generated KuaiRec log), in process, publishing into
// a scratch snapshot root. Prints wall seconds per stage, total, peak RSS,
// snapshot bytes on disk and bytes per pair, against the targets (≤ 25 s,
// ≤ 4 GiB, ≤ 32 B/pair). Baseline measured in the same run: reading the input
// bytes from the page cache without parsing (the floor of the "read" stage).
//
//   graphsieve-gen --preset kuairec --scale 1 --seed 1 --output /tmp/kuairec.csv
//   graphsieve-bench-build --input /tmp/kuairec.csv
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "core/offline/build_job.h"

ABSL_FLAG(std::string, input, "", "Impression log(s), comma-separated (required).");
ABSL_FLAG(std::string, table_format, "block", "Pairs table format: block | cuckoo.");
ABSL_FLAG(std::string, resistance, "auto", "Resistance route passed to the pipeline.");
ABSL_FLAG(int32_t, threads, 2, "Threads.");
ABSL_FLAG(std::string, root, "",
          "Snapshot root (default: a fresh directory under /tmp, removed at the end).");

namespace graphsieve {
namespace {

double CpuSeconds() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

double LoadAverage() {
  double l[1] = {0};
  return ::getloadavg(l, 1) == 1 ? l[0] : -1;
}

double ReadFloorSeconds(const std::vector<std::string>& files) {
  auto t0 = std::chrono::steady_clock::now();
  std::unique_ptr<char[]> buf(new char[1 << 20]);
  for (const std::string& f : files) {
    FILE* fp = std::fopen(f.c_str(), "rb");
    if (fp == nullptr) continue;
    while (std::fread(buf.get(), 1, 1 << 20, fp) > 0) {
    }
    std::fclose(fp);
  }
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage("End-to-end benchmark of graphsieve-build's job on one log.");
  absl::ParseCommandLine(argc, argv);
  BuildOptions o;
  for (absl::string_view f : absl::StrSplit(absl::GetFlag(FLAGS_input), ',', absl::SkipEmpty())) {
    o.inputs.emplace_back(f);
  }
  if (o.inputs.empty()) {
    std::fprintf(stderr,
                 "--input is required (generate one with graphsieve-gen --preset kuairec)\n");
    return 2;
  }
  auto format = snapshot::ParseTableFormat(absl::GetFlag(FLAGS_table_format));
  auto resistance = ParseResistanceMethod(absl::GetFlag(FLAGS_resistance));
  if (!format.ok() || !resistance.ok()) {
    std::fprintf(stderr, "bad --table_format or --resistance\n");
    return 2;
  }
  o.pairs_format = *format;
  o.pipeline.resistance = *resistance;
  o.pipeline.threads = absl::GetFlag(FLAGS_threads);
  std::string root = absl::GetFlag(FLAGS_root);
  const bool remove_root = root.empty();
  if (remove_root) {
    std::string templ = "/tmp/graphsieve-bench-build-XXXXXX";
    root = ::mkdtemp(templ.data());
  }
  o.snapshot_root = root;
  const double floor_s = ReadFloorSeconds(o.inputs);
  auto t0 = std::chrono::steady_clock::now();
  // CPU seconds per stage (user + system, all threads): on a shared, loaded
  // machine these are closer to the idle-machine wall time than wall time is.
  std::map<std::string, double> cpu_start, cpu_seconds;
  BuildObserver obs;
  obs.stage_started = [&](const std::string& stage) { cpu_start[stage] = CpuSeconds(); };
  obs.stage_done = [&](const std::string& stage, double) {
    cpu_seconds[stage] = CpuSeconds() - cpu_start[stage];
  };
  const double cpu0 = CpuSeconds();
  auto report = RunBuild(o, obs);
  const double cpu_total = CpuSeconds() - cpu0;
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (!report.ok()) {
    std::fprintf(stderr, "build failed: %s\n", report.status().ToString().c_str());
    return 1;
  }
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  const double rss_gib = ru.ru_maxrss * 1024.0 / (1ull << 30);
  std::printf("input: %llu bytes, %llu instances, %llu pairs, %llu users, %llu items\n",
              (unsigned long long)report->input_bytes, (unsigned long long)report->instances,
              (unsigned long long)report->pairs, (unsigned long long)report->users,
              (unsigned long long)report->items);
  std::printf("resistance route: %s, pairs table: %s\n", report->resistance_route.c_str(),
              snapshot::TableFormatName(o.pairs_format));
  for (const StageTiming& t : report->timings) {
    std::printf("  stage %-12s %7.2f s wall %7.2f s cpu\n", t.stage.c_str(), t.seconds,
                cpu_seconds[t.stage]);
  }
  double read_s = 0;
  for (const StageTiming& t : report->timings) {
    if (t.stage == "read") read_s = t.seconds;
  }
  std::printf("baseline: raw read of the input bytes %.2f s (read stage / raw read = %.1fx)\n",
              floor_s, read_s / floor_s);
  std::printf(
      "total      %7.2f s   (target 25 s: %.2f of target); cpu %.2f s, load average at end %.1f\n",
      total, total / 25.0, cpu_total, LoadAverage());
  std::printf("peak RSS   %7.2f GiB (target 4 GiB: %.2f of target)\n", rss_gib, rss_gib / 4.0);
  std::printf("snapshot   %7.1f MB, %.2f bytes/pair (target 32: %.2f of target)\n",
              report->db_bytes / 1e6, report->db_bytes_per_pair, report->db_bytes_per_pair / 32.0);
  if (remove_root) std::filesystem::remove_all(root);
  return 0;
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) { return graphsieve::Main(argc, argv); }
