// graphsieve-bench-write: the snapshot writer alone (WriteSnapshotDir: pairs
// SST files, ingest, index.gsi, digests, fsync), on synthetic KuaiRec-shaped
// pair tables whose users and items grow with the pairs (scale S: 5,765·S
// users, 10,679·S items, ≈ 2,029 pairs per user — what graphsieve-gen
// --preset kuairec --scale S --nodes_scale S gives), every scale in the same
// run, so the cost per pair can be compared across scales without the
// pipeline in front (docs/SCALING.md "The write stage").
//
//   graphsieve-bench-write --scales 1,4 --repeat 2
//
// Prints, per scale and repeat: wall seconds of each writer part, the CPU
// seconds of the whole write (user + system of the process), wall ns per
// pair, and the ratio of each run's wall per pair to the first run's.
// --pairs_per_sst_file 0,2097152 compares one pairs file per thread (the
// writer before the bound) with the bound, in the same run.
// Not a test: no assertions.
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_split.h"
#include "core/snapshot/snapshot_writer.h"

ABSL_FLAG(std::string, scales, "1,4", "Scales, comma-separated (1 = 11.7M pairs).");
ABSL_FLAG(int32_t, repeat, 1, "Writes per scale.");
ABSL_FLAG(int32_t, threads, 2, "Writer threads (SnapshotWriterOptions::threads).");
ABSL_FLAG(int32_t, sketch_dim, 34, "Floats per node row (34 = k 32 + the control variate's 2).");
ABSL_FLAG(std::string, pairs_per_sst_file, "0,4194304",
          "Comma-separated SnapshotWriterOptions::pairs_per_sst_file values to compare in the same "
          "run (0 = one file per thread, as before the bound existed).");
ABSL_FLAG(std::string, dir, "", "Scratch directory (default: a fresh one under /tmp, removed).");
ABSL_FLAG(uint64_t, seed, 1, "Seed.");

namespace graphsieve {
namespace {

using Clock = std::chrono::steady_clock;

double CpuSeconds() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_utime.tv_usec * 1e-6 + ru.ru_stime.tv_sec +
         ru.ru_stime.tv_usec * 1e-6;
}

struct Data {
  PairTable pairs;
  PipelineResult result;
};

// Ids ascending (the pair table's order), pairs per user drawn with random
// gaps over the items so each user's items are ascending too.
Data MakeData(double scale, int sketch_dim, uint64_t seed) {
  Data d;
  std::mt19937_64 rng(seed);
  const size_t users = static_cast<size_t>(5765 * scale),
               items = static_cast<size_t>(10679 * scale);
  PairTable& t = d.pairs;
  uint64_t id = 0;
  for (size_t u = 0; u < users; ++u) t.user_ids.push_back(id += 1 + rng() % 1000);
  id = 0;
  for (size_t i = 0; i < items; ++i) t.item_ids.push_back(id += 1 + rng() % 1000);
  const uint64_t max_gap = 2 * items / 2029;  // mean gap ≈ items / 2,029
  for (uint32_t u = 0; u < users; ++u) {
    for (uint64_t i = rng() % max_gap; i < items; i += 1 + rng() % max_gap) {
      t.pair_user.push_back(u);
      t.pair_item.push_back(static_cast<uint32_t>(i));
      d.result.rate.push_back(static_cast<float>(0.01 + 0.99 * (rng() >> 11) * 0x1.0p-53));
    }
  }
  const size_t n = t.pair_user.size();
  t.label.assign(n, 0);
  t.instances.assign(n, 1);
  t.negatives.assign(n, 1);
  t.total_instances = t.total_negatives = n;
  NodeTable& nodes = d.result.nodes;
  nodes.sketch_dim = sketch_dim;
  for (size_t k = 0; k < users + items; ++k) {
    const bool item = k >= users;
    nodes.ids.push_back(item ? t.item_ids[k - users] : t.user_ids[k]);
    nodes.is_item.push_back(item);
    NodeRecord r{};
    r.degree = static_cast<uint32_t>(k % 97);
    nodes.records.push_back(r);
  }
  nodes.sketch.assign((users + items) * sketch_dim, 0.25f);
  d.result.model.sketch_dim = sketch_dim;
  d.result.achieved_negative_mean_rate = 0.2;
  return d;
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage("The snapshot writer alone at several scales (see the source).");
  absl::ParseCommandLine(argc, argv);
  std::string dir = absl::GetFlag(FLAGS_dir);
  const bool own_dir = dir.empty();
  if (own_dir)
    dir = std::filesystem::temp_directory_path() /
          ("graphsieve-bench-write-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  double load[3] = {0, 0, 0};
  (void)::getloadavg(load, 3);
  std::printf("graphsieve-bench-write: load average %.2f %.2f %.2f, threads %d\n", load[0], load[1],
              load[2], absl::GetFlag(FLAGS_threads));
  std::printf("%-6s %-9s %-3s %11s %7s %7s %7s %7s %7s %7s %8s %8s %9s %6s\n", "scale", "per_file",
              "rep", "pairs", "check", "sst", "ingest", "index", "digest", "fsync", "wall_s",
              "cpu_s", "ns/pair", "ratio");
  double first_ns = 0;
  int run = 0;
  for (absl::string_view sv : absl::StrSplit(absl::GetFlag(FLAGS_scales), ',')) {
    const double scale = std::strtod(std::string(sv).c_str(), nullptr);
    const Data d = MakeData(scale, absl::GetFlag(FLAGS_sketch_dim), absl::GetFlag(FLAGS_seed));
    const size_t n = d.pairs.num_pairs();
    for (int rep = 0; rep < absl::GetFlag(FLAGS_repeat); ++rep) {
      for (absl::string_view pf : absl::StrSplit(absl::GetFlag(FLAGS_pairs_per_sst_file), ',')) {
        const size_t per_file = std::strtoull(std::string(pf).c_str(), nullptr, 10);
        ++run;
        snapshot::ManifestInfo info;
        info.version = "bench";
        info.created_at = "bench";
        info.parameters = {{"method", "maec"}, {"resistance", "sketch"},
                           {"alpha", 0.2},     {"floor", 0.01},
                           {"gamma", 0.5},     {"sketch_dim", absl::GetFlag(FLAGS_sketch_dim)},
                           {"seed", 1}};
        SnapshotWriterOptions wo;
        wo.threads = absl::GetFlag(FLAGS_threads);
        wo.pairs_per_sst_file = per_file > 0 ? per_file : n;
        const std::string out = dir + "/v" + std::to_string(run);
        const double cpu0 = CpuSeconds();
        const Clock::time_point t0 = Clock::now();
        absl::StatusOr<SnapshotWriteStats> s = WriteSnapshotDir(out, d.pairs, d.result, info, wo);
        const double wall = std::chrono::duration<double>(Clock::now() - t0).count();
        const double cpu = CpuSeconds() - cpu0;
        std::filesystem::remove_all(out);
        if (!s.ok()) {
          std::fprintf(stderr, "write: %s\n", s.status().ToString().c_str());
          return 1;
        }
        const double ns = 1e9 * wall / n;
        if (first_ns == 0) first_ns = ns;
        std::printf(
            "%-6g %-9zu %-3d %11zu %7.2f %7.2f %7.2f %7.2f %7.2f %7.2f %8.2f %8.2f %9.1f %6.2f\n",
            scale, per_file, rep, n, s->seconds_check, s->seconds_sst, s->seconds_ingest,
            s->seconds_index, s->seconds_digest, s->seconds_fsync, wall, cpu, ns, ns / first_ns);
        std::fflush(stdout);
      }
    }
  }
  if (own_dir) std::filesystem::remove_all(dir);
  return 0;
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) { return graphsieve::Main(argc, argv); }
