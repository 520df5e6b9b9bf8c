// Crash safety of publishing: SIGKILL the real graphsieve-build at random
// moments (concentrated on the write + publish phase) and check after every
// kill that CURRENT names a complete snapshot that the reader accepts with
// full verification, and that every visible version is complete. A final
// clean run removes the leftovers of the killed runs.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <random>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/builder/builder_test_util.h"
#include "tests/snapshot/test_dir.h"

namespace graphsieve {
namespace {

using testing_util::TestDir;

TEST(CrashSafetyTest, KilledBuildsNeverExposeAHalfSnapshot) {
  TestDir dir;
  const std::string log = dir.path() + "/log.csv", root = dir.path() + "/root";
  testing_util::WriteSmallLog(log, /*users=*/400, /*items=*/700, /*per_user=*/50, /*seed=*/5);
  auto args = [&](int seed) {
    return std::vector<std::string>{"--input=" + log,
                                    "--label_col=clicked",
                                    "--snapshot_root=" + root,
                                    "--keep=3",
                                    "--quiet",
                                    "--json",
                                    "--sketch_dim=8",
                                    absl::StrCat("--seed=", seed)};
  };
  // A clean first build; its stage timings tell where the write phase starts.
  auto t0 = std::chrono::steady_clock::now();
  auto first = testing_util::RunBuildBinary(args(1), dir.path());
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_EQ(first.exit_code, 0) << first.err;
  nlohmann::json j = nlohmann::json::parse(first.out);
  double write_start = 0;
  for (const char* stage : {"read", "pair_table", "pipeline", "gates"}) {
    if (j["stage_seconds"].contains(stage)) write_start += j["stage_seconds"][stage].get<double>();
  }
  auto store = SnapshotStore::Create({root, false});
  ASSERT_TRUE(store.ok());

  std::mt19937 rng(12345);
  // Kill moments: from a little before the write phase to a little after the
  // end of a typical run (process start-up makes wall time > stage sum).
  std::uniform_real_distribution<double> when(0.7 * write_start, 1.1 * total);
  int killed = 0, left_mid_write = 0;
  const int kIterations = 15;
  for (int it = 0; it < kIterations; ++it) {
    const double delay = when(rng);
    pid_t pid = testing_util::SpawnBuild(args(100 + it), dir.path());
    ASSERT_GT(pid, 0);
    std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    ::kill(pid, SIGKILL);  // a no-op on a run that already exited (zombie)
    auto r = testing_util::Wait(pid, dir.path());
    if (r.signal == SIGKILL) ++killed;
    if (r.signal == 0) {
      ASSERT_EQ(r.exit_code, 0) << r.err;  // it finished before the kill
    }

    for (const auto& e : std::filesystem::directory_iterator(root)) {
      if (absl::EndsWith(e.path().filename().string(), ".tmp")) ++left_mid_write;
    }
    auto current = (*store)->ReadCurrent();
    ASSERT_TRUE(current.ok()) << "iteration " << it << " (kill after " << delay
                              << "s): " << current.status();
    auto reader = SnapshotReader::Open(root, *current, SnapshotReaderOptions());
    ASSERT_TRUE(reader.ok()) << "iteration " << it << ": CURRENT=" << *current << ": "
                             << reader.status();
    EXPECT_GT((*reader)->manifest().pairs, 0u);
    auto versions = (*store)->ListVersions();
    ASSERT_TRUE(versions.ok());
    for (const std::string& v : *versions) {
      SnapshotReaderOptions quick;
      quick.warm = false;
      auto any = SnapshotReader::Open(root, v, quick);
      EXPECT_TRUE(any.ok()) << "iteration " << it << ": visible version " << v << ": "
                            << any.status();
    }
  }
  // Timing-dependent how many, but the early kill moments precede any run's end.
  EXPECT_GE(killed, 1) << "no run was killed before it finished";
  std::printf("killed %d of %d runs; %d kills left a half-written <version>.tmp behind\n", killed,
              kIterations, left_mid_write);

  // A clean run afterwards publishes and removes every leftover temporary.
  auto last = testing_util::RunBuildBinary(args(999), dir.path());
  ASSERT_EQ(last.exit_code, 0) << last.err;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    EXPECT_FALSE(absl::EndsWith(name, ".tmp") || absl::EndsWith(name, ".deleting")) << name;
  }
  EXPECT_EQ(*(*store)->ReadCurrent(), nlohmann::json::parse(last.out)["version"]);
}

}  // namespace
}  // namespace graphsieve
