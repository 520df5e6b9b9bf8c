// graphsieve-gen: writes a deterministic, realistic impression log as CSV.
//   graphsieve-gen --preset kuairec --scale 1 --seed 7 --output log.csv [--pilot] [--gzip]
#include <sys/statvfs.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <string>
#include <tuple>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/cli/flags.h"
#include "core/io/output_file.h"
#include "gen/generator.h"
#include "graphsieve/version.h"

ABSL_FLAG(std::string, preset, "kuairec",
          "Size preset: kuairec (5,765 users, 10,679 items, ~12M instances, ~1 positive per 35), "
          "small (kuairec "
          "at scale 0.01: 577 users, 1,068 items, 120k instances) or tiny (60 users, 100 items, "
          "2,000 instances).");
ABSL_FLAG(double, scale, 1.0,
          "Multiplies the preset's instances by S and its users and items by sqrt(S) (the matrix "
          "density stays).");
ABSL_FLAG(double, nodes_scale, 0,
          "Multiplies the preset's users and items by N instead of sqrt(--scale); with N = --scale "
          "the nodes grow with the impressions (scaling runs). 0 = off.");
ABSL_FLAG(double, users_scale, 0,
          "Multiplies the preset's users alone by U (the items keep their factor); with U = "
          "--scale the users grow with the impressions and the items as their square root. "
          "0 = off.");
ABSL_FLAG(uint64_t, seed, 1, "Random seed. Same flags and seed give the same bytes.");
ABSL_FLAG(std::string, output, "",
          "Output file, or '-' for standard output. Required. Written as FILE.tmp, then renamed "
          "(a symbolic link's target likewise; a FIFO or device is written in place).");
ABSL_FLAG(bool, pilot, false,
          "Add a pilot_score column: the true click probability deliberately corrupted (noise + "
          "miscalibration).");
ABSL_FLAG(bool, truth, false,
          "Add a true_prob column: the click probability each label was drawn from.");
ABSL_FLAG(bool, gzip, false, "Gzip the output (the reader detects gzip by its magic bytes).");
ABSL_FLAG(int, gzip_level, 1, "Gzip level 1 (fast) .. 9 (small), with --gzip.");
ABSL_FLAG(int64_t, users, 0, "Override the number of users (0 = from the preset and scale).");
ABSL_FLAG(int64_t, items, 0, "Override the number of items (0 = from the preset and scale).");
ABSL_FLAG(int64_t, instances, 0,
          "Override the number of instances (0 = from the preset and scale).");
ABSL_FLAG(double, positive_rate, 1.0 / 35.0, "Target mean click probability over instances.");
ABSL_FLAG(double, repeat_rate, 0.0256, "Mean extra impressions of a pair (instances/pairs - 1).");
ABSL_FLAG(std::string, exposure, "popularity",
          "Which pairs are impressed: popularity (power-law activity x popularity, independent of "
          "preference) or preference (a logging policy: each user's top items under a noisy "
          "previous model, plus --exploration of popularity-drawn items). docs/DATA.md section 4.");
ABSL_FLAG(double, exploration, 0.2,
          "With --exposure=preference: share of each user's pairs drawn by popularity instead of "
          "the previous model's top items.");
ABSL_FLAG(int, churn_days, 0,
          "Churn: the log spans D days and gets a timestamp column (seconds since its start); "
          "pairs are impressed only while both the user and the item exist. 0 = off (no "
          "timestamp column, every byte as without churn). docs/DATA.md \"Churn\".");
ABSL_FLAG(double, new_users_per_day, 0,
          "Churn: users arriving per day during the log (the others exist from its start); "
          "needs --churn_days.");
ABSL_FLAG(double, new_items_per_day, 0,
          "Churn: items published per day during the log (the others were published in the "
          "--churn_days before it); needs --churn_days.");
ABSL_FLAG(double, item_half_life_days, 0,
          "Churn: an item's exposure halves every H days of age (items age; 0 = no aging); "
          "needs --churn_days.");
ABSL_FLAG(int, threads, 2,
          "Worker threads (1..64) generating and formatting users; the output is identical for any "
          "value.");
ABSL_FLAG(std::string, test_output, "",
          "Also write an unbiased test set here: --test_instances impressions drawn with "
          "--test_exposure from the same click model (same columns as the log).");
ABSL_FLAG(std::string, test_exposure, "random",
          "Exposure of the --test_output draw: random (a uniformly drawn user and item per "
          "impression, independent of --exposure).");
ABSL_FLAG(int64_t, test_instances, 100000, "Impressions of the --test_output draw.");
ABSL_FLAG(bool, quiet, false, "No progress or summary on standard error.");

namespace {

// The temporaries being written (FILE.tmp), removed if SIGINT or SIGTERM ends
// the run; a path is set before its file is created. unlink is
// async-signal-safe.
char temporaries[2][4096];

void RemoveTemporariesAndDie(int sig) {
  for (const char* path : temporaries) {
    if (path[0] != '\0') ::unlink(path);
  }
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

void RemoveOnSignal(int slot, const graphsieve::OutputFile& out) {
  if (out.in_place() || out.write_path().size() >= sizeof(temporaries[slot])) return;
  std::memcpy(temporaries[slot], out.write_path().c_str(), out.write_path().size() + 1);
  struct sigaction action = {};
  action.sa_handler = RemoveTemporariesAndDie;
  sigemptyset(&action.sa_mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGPIPE}) ::sigaction(sig, &action, nullptr);
}

// Bytes free to this user on the file system holding `path`, 0 when unknown.
uint64_t FreeBytes(const std::string& path) {
  struct statvfs fs;
  if (::statvfs(path.c_str(), &fs) != 0) return 0;
  return static_cast<uint64_t>(fs.f_bavail) * static_cast<uint64_t>(fs.f_frsize);
}

// Physical memory, 0 when unknown.
uint64_t PhysicalMemoryBytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

int Run() {
  const std::string output = absl::GetFlag(FLAGS_output);
  if (output.empty()) {
    std::fprintf(
        stderr, "graphsieve-gen: --output is required (a file path, or '-' for standard output)\n");
    return 2;
  }
  absl::StatusOr<graphsieve::GeneratorOptions> preset = graphsieve::GeneratorPreset(
      absl::GetFlag(FLAGS_preset), absl::GetFlag(FLAGS_scale), absl::GetFlag(FLAGS_nodes_scale),
      absl::GetFlag(FLAGS_users_scale));
  if (!preset.ok()) {
    std::fprintf(stderr, "graphsieve-gen: --preset/--scale: %s\n",
                 std::string(preset.status().message()).c_str());
    return 2;
  }
  graphsieve::GeneratorOptions options = *preset;
  options.seed = absl::GetFlag(FLAGS_seed);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.pilot = absl::GetFlag(FLAGS_pilot);
  options.truth = absl::GetFlag(FLAGS_truth);
  options.gzip = absl::GetFlag(FLAGS_gzip);
  options.gzip_level = absl::GetFlag(FLAGS_gzip_level);
  if (absl::GetFlag(FLAGS_users) != 0) options.num_users = absl::GetFlag(FLAGS_users);
  if (absl::GetFlag(FLAGS_items) != 0) options.num_items = absl::GetFlag(FLAGS_items);
  if (absl::GetFlag(FLAGS_instances) != 0) options.num_instances = absl::GetFlag(FLAGS_instances);
  absl::StatusOr<graphsieve::Exposure> exposure =
      graphsieve::ParseExposure(absl::GetFlag(FLAGS_exposure));
  if (!exposure.ok()) {
    std::fprintf(stderr, "graphsieve-gen: --exposure: %s\n",
                 std::string(exposure.status().message()).c_str());
    return 2;
  }
  options.exposure = *exposure;
  options.exploration = absl::GetFlag(FLAGS_exploration);
  options.positive_rate = absl::GetFlag(FLAGS_positive_rate);
  options.repeat_rate = absl::GetFlag(FLAGS_repeat_rate);
  options.churn_days = absl::GetFlag(FLAGS_churn_days);
  options.new_users_per_day = absl::GetFlag(FLAGS_new_users_per_day);
  options.new_items_per_day = absl::GetFlag(FLAGS_new_items_per_day);
  options.item_half_life_days = absl::GetFlag(FLAGS_item_half_life_days);
  const bool quiet = absl::GetFlag(FLAGS_quiet);
  if (absl::GetFlag(FLAGS_test_exposure) != "random") {
    std::fprintf(stderr, "graphsieve-gen: --test_exposure: unknown '%s', expected random\n",
                 absl::GetFlag(FLAGS_test_exposure).c_str());
    return 2;
  }
  if (!absl::GetFlag(FLAGS_test_output).empty() && absl::GetFlag(FLAGS_test_instances) < 1) {
    std::fprintf(stderr, "graphsieve-gen: --test_instances must be >= 1, got %lld\n",
                 static_cast<long long>(absl::GetFlag(FLAGS_test_instances)));
    return 2;
  }
  if (absl::Status s = options.Validate(); !s.ok()) {
    std::fprintf(stderr, "graphsieve-gen: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  const uint64_t memory = options.MemoryBytes(), physical = PhysicalMemoryBytes();
  if (physical > 0 && memory > physical) {
    std::fprintf(stderr,
                 "graphsieve-gen: %lld users and %lld items need about %.1f GiB of memory; this "
                 "machine has %.1f GiB: lower --users, --items or --scale\n",
                 static_cast<long long>(options.num_users),
                 static_cast<long long>(options.num_items), static_cast<double>(memory) / (1 << 30),
                 static_cast<double>(physical) / (1 << 30));
    return 2;
  }
  // Both outputs are checked before anything is generated.
  const std::string test_output = absl::GetFlag(FLAGS_test_output);
  std::optional<graphsieve::OutputFile> out, test_out;
  for (auto [path, flag, slot] : {std::make_tuple(output, "--output", &out),
                                  std::make_tuple(test_output, "--test_output", &test_out)}) {
    if (path.empty() || path == "-") continue;
    absl::StatusOr<graphsieve::OutputFile> resolved = graphsieve::OutputFile::Resolve(path, flag);
    if (!resolved.ok()) {
      std::fprintf(stderr, "graphsieve-gen: %s\n",
                   std::string(resolved.status().message()).c_str());
      return 2;
    }
    *slot = *std::move(resolved);
  }
  if (absl::Status s =
          graphsieve::RefuseOutputOverInput(test_output, "--test_output", output, "--output");
      !s.ok()) {
    std::fprintf(stderr, "graphsieve-gen: %s\n", std::string(s.message()).c_str());
    return 2;
  }
  if (out && !out->in_place()) {
    // A log the file system cannot hold is refused before it fills the disk
    // (gzip at level 1 writes about a quarter of the text; a fifth is assumed).
    const uint64_t bytes = options.TextBytes() / (options.gzip ? 5 : 1);
    const std::string dir = std::filesystem::path(out->write_path()).parent_path().string();
    const uint64_t free = FreeBytes(dir.empty() ? "." : dir);
    if (free > 0 && bytes > free) {
      std::fprintf(stderr,
                   "graphsieve-gen: %lld instances would write about %.1f GB to '%s', which has "
                   "%.1f GB free: lower --instances or --scale%s\n",
                   static_cast<long long>(options.num_instances), static_cast<double>(bytes) / 1e9,
                   dir.empty() ? "." : dir.c_str(), static_cast<double>(free) / 1e9,
                   options.gzip ? "" : ", or add --gzip");
      return 2;
    }
  }
  if (out) RemoveOnSignal(0, *out);
  if (test_out) RemoveOnSignal(1, *test_out);
  if (!quiet) {
    // On a terminal one live line; in a log file (stderr not a terminal) a
    // line at every tenth of the users.
    options.progress = [total = options.num_users, live = ::isatty(2) != 0, shown = -1](
                           int64_t users, int64_t rows) mutable {
      const int percent = static_cast<int>(100 * users / total);
      if (live) {
        std::fprintf(stderr, "\rgraphsieve-gen: %3d%% of users, %lld rows", percent,
                     static_cast<long long>(rows));
        if (users == total) std::fprintf(stderr, "\n");
      } else if (percent / 10 > shown) {
        shown = percent / 10;
        std::fprintf(stderr, "graphsieve-gen: %d%% of users, %lld rows\n", percent,
                     static_cast<long long>(rows));
      }
    };
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<graphsieve::GeneratorStats> stats;
  try {
    stats = graphsieve::WriteGeneratedLog(options, output);
  } catch (const std::bad_alloc&) {
    if (out) out->Abandon();
    std::fprintf(stderr,
                 "graphsieve-gen: out of memory generating %lld users and %lld items: lower "
                 "--users, --items or --scale\n",
                 static_cast<long long>(options.num_users),
                 static_cast<long long>(options.num_items));
    return 1;
  }
  if (!stats.ok()) {
    std::fprintf(stderr, "graphsieve-gen: %s\n", std::string(stats.status().message()).c_str());
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!quiet) {
    std::fprintf(
        stderr, "%s",
        absl::StrFormat(
            "graphsieve-gen: wrote %s: %d instances, %d pairs, %d users, %d items, %d positive "
            "instances (1 per %.1f), %d positive pairs, %.1f MB text, %.2f s\n",
            output == "-" ? "<stdout>" : output, stats->instances, stats->pairs, stats->users,
            stats->items, stats->positive_instances,
            static_cast<double>(stats->instances) /
                static_cast<double>(std::max<int64_t>(1, stats->positive_instances)),
            stats->positive_pairs, static_cast<double>(stats->bytes_written) / 1e6, seconds)
            .c_str());
  }
  if (!test_output.empty()) {
    absl::StatusOr<graphsieve::GeneratorStats> test;
    try {
      test = graphsieve::WriteRandomExposureTest(options, absl::GetFlag(FLAGS_test_instances),
                                                 test_output);
    } catch (const std::bad_alloc&) {
      if (test_out) test_out->Abandon();
      std::fprintf(stderr,
                   "graphsieve-gen: out of memory drawing the test set: lower "
                   "--test_instances\n");
      return 1;
    }
    if (!test.ok()) {
      std::fprintf(stderr, "graphsieve-gen: --test_output: %s\n",
                   std::string(test.status().message()).c_str());
      return 1;
    }
    if (!quiet) {
      std::fprintf(stderr, "%s",
                   absl::StrFormat("graphsieve-gen: wrote %s: %d randomly exposed test "
                                   "impressions, %d positive\n",
                                   test_output, test->instances, test->positive_instances)
                       .c_str());
    }
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  graphsieve::ConfigureFlagUsage(
      "writes a deterministic, realistic impression log (CSV: "
      "user_id,item_id,label[,pilot_score][,true_prob][,timestamp]).\n"
      "Power-law user activity and item popularity, labels from a latent-factor click model, "
      "repeated impressions.\n"
      "Example: graphsieve-gen --preset kuairec --scale 1 --seed 7 --output kuairec.csv --pilot\n"
      "Flag names may use '-' or '_' (--nodes-scale = --nodes_scale). Docs: docs/DATA.md",
      "gen/main.cc", "graphsieve-gen " GRAPHSIEVE_VERSION);
  std::vector<std::string> args = graphsieve::NormaliseFlagNames(argc, argv);
  std::vector<char*> arg_ptrs = graphsieve::ArgvPointers(args);
  // An unknown or ill-typed flag is a usage error (2); --help and --version exit 0.
  graphsieve::ParsedFlags parsed = graphsieve::ParseFlags(arg_ptrs);
  if (parsed.exit_now) return 0;
  if (!parsed.status.ok()) {
    std::fprintf(stderr, "graphsieve-gen: %s\n", std::string(parsed.status.message()).c_str());
    return 2;
  }
  const std::vector<char*>& rest = parsed.positional;
  if (rest.size() > 1) {
    std::fprintf(stderr,
                 "graphsieve-gen: unexpected argument '%s' (all options are --flags; see --help)\n",
                 rest[1]);
    return 2;
  }
  return Run();
}
