// graphsieve-build end to end: the real binary and the real pipeline on a
// small generated log. Round trip (reader rate == in-memory pipeline rate for
// every pair; export CSV == pipeline), validation gates, bad flags.
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/model/node_default_fit.h"
#include "core/offline/build_job.h"
#include "core/offline/export_csv.h"
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
using testing_util::RunBuildBinary;

// Looks up every pair of `pairs` in `reader`, in pair order.
absl::Status LookupEveryPair(const SnapshotReader& reader, const PairTable& pairs, bool* found,
                             std::vector<float>* rates) {
  const size_t n = pairs.num_pairs();
  std::vector<uint64_t> users(n), items(n);
  for (size_t i = 0; i < n; ++i) {
    users[i] = pairs.user_ids[pairs.pair_user[i]];
    items[i] = pairs.item_ids[pairs.pair_item[i]];
  }
  rates->assign(n, 0.0f);
  return reader.LookupPairs(users, items, absl::MakeSpan(found, n), absl::MakeSpan(*rates));
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class BuilderBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    log_ = dir_.path() + "/log.csv";
    testing_util::WriteSmallLog(log_, /*users=*/120, /*items=*/200, /*per_user=*/25, /*seed=*/3);
    root_ = dir_.path() + "/root";
  }
  std::vector<std::string> Base() {
    return {"--input=" + log_, "--label-col=clicked", "--snapshot-root=" + root_, "--quiet",
            "--sketch_dim=8"};
  }
  testing_util::RunResult Run(std::vector<std::string> extra) {
    std::vector<std::string> args = Base();
    args.insert(args.end(), extra.begin(), extra.end());
    return RunBuildBinary(args, dir_.path());
  }
  // log_ as the builder reads it (label column "clicked").
  absl::Status ReadInMemory(ImpressionLog* log) const {
    LogReaderOptions ro;
    ro.label.column = "clicked";
    return ReadImpressionLog(log_, ro, log);
  }
  ScopedTempDir dir_;
  std::string log_, root_;
};

TEST_F(BuilderBinaryTest, PublishesSnapshotWhoseRatesEqualTheInMemoryPipeline) {
  const std::string csv = dir_.path() + "/export.csv";
  auto r = Run({"--json", "--export=" + csv, "--alpha=0.25", "--floor=0.02", "--seed=9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json summary = nlohmann::json::parse(r.out);
  ASSERT_TRUE(summary["ok"].get<bool>());
  const std::string version = summary["version"];

  // The same computation in memory.
  ImpressionLog log;
  ASSERT_TRUE(ReadInMemory(&log).ok());
  auto pairs = BuildPairTable(log, 2);
  ASSERT_TRUE(pairs.ok());
  PipelineOptions po;
  po.kappa = 1.0;  // the builder's --kappa default (PipelineOptions' own default is 0.1)
  po.alpha = 0.25;
  po.floor = 0.02;
  po.seed = 9;
  po.sketch_dim = 8;
  auto result = RunPipeline(*pairs, po);
  ASSERT_TRUE(result.ok()) << result.status();

  auto store = SnapshotStore::Create({root_, false});
  ASSERT_TRUE(store.ok());
  EXPECT_EQ(*(*store)->ReadCurrent(), version);
  auto reader = VersionOpener().OpenStored(root_, version, {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  const size_t n = pairs->num_pairs();
  EXPECT_EQ((*reader)->manifest().pairs, n);
  EXPECT_EQ((*reader)->manifest().instances, log.size());
  EXPECT_NEAR((*reader)->manifest().achieved_negative_mean_rate, 0.25, 1e-6);
  std::unique_ptr<bool[]> found(new bool[n]);
  std::vector<float> rates(n);
  ASSERT_TRUE(LookupEveryPair(**reader, *pairs, found.get(), &rates).ok());
  auto user_of = [&](size_t pair) { return pairs->user_ids[pairs->pair_user[pair]]; };
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(found[i]) << i;
    ASSERT_EQ(rates[i], result->rate[i]) << "pair " << i;
  }
  // Node records and the unseen model match too.
  std::vector<float> sketch((*reader)->model().sketch_dim);
  NodeRecord rec;
  ASSERT_TRUE((*reader)->LookupUser(user_of(0), &rec, absl::MakeSpan(sketch)));
  EXPECT_EQ(rec.degree, result->nodes.records[pairs->pair_user[0]].degree);
  EXPECT_DOUBLE_EQ((*reader)->model().rho, result->model.rho);
  // Snapshot format 3: the node's positives and impressions, counted here
  // from the log itself, and the positive-rate DEFAULT fit as
  // AttachNodeDefault computes it (core/model/node_default_fit.h).
  uint32_t impressions = 0, positives = 0;
  for (size_t i = 0; i < log.size(); ++i) {
    impressions += log.user_ids[i] == user_of(0);
    positives += log.user_ids[i] == user_of(0) && log.labels[i] == 1;
  }
  EXPECT_EQ(rec.impressions, impressions);
  EXPECT_EQ(rec.positives, positives);
  ASSERT_GT(impressions, 0u);
  ASSERT_TRUE(AttachNodeDefault(*pairs, NodeDefaultOptions(), &*result).ok());
  EXPECT_GT((*reader)->model().default_item_rho, 0.0);
  EXPECT_DOUBLE_EQ((*reader)->model().default_item_rho, result->model.default_item_rho);
  EXPECT_DOUBLE_EQ((*reader)->model().default_user_mean, result->model.default_user_mean);
  EXPECT_DOUBLE_EQ((*reader)->model().default_prior, result->model.default_prior);

  // Export: exact header, one row per pair, original id text, same rates.
  auto text = snapshot::ReadFileToString(csv);
  ASSERT_TRUE(text.ok());
  std::vector<std::string> lines = absl::StrSplit(*text, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), n + 1);
  EXPECT_EQ(lines[0], kExportHeader);
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> f = absl::StrSplit(lines[i + 1], ',');
    ASSERT_EQ(f.size(), 8u) << lines[i + 1];
    EXPECT_EQ(f[0], log.user_names.at(user_of(i)));
    EXPECT_EQ(f[0][0], 'u');
    float rate = 0;
    ASSERT_TRUE(absl::SimpleAtof(f[7], &rate));
    ASSERT_EQ(rate, result->rate[i]) << lines[i + 1];
    EXPECT_EQ(f[2], pairs->label[i] ? "1" : "0");
  }
}

// --score-power β reaches the snapshot: the rates are the in-memory pipeline's
// with the same β, and the stored unseen model carries β for the server.
TEST_F(BuilderBinaryTest, ScorePowerIsAppliedAndStored) {
  auto r = Run({"--json", "--score-power=1.5", "--seed=9"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string version = nlohmann::json::parse(r.out)["version"];
  ImpressionLog log;
  ASSERT_TRUE(ReadInMemory(&log).ok());
  auto pairs = BuildPairTable(log, 2);
  ASSERT_TRUE(pairs.ok());
  PipelineOptions po;
  po.kappa = 1.0;  // the builder's --kappa default (PipelineOptions' own default is 0.1)
  po.seed = 9;
  po.sketch_dim = 8;
  po.score_power = 1.5;
  auto result = RunPipeline(*pairs, po);
  ASSERT_TRUE(result.ok()) << result.status();
  po.score_power = 1.0;
  auto plain = RunPipeline(*pairs, po);
  ASSERT_TRUE(plain.ok()) << plain.status();
  auto reader = VersionOpener().OpenStored(root_, version, {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_DOUBLE_EQ((*reader)->model().score_power, 1.5);
  EXPECT_DOUBLE_EQ((*reader)->model().score_mean, result->model.score_mean);
  const size_t n = pairs->num_pairs();
  std::unique_ptr<bool[]> found(new bool[n]);
  std::vector<float> rates(n);
  ASSERT_TRUE(LookupEveryPair(**reader, *pairs, found.get(), &rates).ok());
  size_t differ = 0;
  for (size_t i = 0; i < n; ++i) {
    ASSERT_TRUE(found[i]) << i;
    ASSERT_EQ(rates[i], result->rate[i]) << "pair " << i;
    differ += rates[i] != plain->rate[i];
  }
  EXPECT_GT(differ, n / 2);  // β changed the rates
}

TEST_F(BuilderBinaryTest, RetentionAcrossRuns) {
  for (int k = 0; k < 3; ++k) {
    auto r = Run({"--keep=2", absl::StrCat("--seed=", k)});
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto store = SnapshotStore::Create({root_, false});
  auto versions = (*store)->ListVersions();
  ASSERT_EQ(versions->size(), 2u);
  EXPECT_EQ(*(*store)->ReadCurrent(), versions->back());
  // Pin the older one; two more runs with --keep=1 keep CURRENT and the pin.
  ASSERT_TRUE((*store)->Pin(versions->front(), "test").ok());
  for (int k = 3; k < 5; ++k) ASSERT_EQ(Run({"--keep=1", absl::StrCat("--seed=", k)}).exit_code, 0);
  auto after = (*store)->ListVersions();
  ASSERT_EQ(after->size(), 2u);
  EXPECT_EQ(after->front(), versions->front());
  EXPECT_EQ(after->back(), *(*store)->ReadCurrent());
}

// The builder says when --threads exceeds the CPUs it may run on (mpirun's
// default core binding); the mask is set on this process, the child inherits
// it, so the test does not depend on the machine's CPU count.
TEST_F(BuilderBinaryTest, WarnsWhenThreadsExceedItsCpuAffinity) {
  cpu_set_t saved;
  ASSERT_EQ(::sched_getaffinity(0, sizeof(saved), &saved), 0);
  int first = 0;
  while (first < CPU_SETSIZE && !CPU_ISSET(first, &saved)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(::sched_setaffinity(0, sizeof(one), &one), 0);
  const testing_util::RunResult two = Run({"--threads=2"});
  const testing_util::RunResult single = Run({"--threads=1"});
  ASSERT_EQ(::sched_setaffinity(0, sizeof(saved), &saved), 0);
  ASSERT_EQ(two.exit_code, 0) << two.err;  // a warning, not an error
  EXPECT_NE(two.err.find("--threads=2 but this process may run on 1 CPU only"), std::string::npos)
      << two.err;
  EXPECT_NE(two.err.find("--bind-to none"), std::string::npos) << two.err;
  ASSERT_EQ(single.exit_code, 0) << single.err;
  EXPECT_EQ(single.err.find("warning"), std::string::npos) << single.err;
}

struct BadFlagCase {
  std::vector<std::string> args;
  int exit_code;
  std::string message;  // must appear in stderr
};

TEST_F(BuilderBinaryTest, BadFlagsFailClearlyAndPublishNothing) {
  const std::vector<BadFlagCase> cases = {
      {{"--alpha=0"}, 2, "--alpha"},
      {{"--alpha=-0.5"}, 2, "--alpha"},
      {{"--alpha=1e-300"}, 2, absl::StrCat("--alpha must be in [", kMinAlpha, ", 1], got 1e-300")},
      // A delta build checks the same flags, as part of its own.
      {{"--alpha=1e-300", "--delta_of=CURRENT"},
       2,
       absl::StrCat("--alpha must be in [", kMinAlpha, ", 1], got 1e-300")},
      {{"--alpha=0.1", "--floor=0.1", "--rate-rule=floor"}, 2, "--floor"},
      {{"--floor=0.5", "--rate-rule=floor"}, 2, "--floor"},
      {{"--floor=-0.01", "--rate-rule=floor"}, 2, "--floor"},
      {{"--kappa=0"}, 2, "--kappa"},
      {{"--gamma=1"}, 2, "--gamma"},
      {{"--score-power=0"}, 2, "score_power"},
      {{"--keep=0"}, 2, "--keep"},
      {{"--method=best"}, 2, "--method"},
      {{"--resistance=magic"}, 2, "--resistance"},
      {{"--table-format=lsm"}, 2, "--table_format"},
      {{"--id-mode=hex"}, 2, "--id-mode"},
      {{"--label-rule=watch_ratio >>> 3"}, 2, "--label-rule"},
      {{"--sketch_dim=0"}, 2, "--sketch_dim must be in [1, 4096], got 0"},
      {{"--sketch_dim=5000"}, 2, "--sketch_dim must be in [1, 4096], got 5000"},
      {{"--pilot-col=clicked"}, 2, "--label-col=clicked and --pilot-col=clicked"},
      {{"--user-col=clicked"}, 2, "--user-col=clicked and --label-col=clicked"},
      {{"--user-col=customer"}, 1, "customer"},
      {{"--input=" + dir_.path() + "/missing.csv"}, 1, "missing.csv"},
  };
  for (const BadFlagCase& c : cases) {
    auto r = Run(c.args);
    EXPECT_EQ(r.exit_code, c.exit_code) << c.args[0] << "\n" << r.err;
    EXPECT_TRUE(absl::StrContains(r.err, c.message)) << c.args[0] << ": " << r.err;
    EXPECT_FALSE(std::filesystem::exists(root_ + "/CURRENT")) << c.args[0];
  }
  // No --snapshot_root and no --dry_run.
  auto r = RunBuildBinary({"--input=" + log_, "--label_col=clicked"}, dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_TRUE(absl::StrContains(r.err, "--snapshot_root")) << r.err;
  // --dry_run publishes nothing but succeeds.
  r = Run({"--dry-run"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(std::filesystem::exists(root_ + "/CURRENT"));
}

// Runs the builder as a user who may not write a directory of mode 0555:
// this process's user, or nobody (65534) when this process is root (root
// writes anywhere). Exit code 127 with nothing on stderr: it could not be run.
testing_util::RunResult RunUnprivileged(std::vector<std::string> args, const std::string& scratch) {
  args.insert(args.begin(), GRAPHSIEVE_BUILD_BINARY);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const std::string out = scratch + "/stdout", err = scratch + "/stderr";
  const bool root = ::geteuid() == 0;
  const pid_t pid = ::fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (o < 0 || e < 0 || ::dup2(o, 1) < 0 || ::dup2(e, 2) < 0) ::_exit(127);
    if (root && (::setgroups(0, nullptr) != 0 || ::setgid(65534) != 0 || ::setuid(65534) != 0)) {
      ::_exit(127);
    }
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return testing_util::Wait(pid, scratch);
}

// A --snapshot_root the build could not publish into fails at start-up,
// before the log is read (the input here does not exist, so an error about
// it would mean the log was read first), naming the flag and what to do.
TEST_F(BuilderBinaryTest, UnusableSnapshotRootFailsBeforeTheLogIsRead) {
  const std::string missing = "--input=" + dir_.path() + "/missing.csv";
  const std::string file = dir_.path() + "/rates.csv";
  std::ofstream(file) << "not a directory\n";
  auto r = RunBuildBinary({missing, "--snapshot_root=" + file, "--quiet"}, dir_.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--snapshot_root: " + file +
                                           " is a regular file, not a directory; name a "
                                           "directory"))
      << r.err;
  r = RunBuildBinary({missing, "--snapshot_root=" + file + "/sub/root", "--quiet"}, dir_.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--snapshot_root: cannot create " + file +
                                           "/sub/root: " + file + " is a regular file"))
      << r.err;
  r = RunBuildBinary({missing, "--snapshot_root=" + file, "--delta_of=CURRENT", "--quiet"},
                     dir_.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--snapshot_root: " + file + " is a regular file")) << r.err;
  // --dry_run publishes nothing: the root is not checked.
  r = RunBuildBinary({"--input=" + log_, "--label_col=clicked", "--snapshot_root=" + file,
                      "--dry_run", "--quiet", "--sketch_dim=8"},
                     dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;

  // An existing root this user may not write (its pins/ already made), in a
  // directory every user can reach: the test's own temporary directory may
  // sit under one of mode 0700 (scripts/test.sh's), which the other user
  // could not even enter.
  char reachable[] = "/tmp/graphsieve-unwritable-XXXXXX";
  ASSERT_NE(::mkdtemp(reachable), nullptr);
  ASSERT_EQ(::chmod(reachable, 0755), 0);
  const std::string locked = std::string(reachable) + "/root";
  std::filesystem::create_directories(locked + "/pins");
  ASSERT_EQ(::chmod(locked.c_str(), 0555), 0);
  r = RunUnprivileged({missing, "--snapshot_root=" + locked, "--quiet"}, dir_.path());
  ASSERT_EQ(::chmod(locked.c_str(), 0755), 0);
  const bool published = std::filesystem::exists(locked + "/CURRENT");
  std::filesystem::remove_all(reachable);
  if (r.exit_code == 127 && r.err.empty()) GTEST_SKIP() << "cannot run as another user here";
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--snapshot_root: " + locked +
                                           " is not writable by this process (Permission "
                                           "denied); pass a directory this process may write"))
      << r.err;
  EXPECT_FALSE(published);
}

// --export is checked before the log is read: it may not be the input, nor a
// directory; a symbolic link's target is written and the link stays; a
// failed build leaves no temporary beside it.
TEST_F(BuilderBinaryTest, ExportIsCheckedUpFrontAndWrittenThroughALink) {
  const std::string before = ReadAll(log_);
  auto r = Run({"--export=" + dir_.path() + "/./log.csv"});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "is the same file as --input")) << r.err;
  EXPECT_EQ(ReadAll(log_), before) << "the input log is untouched";
  EXPECT_FALSE(std::filesystem::exists(root_ + "/CURRENT")) << "refused before building";

  r = Run({"--export=" + dir_.path()});
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--export '" + dir_.path() + "' is a directory")) << r.err;
  EXPECT_FALSE(std::filesystem::exists(dir_.path() + ".tmp"));

  const std::string target = dir_.path() + "/rates.csv", link = dir_.path() + "/link.csv";
  std::ofstream(target) << "old\n";
  std::filesystem::create_symlink("rates.csv", link);
  r = Run({"--export=" + link});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_symlink(link));
  EXPECT_TRUE(absl::StartsWith(ReadAll(target), kExportHeader)) << "the target";
}

// Rows skipped under --max_bad_rows are counted in the human summary, with
// the first ones' file, line and reason (not only in --json).
TEST_F(BuilderBinaryTest, SummarySaysWhichBadRowsWereSkipped) {
  std::ifstream in(log_);
  const int lines = static_cast<int>(
      std::count(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>(), '\n'));
  std::ofstream(log_, std::ios::app) << "u1,2\nu1,3,maybe\n";
  auto r = RunBuildBinary(
      {"--input=" + log_, "--label-col=clicked", "--dry-run", "--sketch_dim=8", "--max_bad_rows=5"},
      dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "skipped 2 malformed rows (--max_bad_rows=5); the first:"))
      << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, absl::StrCat(log_, ":", lines + 1, ": expected 3 fields")))
      << r.err;
  EXPECT_TRUE(absl::StrContains(
      r.err, absl::StrCat(log_, ":", lines + 2, ": column 'clicked': label is 'maybe'")))
      << r.err;
  r = RunBuildBinary({"--input=" + log_, "--label-col=clicked", "--dry-run", "--sketch_dim=8",
                      "--max_bad_rows=5", "--quiet", "--json"},
                     dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["bad_rows_skipped"], 2) << r.out;
  EXPECT_EQ(j["bad_row_examples"].size(), 2u) << r.out;
}

// A pilot-based --method without --pilot-col fits the built-in pilot
// (docs/METHOD.md "The built-in pilot"); when the log's header has a column
// that looks like a pilot score, a warning names the flag that would use it.
TEST_F(BuilderBinaryTest, PilotMethodWithoutPilotColumnFitsTheBuiltInPilot) {
  const std::string with = dir_.path() + "/with_pilot.csv";
  std::ofstream(with) << "user_id,item_id,clicked,pilot_score\nu1,1,0,0.5\nu1,2,1,0.7\n"
                      << "u2,1,1,0.6\nu2,2,0,0.2\n";
  auto r = RunBuildBinary({"--input=" + with, "--label-col=clicked", "--method=opt", "--dry-run",
                           "--json", "--sketch_dim=8"},
                          dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.contains("pilot")) << r.out;
  ASSERT_EQ(j["warnings"].size(), 1u) << r.out;
  EXPECT_TRUE(absl::StrContains(j["warnings"][0].get<std::string>(),
                                "to rate from the log's own pilot score instead pass "
                                "--pilot_col=pilot_score (a column of " +
                                    with + ")"))
      << r.out;
  r = RunBuildBinary({"--input=" + log_, "--label-col=clicked", "--method=max", "--dry-run",
                      "--json", "--sketch_dim=8"},
                     dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j.contains("pilot")) << r.out;
  EXPECT_TRUE(j["warnings"].empty()) << r.out;
  // A user's pilot column wins: no built-in pilot.
  r = RunBuildBinary({"--input=" + with, "--label-col=clicked", "--method=opt",
                      "--pilot-col=pilot_score", "--dry-run", "--json", "--sketch_dim=8"},
                     dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j.contains("pilot")) << r.out;
  // Its options are checked, naming the flag.
  r = RunBuildBinary({"--input=" + with, "--label-col=clicked", "--method=opt", "--pilot_folds=1",
                      "--dry-run", "--quiet"},
                     dir_.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(absl::StrContains(r.err, "--pilot_folds must be in [2, 64], got 1")) << r.err;
}

// --dataset=movielens names the columns of a file without a header; on a
// file with one, the error says so in terms of the flags (the reader's own
// hint speaks of its column_names option).
TEST_F(BuilderBinaryTest, HeaderUnderAHeaderlessPresetSaysWhatToPassInstead) {
  const std::string ml = dir_.path() + "/ratings.tsv";
  std::ofstream(ml) << "user_id\titem_id\trating\ttimestamp\n1\t2\t4\t100\n2\t2\t1\t100\n";
  auto r =
      RunBuildBinary({"--input=" + ml, "--dataset=movielens", "--dry-run", "--json"}, dir_.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  const std::string want =
      "(is line 1 a header? --dataset=movielens is for files without a header; for a file with "
      "one, drop --dataset and name the columns: --user-col=user_id --item-col=item_id "
      "--label-rule='rating >= 4'";
  EXPECT_TRUE(absl::StrContains(r.err, want)) << r.err;
  EXPECT_FALSE(absl::StrContains(r.err, "column_names")) << r.err;
  EXPECT_TRUE(
      absl::StrContains(nlohmann::json::parse(r.out)["error"]["message"].get<std::string>(), want))
      << r.out;
}

// Exit codes as --help documents them: a flag the builder does not have, or a
// value of the wrong type, is a usage error (2; with --json also the JSON
// error object, wherever --json stands); --help and --version exit 0.
TEST_F(BuilderBinaryTest, UnknownOrIllTypedFlagsExitTwoAndHelpExitsZero) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--bogus", "--json"},
                                             {"--json", "--bogus=3"},
                                             {"--json", "--alpha=abc"},
                                             {"--json", "--keep=many"},
                                             {"--json", "--dry_run=maybe"}}) {
    auto r = Run(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << " " << args[1] << ": " << r.err;
    const std::string flag = absl::StrContains(args[1], "json") ? args[0] : args[1];
    const std::string name = flag.substr(2, flag.find('=') - 2);
    EXPECT_TRUE(absl::StrContains(r.err, name)) << r.err;
    const nlohmann::json j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    ASSERT_TRUE(j.is_object()) << "stdout: " << r.out;
    EXPECT_FALSE(j["ok"].get<bool>());
    EXPECT_EQ(j["error"]["code"], "INVALID_ARGUMENT");
    EXPECT_TRUE(absl::StrContains(j["error"]["message"].get<std::string>(), name)) << r.out;
  }
  EXPECT_FALSE(std::filesystem::exists(root_));
  auto r = RunBuildBinary({"--help"}, dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StrContains(r.out, "--snapshot_root")) << r.out;
  EXPECT_TRUE(absl::StrContains(r.out, "2 bad flags")) << r.out;
  r = RunBuildBinary({"--version"}, dir_.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(absl::StartsWith(r.out, "graphsieve-build ")) << r.out;
}

// The floor rule's floor may be 0 (allowed: [0, --alpha)): pairs scoring 0
// then get rate 0 in the fit, clipped into (0, 1] by the pipeline.
TEST_F(BuilderBinaryTest, FloorZeroBuildsAndPublishes) {
  auto r = Run({"--json", "--rate-rule=floor", "--floor=0", "--alpha=0.2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json summary = nlohmann::json::parse(r.out);
  ASSERT_TRUE(summary["ok"].get<bool>()) << r.out;
  auto reader = VersionOpener().OpenStored(root_, summary["version"].get<std::string>(), {});
  ASSERT_TRUE(reader.ok()) << reader.status();
  EXPECT_EQ((*reader)->model().floor, 0.0);
  EXPECT_NEAR((*reader)->manifest().achieved_negative_mean_rate, 0.2, 1e-6);
}

TEST_F(BuilderBinaryTest, LogWithoutNegativesFailsAndPublishesNothing) {
  std::ofstream(log_) << "user_id,item_id,clicked\n1,2,1\n1,3,1\n2,2,1\n";
  auto r = Run({"--json"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_FALSE(r.err.empty());
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_FALSE(std::filesystem::exists(root_ + "/CURRENT"));
}

// --- CheckGates on hand-made results. ---
struct GateFixture {
  PairTable pairs;
  PipelineResult result;
  GateFixture() {
    pairs.user_ids = {1, 2};
    pairs.item_ids = {10, 20};
    pairs.pair_user = {0, 0, 1, 1};
    pairs.pair_item = {0, 1, 0, 1};
    pairs.label = {0, 0, 0, 1};
    pairs.instances = {1, 3, 1, 1};
    pairs.negatives = {1, 3, 1, 0};
    pairs.total_instances = 6;
    pairs.total_negatives = 5;
    // (1*0.1 + 3*0.2 + 1*0.3) / 5 = 0.2
    result.rate = {0.1f, 0.2f, 0.3f, 1.0f};
    SolveSummary s;
    s.converged = true;
    result.solves = {s};
  }
};

// Every numeric flag's bad values (NaN, infinities, out of range, not a
// number) stop the build before it reads the log, naming the flag, with the
// usage exit code 2 (the build's validation and the flag parser alike).
TEST(BuildFlagsTest, EveryNumericFlagRejectsItsBadValues) {
  ScopedTempDir dir;
  const std::string log = dir.path() + "/log.csv";
  testing_util::WriteSmallLog(log, /*users=*/20, /*items=*/30, /*per_user=*/5, /*seed=*/1);
  const std::vector<std::pair<std::string, std::vector<std::string>>> cases = {
      {"max_bad_rows", {"-1", "nan", "abc"}},
      {"alpha", {"nan", "inf", "-inf", "0", "1.5", "abc"}},
      {"floor", {"nan", "inf", "-1", "2"}},
      {"product_floor", {"nan", "inf", "-1", "2"}},
      {"kappa", {"nan", "inf", "0", "-1"}},
      {"pilot_kappa", {"nan"}},
      {"product_kappa", {"nan", "inf", "0", "-1"}},
      {"score_power", {"nan", "inf", "0", "5"}},
      {"exposure_power", {"nan", "inf", "-0.5", "3"}},
      {"gamma", {"nan", "inf", "-1", "1"}},
      {"propagation_tolerance", {"nan", "inf", "0", "-1"}},
      {"propagation_max_iterations", {"-1", "nan"}},
      {"sketch_dim", {"0", "-1", "4097", "nan"}},
      {"solver_tolerance", {"nan", "inf", "0", "-1"}},
      {"solver_max_iterations", {"0", "-1", "nan"}},
      {"seed", {"-1", "nan", "abc"}},
      {"threads", {"0", "-1", "257", "nan"}},
      {"partitions", {"-1", "4097", "nan"}},  // 0 is the default: 1, or a delta's base's
      {"lock_timeout_seconds", {"nan", "inf", "-1"}},
  };
  for (const auto& [flag, values] : cases) {
    for (const std::string& value : values) {
      const std::string arg = absl::StrCat("--", flag, "=", value);
      auto r = RunBuildBinary({"--input=" + log, "--label_col=clicked",
                               "--snapshot_root=" + dir.path() + "/root", "--quiet", arg},
                              dir.path());
      EXPECT_EQ(r.exit_code, 2) << arg << ": " << r.err;
      EXPECT_TRUE(absl::StrContains(r.err, flag)) << arg << ": " << r.err;
    }
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() + "/root/CURRENT"));
}

TEST(CheckGatesTest, PassesOnExactMean) {
  GateFixture g;
  EXPECT_TRUE(CheckGates(g.pairs, g.result, 0.2, 1e-6).ok());
}

TEST(CheckGatesTest, EachGateNamesItselfAndTheAmount) {
  {
    GateFixture g;
    absl::Status s = CheckGates(g.pairs, g.result, 0.21, 1e-6);
    EXPECT_EQ(s.code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(absl::StartsWith(s.message(), "gate negative-mean failed")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "off by 0.01")) << s;
  }
  {
    GateFixture g;
    g.result.rate[1] = std::numeric_limits<float>::quiet_NaN();
    absl::Status s = CheckGates(g.pairs, g.result, 0.2, 1e-6);
    EXPECT_TRUE(absl::StartsWith(s.message(), "gate rate-range failed")) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "item 20")) << s;
  }
  {
    GateFixture g;
    g.result.rate[0] = 0.0f;
    EXPECT_TRUE(absl::StartsWith(CheckGates(g.pairs, g.result, 0.2, 1e-6).message(),
                                 "gate rate-range failed"));
    g.result.rate[0] = 1.5f;
    EXPECT_TRUE(absl::StartsWith(CheckGates(g.pairs, g.result, 0.2, 1e-6).message(),
                                 "gate rate-range failed"));
  }
  {
    GateFixture g;
    g.result.solves[0].converged = false;
    g.result.solves[0].component = 3;
    absl::Status s = CheckGates(g.pairs, g.result, 0.2, 1e-6);
    EXPECT_TRUE(absl::StartsWith(s.message(), "gate solver-converged failed: component 3")) << s;
  }
  {
    GateFixture g;
    g.pairs = PairTable();
    g.result.rate.clear();
    EXPECT_TRUE(absl::StartsWith(CheckGates(g.pairs, g.result, 0.2, 1e-6).message(),
                                 "gate non-empty failed"));
  }
}

}  // namespace
}  // namespace graphsieve
