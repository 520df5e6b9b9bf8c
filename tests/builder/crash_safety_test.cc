// Crash safety of publishing: SIGKILL the real graphsieve-build at held
// points of writing and publishing (KillsAtEachPointOfWritingAndPublishing)
// and at random moments (KilledBuildsNeverExposeAHalfSnapshot), and check
// after every kill that CURRENT names a complete snapshot that the reader
// accepts with full verification, and that every visible version is
// complete. A final clean run removes the leftovers of the killed runs.
#include <signal.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/version_opener.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/builder/builder_test_util.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::graphsieve::testing::ScopedTempDir;

std::vector<std::string> BuildArgs(const std::string& log, const std::string& root, int seed) {
  return {
      "--input=" + log, "--label_col=clicked", "--snapshot_root=" + root,    "--keep=3", "--quiet",
      "--json",         "--sketch_dim=8",      absl::StrCat("--seed=", seed)};
}

// Checks what a reader may see after a kill: CURRENT names `expected_current`,
// which opens with full verification; every visible version opens.
void ExpectOnlyCompleteVersions(const std::string& root, const std::string& expected_current,
                                const std::string& where) {
  auto store = SnapshotStore::Create({root, false});
  ASSERT_TRUE(store.ok()) << where << ": " << store.status();
  auto current = (*store)->ReadCurrent();
  ASSERT_TRUE(current.ok()) << where << ": " << current.status();
  EXPECT_EQ(*current, expected_current) << where;
  auto reader = VersionOpener().OpenStored(root, *current, SnapshotReaderOptions());
  ASSERT_TRUE(reader.ok()) << where << ": CURRENT=" << *current << ": " << reader.status();
  EXPECT_GT((*reader)->manifest().pairs, 0u) << where;
  auto versions = (*store)->ListVersions();
  ASSERT_TRUE(versions.ok()) << where;
  for (const std::string& v : *versions) {
    SnapshotReaderOptions quick;
    quick.warm = false;
    auto any = VersionOpener().OpenStored(root, v, quick);
    EXPECT_TRUE(any.ok()) << where << ": visible version " << v << ": " << any.status();
  }
}

// The names in `root` ending in ".tmp" (versions being written).
std::vector<std::string> TempVersions(const std::string& root) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(root)) {
    const std::string name = e.path().filename().string();
    if (e.is_directory() && absl::EndsWith(name, ".tmp")) out.push_back(name);
  }
  return out;
}

#ifdef GRAPHSIEVE_HOLD_RENAME_PRELOAD
// graphsieve-build under tests/builder/hold_rename_preload.cc: it blocks at the
// first rename whose source matches `glob` and says so in a marker file; the
// test kills it there, so the kill lands at that exact point, every run.
TEST(CrashSafetyTest, KillsAtEachPointOfWritingAndPublishing) {
  ScopedTempDir dir;
  const std::string log = dir.path() + "/log.csv", root = dir.path() + "/root";
  testing_util::WriteSmallLog(log, /*users=*/400, /*items=*/700, /*per_user=*/50, /*seed=*/5);
  auto first = testing_util::RunBuildBinary(BuildArgs(log, root, 1), dir.path());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const std::string published = nlohmann::json::parse(first.out)["version"];

  struct Point {
    const char* name;
    std::string glob;         // the rename the build is held at
    bool leaves_temp_dir;     // a <version>.tmp is left behind
    bool leaves_new_version;  // the new version is visible (but not CURRENT)
  };
  // The last point's leftover is left for the clean run at the end to remove.
  const std::vector<Point> points = {
      {"published, CURRENT not yet switched", root + "/CURRENT.tmp", false, true},
      {"written, not yet published", root + "/*Z-*.tmp", true, false},
      {"mid-write: data written, MANIFEST.json not yet", root + "/*.tmp/MANIFEST.json.tmp", true,
       false},
      {"mid-write: the version's RocksDB store being created", root + "/*.tmp/db/*", true, false},
  };
  int seed = 200;
  for (const Point& p : points) {
    // Each point starts from the one published version.
    for (const auto& e : std::filesystem::directory_iterator(root)) {
      const std::string name = e.path().filename().string();
      if (e.is_directory() && name != published && name != "pins") {
        std::filesystem::remove_all(e.path());
      }
    }
    SCOPED_TRACE(p.name);
    const std::string marker = dir.path() + "/held";
    std::filesystem::remove(marker);
    const char* asan = std::getenv("ASAN_OPTIONS");
    const std::string asan_options =  // the preloaded library comes before ASan's runtime
        absl::StrCat(asan ? asan : "", asan ? ":" : "", "verify_asan_link_order=0");
    ASSERT_EQ(setenv("LD_PRELOAD", GRAPHSIEVE_HOLD_RENAME_PRELOAD, 1), 0);
    ASSERT_EQ(setenv("GRAPHSIEVE_HOLD_RENAME", p.glob.c_str(), 1), 0);
    ASSERT_EQ(setenv("GRAPHSIEVE_HOLD_MARKER", marker.c_str(), 1), 0);
    ASSERT_EQ(setenv("ASAN_OPTIONS", asan_options.c_str(), 1), 0);
    const pid_t pid = testing_util::SpawnBuild(BuildArgs(log, root, seed++), dir.path());
    unsetenv("LD_PRELOAD");
    unsetenv("GRAPHSIEVE_HOLD_RENAME");
    unsetenv("GRAPHSIEVE_HOLD_MARKER");
    if (asan != nullptr) {
      setenv("ASAN_OPTIONS", std::string(asan_options, 0, asan_options.rfind(":")).c_str(), 1);
    } else {
      unsetenv("ASAN_OPTIONS");
    }
    ASSERT_GT(pid, 0);
    // Wait until the build is held (bounded: 10 minutes, a slow sanitizer
    // build), or until it exits: then it never reached the point.
    bool is_held = false, exited = false;
    for (int k = 0; k < 6000 && !is_held && !exited; ++k) {
      is_held = std::filesystem::exists(marker);
      int status = 0;
      if (!is_held) exited = waitpid(pid, &status, WNOHANG) == pid;
      if (!is_held && !exited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!is_held) ::kill(pid, SIGKILL);
    ASSERT_TRUE(is_held) << "the build never reached the rename of " << p.glob
                         << (exited ? " (it exited)" : " (still running after 10 minutes)") << ": "
                         << testing_util::Wait(pid, dir.path()).err;
    std::ifstream in(marker);
    std::stringstream held_at;
    held_at << in.rdbuf();
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    const testing_util::RunResult r = testing_util::Wait(pid, dir.path());
    ASSERT_EQ(r.signal, SIGKILL) << "held at " << held_at.str();

    const std::vector<std::string> temps = TempVersions(root);
    if (p.leaves_temp_dir) {
      EXPECT_EQ(temps.size(), 1u) << "killed at " << held_at.str();
    } else {
      EXPECT_TRUE(temps.empty()) << "killed at " << held_at.str();
    }
    auto store = SnapshotStore::Create({root, false});
    ASSERT_TRUE(store.ok());
    auto versions = (*store)->ListVersions();
    ASSERT_TRUE(versions.ok());
    EXPECT_EQ(versions->size(), p.leaves_new_version ? 2u : 1u) << "killed at " << held_at.str();
    ExpectOnlyCompleteVersions(root, published, held_at.str());
  }
  // A clean run afterwards publishes and removes every leftover temporary.
  auto last = testing_util::RunBuildBinary(BuildArgs(log, root, 999), dir.path());
  ASSERT_EQ(last.exit_code, 0) << last.err;
  EXPECT_TRUE(TempVersions(root).empty());
  ExpectOnlyCompleteVersions(root, nlohmann::json::parse(last.out)["version"], "clean run");
}
#endif  // GRAPHSIEVE_HOLD_RENAME_PRELOAD

TEST(CrashSafetyTest, KilledBuildsNeverExposeAHalfSnapshot) {
  ScopedTempDir dir;
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
    auto reader = VersionOpener().OpenStored(root, *current, SnapshotReaderOptions());
    ASSERT_TRUE(reader.ok()) << "iteration " << it << ": CURRENT=" << *current << ": "
                             << reader.status();
    EXPECT_GT((*reader)->manifest().pairs, 0u);
    auto versions = (*store)->ListVersions();
    ASSERT_TRUE(versions.ok());
    for (const std::string& v : *versions) {
      SnapshotReaderOptions quick;
      quick.warm = false;
      auto any = VersionOpener().OpenStored(root, v, quick);
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
