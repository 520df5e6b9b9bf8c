// graphsieve-bench-profile: the version profiler's cost for a delta served
// over its base (server/rate_profile.h): the full scan of base + delta
// (ProfileSnapshot of the layered reader) against the incremental profile
// from the base's kept state (IncrementalRateProfiler), in the same run, on
// one delta version; and the base's scan that the incremental profile needs
// once per base. Checks that both profiles agree (pairs, bins, sample).
//
//   graphsieve-bench-profile --snapshot_root DIR [--version V] [--repeat 3]
//
// Prints figures (medians of --repeat); the machine's load average too.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/version_opener.h"
#include "server/rate_profile.h"

ABSL_FLAG(std::string, snapshot_root, "", "Required. The snapshot root.");
ABSL_FLAG(std::string, version, "", "A delta version (default: the one CURRENT names).");
ABSL_FLAG(int, repeat, 3, "Runs of each profile; the median is printed. In [1, 100].");

namespace graphsieve {
namespace {

double Seconds(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string a, b, c;
  in >> a >> b >> c;
  return a + " " + b + " " + c;
}

int Main() {
  const std::string root = absl::GetFlag(FLAGS_snapshot_root);
  const int repeat = absl::GetFlag(FLAGS_repeat);
  if (root.empty()) {
    std::fprintf(stderr, "profile_bench: --snapshot_root is required\n");
    return 2;
  }
  if (repeat < 1 || repeat > 100) {
    std::fprintf(stderr, "profile_bench: --repeat must be in [1, 100], got %d\n", repeat);
    return 2;
  }
  std::string version = absl::GetFlag(FLAGS_version);
  if (version.empty()) {
    absl::StatusOr<std::unique_ptr<SnapshotStore>> store =
        SnapshotStore::Create({root, /*create_if_missing=*/false});
    absl::StatusOr<std::string> current =
        store.ok() ? (*store)->ReadCurrent() : absl::StatusOr<std::string>(store.status());
    if (!current.ok()) {
      std::fprintf(stderr, "profile_bench: %s\n", current.status().ToString().c_str());
      return 1;
    }
    version = *current;
  }
  VersionOpener opener;
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> reader =
      opener.Open(root, version, SnapshotReaderOptions());
  if (!reader.ok()) {
    std::fprintf(stderr, "profile_bench: %s\n", reader.status().ToString().c_str());
    return 1;
  }
  const auto* layered = dynamic_cast<const LayeredSnapshotReader*>(reader->get());
  if (layered == nullptr) {
    std::fprintf(stderr, "profile_bench: %s is not a delta version\n", version.c_str());
    return 2;
  }
  std::printf("profile_bench: %s over %s: base %llu pairs, delta %llu pairs; load average %s\n",
              version.c_str(), layered->base().manifest().version.c_str(),
              static_cast<unsigned long long>(layered->base().manifest().pairs),
              static_cast<unsigned long long>(layered->delta().manifest().pairs),
              LoadAverage().c_str());

  std::vector<double> full_s, incremental_s;
  RateProfile full, incremental;
  IncrementalRateProfiler profiler;
  auto start = std::chrono::steady_clock::now();
  absl::StatusOr<RateProfile> base = profiler.Profile(layered->base());
  const double base_s = Seconds(start);
  if (!base.ok()) {
    std::fprintf(stderr, "profile_bench: %s\n", base.status().ToString().c_str());
    return 1;
  }
  for (int r = 0; r < repeat; ++r) {
    start = std::chrono::steady_clock::now();
    absl::StatusOr<RateProfile> f = ProfileSnapshot(*layered);
    full_s.push_back(Seconds(start));
    start = std::chrono::steady_clock::now();
    absl::StatusOr<RateProfile> i = profiler.Profile(*layered);
    incremental_s.push_back(Seconds(start));
    if (!f.ok() || !i.ok()) {
      std::fprintf(stderr, "profile_bench: %s\n",
                   (!f.ok() ? f.status() : i.status()).ToString().c_str());
      return 1;
    }
    full = *std::move(f);
    incremental = *std::move(i);
  }
  const bool same = full.pairs == incremental.pairs &&
                    full.pair_counts == incremental.pair_counts &&
                    full.sample.size() == incremental.sample.size() && incremental.incremental;
  std::printf("  base scan, once per base (kept):  %.3f s, %llu pairs read\n", base_s,
              static_cast<unsigned long long>(base->pairs_scanned));
  std::printf("  full scan of base + delta:        %.3f s, %llu pairs read (median of %d)\n",
              Median(full_s), static_cast<unsigned long long>(full.pairs_scanned), repeat);
  std::printf("  incremental (delta over the kept base): %.3f s, %llu pairs read (median of %d)\n",
              Median(incremental_s), static_cast<unsigned long long>(incremental.pairs_scanned),
              repeat);
  std::printf("  full / incremental: %.1fx; profiles agree (pairs, bins, sample size): %s\n",
              Median(full_s) / Median(incremental_s), same ? "yes" : "NO");
  return same ? 0 : 1;
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "The version profiler's full scan against its incremental profile of a delta.\n"
      "  graphsieve-bench-profile --snapshot_root DIR [--version V] [--repeat 3]");
  absl::ParseCommandLine(argc, argv);
  return graphsieve::Main();
}
