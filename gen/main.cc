// graphsieve-gen: writes a deterministic, realistic impression log as CSV.
//   graphsieve-gen --preset kuairec --scale 1 --seed 7 --output log.csv [--pilot] [--gzip]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/cli/flags.h"
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
          "Output file, or '-' for standard output. Required. Written as FILE.tmp, then renamed.");
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
  if (!quiet && ::isatty(2)) {  // a live progress line on a terminal only
    options.progress = [total = options.num_users](int64_t users, int64_t rows) {
      std::fprintf(stderr, "\rgraphsieve-gen: %3d%% of users, %lld rows",
                   static_cast<int>(100 * users / total), static_cast<long long>(rows));
      if (users == total) std::fprintf(stderr, "\n");
    };
  }
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<graphsieve::GeneratorStats> stats = graphsieve::WriteGeneratedLog(options, output);
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
  const std::string test_output = absl::GetFlag(FLAGS_test_output);
  if (!test_output.empty()) {
    absl::StatusOr<graphsieve::GeneratorStats> test = graphsieve::WriteRandomExposureTest(
        options, absl::GetFlag(FLAGS_test_instances), test_output);
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
  std::vector<char*> rest =
      absl::ParseCommandLine(static_cast<int>(arg_ptrs.size()), arg_ptrs.data());
  if (rest.size() > 1) {
    std::fprintf(stderr,
                 "graphsieve-gen: unexpected argument '%s' (all options are --flags; see --help)\n",
                 rest[1]);
    return 2;
  }
  return Run();
}
