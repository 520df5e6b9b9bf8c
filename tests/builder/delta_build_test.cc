// Delta versions (core/offline/delta_build.h, core/snapshot/layered_snapshot_reader.h):
// a delta over a base serves the new nodes and pairs the base answered with
// DEFAULT; its node records against a full rebuild; the refusals (base gone,
// another α or rule); a corrupt delta is refused at load; retention keeps a
// delta's base; a kill -9 during a delta's publish leaves CURRENT valid; a
// dry run publishes nothing and --export is refused.
#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/maec/pipeline_options.h"
#include "core/model/unseen.h"
#include "core/offline/build_job.h"
#include "core/offline/delta_build.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/layered_snapshot_reader.h"
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

// Users 0..users-1 over items 0..items-1, `per_user` items each, 1 in 6 positive.
void WriteBaseLog(const std::string& path, int users, int items, int per_user, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::ofstream out(path);
  out << "user_id,item_id,label\n";
  for (int u = 0; u < users; ++u) {
    for (int k = 0; k < per_user; ++k) {
      out << u << "," << (u * 7 + k * 13 + rng() % 5) % items << "," << (rng() % 6 == 0) << "\n";
    }
  }
}

// The later log: `new_users` users (ids from 100000) each with `per_user`
// impressions of base items, two of them positive, and some base users'
// impressions again.
void WriteDeltaLog(const std::string& path, int new_users, int per_user, int items, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::ofstream out(path);
  out << "user_id,item_id,label\n";
  for (int u = 0; u < new_users; ++u) {
    for (int k = 0; k < per_user; ++k) {
      out << 100000 + u << "," << (u * 11 + k * 17) % items << "," << (k < 2) << "\n";
    }
  }
  for (int u = 0; u < 20; ++u) out << u << "," << rng() % items << ",0\n";
}

BuildOptions Options(const std::string& log, const std::string& root) {
  BuildOptions o;
  o.inputs = {log};
  o.snapshot_root = root;
  o.keep_versions = 5;
  o.pipeline.sketch_dim = 16;
  o.pipeline.seed = 7;
  o.pipeline.threads = 1;
  return o;
}

DeltaBuildOptions DeltaOptions(const std::string& log, const std::string& root) {
  DeltaBuildOptions d;
  d.build = Options(log, root);
  return d;
}

struct Fixture {
  ScopedTempDir dir;
  std::string base_log = dir.path() + "/base.csv", delta_log = dir.path() + "/delta.csv";
  std::string root = dir.path() + "/root";
  std::string base_version;
  Fixture() {
    WriteBaseLog(base_log, 300, 400, 25, 1);
    WriteDeltaLog(delta_log, 30, 12, 400, 2);
    auto r = RunBuild(Options(base_log, root), BuildObserver());
    EXPECT_TRUE(r.ok()) << r.status();
    if (r.ok()) base_version = r->version;
  }
};

std::shared_ptr<const SnapshotReader> OpenCurrent(const std::string& root) {
  auto store = SnapshotStore::Create({root, false});
  EXPECT_TRUE(store.ok());
  auto cur = (*store)->ReadCurrent();
  EXPECT_TRUE(cur.ok()) << cur.status();
  auto reader = VersionOpener().Open(root, *cur, SnapshotReaderOptions());
  EXPECT_TRUE(reader.ok()) << reader.status();
  return reader.ok() ? *reader : nullptr;
}

TEST(DeltaBuildTest, NewUsersAndPairsServedOverTheBase) {
  Fixture f;
  auto base = VersionOpener().Open(f.root, f.base_version, SnapshotReaderOptions());
  ASSERT_TRUE(base.ok()) << base.status();
  NodeView view;
  ASSERT_FALSE((*base)->FindNode(false, 100000, &view));  // unknown to the base: DEFAULT

  auto delta = RunDeltaBuild(DeltaOptions(f.delta_log, f.root), BuildObserver());
  ASSERT_TRUE(delta.ok()) << delta.status();
  EXPECT_TRUE(delta->published);
  EXPECT_EQ(delta->base_version, f.base_version);
  EXPECT_EQ(delta->new_users, 30u);
  EXPECT_EQ(delta->new_positive_edges, 60u);
  EXPECT_GT(delta->carried_pairs, 0u);  // base pairs seen again as negatives stay the base's

  std::shared_ptr<const SnapshotReader> layered = OpenCurrent(f.root);
  ASSERT_NE(layered, nullptr);
  EXPECT_EQ(layered->manifest().version, delta->version);
  EXPECT_EQ(layered->manifest().base_version, f.base_version);
  EXPECT_FALSE(layered->manifest().covers_through.empty());
  // A new user's pair: stored by the delta (EXACT), absent from the base.
  const uint64_t u[2] = {100000, 0}, i[2] = {0, 0};
  bool found[2];
  float rate[2];
  ASSERT_TRUE(layered->LookupPairs(u, i, absl::MakeSpan(found, 2), absl::MakeSpan(rate, 2)).ok());
  EXPECT_TRUE(found[0]);
  EXPECT_GT(rate[0], 0.0f);
  EXPECT_LE(rate[0], 1.0f);
  bool base_found[2];
  float base_rate[2];
  ASSERT_TRUE(
      (*base)->LookupPairs(u, i, absl::MakeSpan(base_found, 2), absl::MakeSpan(base_rate, 2)).ok());
  EXPECT_FALSE(base_found[0]);
  EXPECT_EQ(found[1], base_found[1]);  // a base pair untouched by the delta: the base's answer
  if (found[1]) {
    EXPECT_EQ(rate[1], base_rate[1]);
  }
  // The new user is a known node (INFERRED for its unseen pairs).
  ASSERT_TRUE(layered->FindNode(false, 100000, &view));
  EXPECT_EQ(view.record.degree, 12u);
  EXPECT_EQ(view.record.impressions, 12u);
  EXPECT_EQ(view.record.positives, 2u);
}

// The layered version's scan: every pair of base ∪ delta exactly once, with
// the delta's rate where the delta stores the pair (the base has more pairs
// than one batch of the scan's delta lookups).
TEST(DeltaBuildTest, ForEachPairIsTheBaseOverriddenByTheDelta) {
  Fixture f;
  auto base = VersionOpener().OpenStored(f.root, f.base_version, SnapshotReaderOptions());
  ASSERT_TRUE(base.ok()) << base.status();
  std::map<std::pair<uint64_t, uint64_t>, float> expected;
  ASSERT_TRUE((*base)
                  ->ForEachPair([&](uint64_t u, uint64_t i, float r) {
                    expected[{u, i}] = r;
                  })
                  .ok());
  ASSERT_GT(expected.size(), 4096u);
  {
    // Every 97th base pair clicked in the new log: the delta stores it anew.
    std::ofstream out(f.delta_log, std::ios::app);
    size_t k = 0;
    for (const auto& [key, rate] : expected) {
      if (k++ % 97 == 0) out << key.first << "," << key.second << ",1\n";
    }
  }
  auto delta = RunDeltaBuild(DeltaOptions(f.delta_log, f.root), BuildObserver());
  ASSERT_TRUE(delta.ok()) << delta.status();
  auto own = VersionOpener().OpenStored(f.root, delta->version, SnapshotReaderOptions());
  ASSERT_TRUE(own.ok()) << own.status();
  size_t overridden = 0;
  ASSERT_TRUE((*own)
                  ->ForEachPair([&](uint64_t u, uint64_t i, float r) {
                    overridden += expected.count({u, i});
                    expected[{u, i}] = r;
                  })
                  .ok());
  ASSERT_GT(overridden, 40u);  // the pairs both layers store

  std::shared_ptr<const SnapshotReader> layered = OpenCurrent(f.root);
  ASSERT_NE(layered, nullptr);
  std::map<std::pair<uint64_t, uint64_t>, float> seen;
  size_t calls = 0;
  ASSERT_TRUE(layered
                  ->ForEachPair([&](uint64_t u, uint64_t i, float r) {
                    ++calls;
                    seen[{u, i}] = r;
                  })
                  .ok());
  EXPECT_EQ(calls, seen.size());  // no pair twice
  EXPECT_EQ(seen, expected);
}

// Spearman rank correlation.
double Spearman(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& x) {
    std::vector<size_t> idx(x.size());
    for (size_t k = 0; k < idx.size(); ++k) idx[k] = k;
    std::sort(idx.begin(), idx.end(), [&](size_t p, size_t q) { return x[p] < x[q]; });
    std::vector<double> r(x.size());
    for (size_t k = 0; k < idx.size(); ++k) r[idx[k]] = double(k);
    return r;
  };
  const std::vector<double> ra = ranks(a), rb = ranks(b);
  double d2 = 0;
  for (size_t k = 0; k < ra.size(); ++k) d2 += (ra[k] - rb[k]) * (ra[k] - rb[k]);
  const double n = double(ra.size());
  return 1.0 - 6.0 * d2 / (n * (n * n - 1.0));
}

// The new users' unseen-pair rates (ScoreUnseenPair on their records) from
// base + delta against a full rebuild on both logs. The delta's rows are an
// approximation (a harmonic extension, the base's sketch coordinates), so
// the check is the ranking and a median relative error, not equality.
TEST(DeltaBuildTest, NewNodeRecordsAgreeWithAFullRebuild) {
  Fixture f;
  auto delta = RunDeltaBuild(DeltaOptions(f.delta_log, f.root), BuildObserver());
  ASSERT_TRUE(delta.ok()) << delta.status();
  std::shared_ptr<const SnapshotReader> layered = OpenCurrent(f.root);
  ASSERT_NE(layered, nullptr);
  BuildOptions full = Options(f.base_log, f.dir.path() + "/full");
  full.inputs.push_back(f.delta_log);
  auto rebuilt = RunBuild(full, BuildObserver());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.status();
  auto ref =
      VersionOpener().OpenStored(full.snapshot_root, rebuilt->version, SnapshotReaderOptions());
  ASSERT_TRUE(ref.ok()) << ref.status();

  std::vector<double> mine, theirs, rel;
  for (uint64_t user = 100000; user < 100030; ++user) {
    for (uint64_t item = 1; item < 400; item += 7) {  // mostly pairs neither stores
      NodeView du, di, ru, ri;
      ASSERT_TRUE(layered->FindNode(false, user, &du));
      ASSERT_TRUE(layered->FindNode(true, item, &di));
      ASSERT_TRUE((*ref)->FindNode(false, user, &ru));
      ASSERT_TRUE((*ref)->FindNode(true, item, &ri));
      const double a = ScoreUnseenPair(du, di, layered->model());
      const double b = ScoreUnseenPair(ru, ri, (*ref)->model());
      mine.push_back(a), theirs.push_back(b), rel.push_back(std::abs(a - b) / b);
    }
  }
  std::nth_element(rel.begin(), rel.begin() + rel.size() / 2, rel.end());
  const double median = rel[rel.size() / 2], rho = Spearman(mine, theirs);
  std::printf(
      "new users' unseen rates vs a full rebuild: %zu pairs, median relative error %.4f, "
      "Spearman %.4f\n",
      mine.size(), median, rho);
  EXPECT_LT(median, 0.15);  // measured 0.057
  EXPECT_GT(rho, 0.8);      // measured 0.959
}

TEST(DeltaBuildTest, RefusesAnotherAlphaOrRuleNamingTheBaseAndField) {
  Fixture f;
  DeltaBuildOptions d = DeltaOptions(f.delta_log, f.root);
  d.build.pipeline.alpha = 0.3;
  auto r = RunDeltaBuild(d, BuildObserver());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find(f.base_version), std::string::npos) << r.status();
  EXPECT_NE(r.status().message().find("alpha=0.2"), std::string::npos) << r.status();

  d = DeltaOptions(f.delta_log, f.root);
  d.build.pipeline.rate_rule = RateRule::kFloor;
  r = RunDeltaBuild(d, BuildObserver());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("rate_rule"), std::string::npos) << r.status();
  auto store = SnapshotStore::Create({f.root, false});
  EXPECT_EQ(*(*store)->ReadCurrent(), f.base_version);  // nothing published
}

// A server takes the keep-decision seed from the version it serves, so a
// delta with another seed would change every base pair's keep decision: it is
// refused, naming both seeds and the one to pass, also when --seed was left at
// its default.
TEST(DeltaBuildTest, RefusesAnotherSeedNamingTheSeedToPass) {
  Fixture f;
  DeltaBuildOptions d = DeltaOptions(f.delta_log, f.root);
  d.build.pipeline.seed = 8;
  auto r = RunDeltaBuild(d, BuildObserver());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("--seed=7, this delta has --seed=8; pass --seed=7"),
            std::string::npos)
      << r.status();

  auto bin = testing_util::RunBuildBinary(  // no --seed: the flag's default, 42
      {"--input=" + f.delta_log, "--snapshot_root=" + f.root, "--delta_of=CURRENT",
       "--sketch_dim=16", "--threads=1", "--kappa=" + absl::StrCat(PipelineOptions().kappa),
       "--quiet"},
      f.dir.path());
  EXPECT_EQ(bin.exit_code, 1) << bin.err;
  EXPECT_NE(bin.err.find(f.base_version), std::string::npos) << bin.err;
  EXPECT_NE(bin.err.find("this delta has --seed=42; pass --seed=7"), std::string::npos) << bin.err;
  auto store = SnapshotStore::Create({f.root, false});
  EXPECT_EQ(*(*store)->ReadCurrent(), f.base_version);  // nothing published
}

// Another --sketch_dim is reported as the flag's values (16 and 32), not as
// the stored row widths (k + 2 with the control variate).
TEST(DeltaBuildTest, AnotherSketchDimIsReportedAsTheFlagValues) {
  Fixture f;
  auto bin = testing_util::RunBuildBinary(
      {"--input=" + f.delta_log, "--snapshot_root=" + f.root, "--delta_of=CURRENT",
       "--sketch_dim=32", "--seed=7", "--threads=1",
       "--kappa=" + absl::StrCat(PipelineOptions().kappa), "--quiet"},
      f.dir.path());
  EXPECT_EQ(bin.exit_code, 1) << bin.err;
  EXPECT_NE(bin.err.find("built with --sketch_dim=16, this delta has --sketch_dim=32; pass "
                         "--sketch_dim=16"),
            std::string::npos)
      << bin.err;
  EXPECT_EQ(bin.err.find("sketch_dim=18"), std::string::npos) << bin.err;
  EXPECT_EQ(bin.err.find("sketch_dim=34"), std::string::npos) << bin.err;
}

// Flags a delta does not apply itself (its rows come from the base's by
// Jacobi sweeps) are recorded in its manifest: another value than the base's
// is refused naming the flag, never silently recorded.
TEST(DeltaBuildTest, RefusesResistanceSolverAndPropagationFlagsThatDifferFromTheBase) {
  Fixture f;
  struct Case {
    void (*set)(PipelineOptions*);
    std::string expected;
  };
  const Case cases[] = {
      {[](PipelineOptions* p) { p->resistance = ResistanceMethod::kExact; },
       "built with --resistance=auto, this delta has --resistance=exact; pass --resistance=auto"},
      {[](PipelineOptions* p) { p->solver_tolerance = 1e-3; },
       "this delta has --solver_tolerance=0.001; pass --solver_tolerance=1e-06"},
      {[](PipelineOptions* p) { p->solver_max_iterations = 7; },
       "this delta has --solver_max_iterations=7"},
      {[](PipelineOptions* p) { p->propagation_tolerance = 0.5; },
       "this delta has --propagation_tolerance=0.5"},
      {[](PipelineOptions* p) { p->propagation_max_iterations = 3; },
       "this delta has --propagation_max_iterations=3"},
  };
  for (const Case& c : cases) {
    DeltaBuildOptions d = DeltaOptions(f.delta_log, f.root);
    c.set(&d.build.pipeline);
    auto r = RunDeltaBuild(d, BuildObserver());
    ASSERT_FALSE(r.ok()) << c.expected;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_NE(r.status().message().find(c.expected), std::string::npos) << r.status();
  }
  auto store = SnapshotStore::Create({f.root, false});
  EXPECT_EQ(*(*store)->ReadCurrent(), f.base_version);  // nothing published
}

// The full build's rate-range gate runs over the delta's pairs (its stage is
// in the report; the gate's refusals: CheckGatesTest in builder_test.cc).
TEST(DeltaBuildTest, TheRateRangeGateRunsOverTheDeltasPairs) {
  Fixture f;
  DeltaBuildOptions d = DeltaOptions(f.delta_log, f.root);
  d.build.dry_run = true;
  auto r = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<std::string> stages;
  for (const StageTiming& t : r->timings) stages.push_back(t.stage);
  EXPECT_EQ(stages, (std::vector<std::string>{"open", "read", "delta", "gates"}));
}

// --max_bad_rows counts the whole log: two files of 2 bad rows each exceed a
// limit of 3 (each file alone would not).
TEST(DeltaBuildTest, MaxBadRowsCountsEveryInputFile) {
  Fixture f;
  std::string a, b;
  std::ifstream in(f.delta_log);
  std::string header, line;
  std::getline(in, header);
  a = b = header + "\n";
  for (int i = 0; std::getline(in, line); ++i) (i % 2 ? a : b) += line + "\n";
  a += "1,2,maybe\n1,2,maybe\n";
  b += "3,4,maybe\n3,4,maybe\n";
  const std::string pa = f.dir.path() + "/a.csv", pb = f.dir.path() + "/b.csv";
  std::ofstream(pa) << a;
  std::ofstream(pb) << b;
  DeltaBuildOptions d = DeltaOptions(pa, f.root);
  d.build.inputs = {pa, pb};
  d.build.dry_run = true;
  d.build.reader.max_bad_rows = 3;
  auto r = RunDeltaBuild(d, BuildObserver());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--input " + pb + ": "), std::string::npos) << r.status();
  d.build.reader.max_bad_rows = 4;
  r = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->bad_rows_skipped, 4u);
}

// A pinned (or held) older delta keeps its base: a server holding it, or
// started with --pin-version, must be able to open it again.
TEST(DeltaBuildTest, RetentionKeepsTheBaseOfAPinnedDelta) {
  Fixture f;
  auto old_delta = RunDeltaBuild(DeltaOptions(f.delta_log, f.root), BuildObserver());
  ASSERT_TRUE(old_delta.ok()) << old_delta.status();
  auto store = SnapshotStore::Create({f.root, false});
  ASSERT_TRUE(store.ok()) << store.status();
  ASSERT_TRUE((*store)->Pin(old_delta->version, "test").ok());
  auto full = RunBuild(Options(f.delta_log, f.root), BuildObserver());  // a new base
  ASSERT_TRUE(full.ok()) << full.status();
  auto lock = (*store)->AcquirePublishLock(5);
  ASSERT_TRUE(lock.ok()) << lock.status();
  auto deleted = (*store)->ApplyRetention(**lock, 1);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  EXPECT_TRUE(deleted->empty()) << (*deleted)[0];
  EXPECT_TRUE(VersionOpener().Open(f.root, old_delta->version, SnapshotReaderOptions()).ok());
  ASSERT_TRUE((*store)->Unpin(old_delta->version).ok());
  deleted = (*store)->ApplyRetention(**lock, 1);
  ASSERT_TRUE(deleted.ok()) << deleted.status();
  // Unpinned: the delta goes first, then its base.
  EXPECT_EQ(*deleted, (std::vector<std::string>{old_delta->version, f.base_version}));
}

TEST(DeltaBuildTest, RefusesABaseThatIsGone) {
  Fixture f;
  DeltaBuildOptions d = DeltaOptions(f.delta_log, f.root);
  d.base = "20200101T000000Z-0000abcd";
  auto r = RunDeltaBuild(d, BuildObserver());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("20200101T000000Z-0000abcd"), std::string::npos)
      << r.status();
}

// RunBuild and RunDeltaBuild are the library's entries: they check the
// options (the pipeline stages inside only assert them in debug builds), so a
// library caller's bad alpha is an error naming the flag, and nothing is
// published.
TEST(DeltaBuildTest, EntriesRefuseBadOptionsNamingTheFlag) {
  Fixture f;
  const std::string want = absl::StrCat("--alpha must be in [", kMinAlpha, ", 1], got 1e-300");
  BuildOptions b = Options(f.base_log, f.root);
  b.pipeline.alpha = 1e-300;
  auto full = RunBuild(b, BuildObserver());
  ASSERT_FALSE(full.ok());
  EXPECT_EQ(full.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(full.status().message(), want);
  DeltaBuildOptions d = DeltaOptions(f.delta_log, f.root);
  d.build.pipeline.alpha = 1e-300;
  auto delta = RunDeltaBuild(d, BuildObserver());
  ASSERT_FALSE(delta.ok());
  EXPECT_EQ(delta.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(delta.status().message(), want);
  auto store = SnapshotStore::Create({f.root, false});
  ASSERT_TRUE(store.ok()) << store.status();
  auto current = (*store)->ReadCurrent();
  ASSERT_TRUE(current.ok()) << current.status();
  EXPECT_EQ(*current, f.base_version);  // neither published a version
  auto versions = (*store)->ListVersions();
  ASSERT_TRUE(versions.ok()) << versions.status();
  EXPECT_EQ(*versions, std::vector<std::string>{f.base_version});
}

TEST(DeltaBuildTest, CorruptDeltaIsRejectedAndTheBaseStillOpens) {
  Fixture f;
  auto delta = RunDeltaBuild(DeltaOptions(f.delta_log, f.root), BuildObserver());
  ASSERT_TRUE(delta.ok()) << delta.status();
  const std::string index = f.root + "/" + delta->version + "/index.gsi";
  {
    std::fstream io(index, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(200);
    io.put('\x5a');
    io.put('\xa5');
  }
  auto bad = VersionOpener().Open(f.root, delta->version, SnapshotReaderOptions());
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kDataLoss) << bad.status();
  auto base = VersionOpener().Open(f.root, f.base_version, SnapshotReaderOptions());
  EXPECT_TRUE(base.ok()) << base.status();
}

TEST(DeltaBuildTest, DeltasShareOneBaseAndRetentionKeepsIt) {
  Fixture f;
  DeltaBuildOptions d = DeltaOptions(f.delta_log, f.root);
  d.build.keep_versions = 1;  // would delete the base but for the delta
  auto first = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = RunDeltaBuild(d, BuildObserver());  // CURRENT is a delta: over its base
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ(second->base_version, f.base_version);
  auto store = SnapshotStore::Create({f.root, false});
  auto versions = (*store)->ListVersions();
  ASSERT_TRUE(versions.ok());
  EXPECT_EQ(*versions, (std::vector<std::string>{f.base_version, second->version}));

  // Two layered readers of one opener over one base: the base is opened once.
  VersionOpener opener;
  auto a = opener.Open(f.root, second->version, SnapshotReaderOptions());
  auto b = opener.Open(f.root, second->version, SnapshotReaderOptions());
  ASSERT_TRUE(a.ok() && b.ok());
  const auto* la = dynamic_cast<const LayeredSnapshotReader*>(a->get());
  const auto* lb = dynamic_cast<const LayeredSnapshotReader*>(b->get());
  ASSERT_NE(la, nullptr);
  ASSERT_NE(lb, nullptr);
  EXPECT_EQ(&la->base(), &lb->base());
}

#ifdef GRAPHSIEVE_HOLD_RENAME_PRELOAD
// The real binary held at a rename of the delta's publish (hold_rename_preload.cc)
// and killed there: CURRENT still names the base, which opens.
TEST(DeltaBuildTest, KillDuringDeltaPublishLeavesCurrentValid) {
  Fixture f;
  for (const std::string& glob : {f.root + "/CURRENT.tmp", f.root + "/*Z-*.tmp"}) {
    SCOPED_TRACE(glob);
    const std::string marker = f.dir.path() + "/held";
    std::filesystem::remove(marker);
    ASSERT_EQ(setenv("LD_PRELOAD", GRAPHSIEVE_HOLD_RENAME_PRELOAD, 1), 0);
    ASSERT_EQ(setenv("GRAPHSIEVE_HOLD_RENAME", glob.c_str(), 1), 0);
    ASSERT_EQ(setenv("GRAPHSIEVE_HOLD_MARKER", marker.c_str(), 1), 0);
    const pid_t pid = testing_util::SpawnBuild(
        // --kappa: the fixture's base has PipelineOptions' κ, stated in case the defaults part.
        {"--input=" + f.delta_log, "--snapshot_root=" + f.root, "--delta_of=CURRENT",
         "--sketch_dim=16", "--seed=7", "--threads=1",
         "--kappa=" + absl::StrCat(PipelineOptions().kappa), "--quiet"},
        f.dir.path());
    unsetenv("LD_PRELOAD");
    unsetenv("GRAPHSIEVE_HOLD_RENAME");
    unsetenv("GRAPHSIEVE_HOLD_MARKER");
    ASSERT_GT(pid, 0);
    bool held = false, exited = false;
    for (int k = 0; k < 6000 && !held && !exited; ++k) {  // bounded: 10 minutes
      held = std::filesystem::exists(marker);
      int status = 0;
      if (!held) exited = waitpid(pid, &status, WNOHANG) == pid;
      if (!held && !exited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    if (!held) ::kill(pid, SIGKILL);
    ASSERT_TRUE(held) << testing_util::Wait(pid, f.dir.path()).err;
    ASSERT_EQ(::kill(pid, SIGKILL), 0);
    EXPECT_EQ(testing_util::Wait(pid, f.dir.path()).signal, SIGKILL);
    auto store = SnapshotStore::Create({f.root, false});
    EXPECT_EQ(*(*store)->ReadCurrent(), f.base_version);
    EXPECT_TRUE(VersionOpener().Open(f.root, f.base_version, SnapshotReaderOptions()).ok());
  }
  // The next delta publishes and clears the leftovers.
  auto r = testing_util::RunBuildBinary(
      {"--input=" + f.delta_log, "--snapshot_root=" + f.root, "--delta_of=CURRENT",
       "--sketch_dim=16", "--seed=7", "--threads=1",
       "--kappa=" + absl::StrCat(PipelineOptions().kappa), "--quiet", "--json"},
      f.dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["base_version"], f.base_version);
}

// Retention removes a delta before its base: killed while removing the delta
// (its rename held, tests/builder/hold_rename_preload.cc), the base is still
// there, so no visible delta ever lacks its base.
TEST(DeltaBuildTest, KillDuringRetentionNeverLeavesADeltaWithoutItsBase) {
  Fixture f;
  auto delta = RunDeltaBuild(DeltaOptions(f.delta_log, f.root), BuildObserver());
  ASSERT_TRUE(delta.ok()) << delta.status();
  const std::string marker = f.dir.path() + "/held";
  ASSERT_EQ(setenv("LD_PRELOAD", GRAPHSIEVE_HOLD_RENAME_PRELOAD, 1), 0);
  ASSERT_EQ(setenv("GRAPHSIEVE_HOLD_RENAME", (f.root + "/" + delta->version).c_str(), 1), 0);
  ASSERT_EQ(setenv("GRAPHSIEVE_HOLD_MARKER", marker.c_str(), 1), 0);
  // A full build with --keep 1: its retention removes the delta and the old base.
  const pid_t pid =
      testing_util::SpawnBuild({"--input=" + f.delta_log, "--snapshot_root=" + f.root, "--keep=1",
                                "--sketch_dim=16", "--seed=7", "--threads=1", "--quiet"},
                               f.dir.path());
  unsetenv("LD_PRELOAD");
  unsetenv("GRAPHSIEVE_HOLD_RENAME");
  unsetenv("GRAPHSIEVE_HOLD_MARKER");
  ASSERT_GT(pid, 0);
  bool held = false, exited = false;
  for (int k = 0; k < 6000 && !held && !exited; ++k) {  // bounded: 10 minutes
    held = std::filesystem::exists(marker);
    int status = 0;
    if (!held) exited = waitpid(pid, &status, WNOHANG) == pid;
    if (!held && !exited) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  if (!held) ::kill(pid, SIGKILL);
  ASSERT_TRUE(held) << testing_util::Wait(pid, f.dir.path()).err;
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  EXPECT_EQ(testing_util::Wait(pid, f.dir.path()).signal, SIGKILL);
  EXPECT_TRUE(std::filesystem::is_directory(f.root + "/" + f.base_version))
      << "the base went before its delta";
  EXPECT_TRUE(VersionOpener().Open(f.root, delta->version, SnapshotReaderOptions()).ok());
}
#endif  // GRAPHSIEVE_HOLD_RENAME_PRELOAD

// --dry_run computes the delta over its base and publishes nothing (no
// version, no temporary, CURRENT unchanged); --export is refused up front
// (exit 2) rather than ignored.
TEST(DeltaBuildTest, DryRunPublishesNothingAndExportIsRefused) {
  Fixture f;
  auto store = SnapshotStore::Create({f.root, false});
  ASSERT_TRUE(store.ok()) << store.status();
  const auto before = (*store)->ListVersions();
  ASSERT_TRUE(before.ok()) << before.status();
  auto names = [&] {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(f.root))
      out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  };
  const std::vector<std::string> entries = names();
  const std::vector<std::string> delta = {"--input=" + f.delta_log,
                                          "--snapshot_root=" + f.root,
                                          "--delta_of=CURRENT",
                                          "--sketch_dim=16",
                                          "--seed=7",
                                          "--threads=1",
                                          "--kappa=" + absl::StrCat(PipelineOptions().kappa)};

  std::vector<std::string> args = delta;
  args.insert(args.end(), {"--dry_run", "--json"});
  auto r = testing_util::RunBuildBinary(args, f.dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("dry run: delta over " + f.base_version), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing published"), std::string::npos) << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["ok"].get<bool>()) << r.out;
  EXPECT_FALSE(j["published"].get<bool>()) << r.out;
  EXPECT_EQ(j["version"], "") << r.out;
  EXPECT_EQ(j["base_version"], f.base_version) << r.out;
  EXPECT_GT(j["pairs"].get<uint64_t>(), 0u) << r.out;
  EXPECT_EQ(*(*store)->ReadCurrent(), f.base_version);
  EXPECT_EQ(*(*store)->ListVersions(), *before);
  EXPECT_EQ(names(), entries);

  // The dry run's figures are the real delta's.
  DeltaBuildOptions d = DeltaOptions(f.delta_log, f.root);
  d.build.dry_run = true;
  auto dry = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(dry.ok()) << dry.status();
  EXPECT_FALSE(dry->published);
  EXPECT_EQ(*(*store)->ReadCurrent(), f.base_version);
  d.build.dry_run = false;
  auto real = RunDeltaBuild(d, BuildObserver());
  ASSERT_TRUE(real.ok()) << real.status();
  EXPECT_TRUE(real->published);
  EXPECT_EQ(dry->pairs, real->pairs);
  EXPECT_EQ(dry->new_users, real->new_users);
  EXPECT_EQ(dry->new_items, real->new_items);
  const std::string current = *(*store)->ReadCurrent();

  const std::string csv = f.dir.path() + "/delta-export.csv";
  args = delta;
  args.insert(args.end(), {"--export=" + csv, "--quiet", "--json"});
  r = testing_util::RunBuildBinary(args, f.dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--export cannot be used with --delta_of"), std::string::npos) << r.err;
  EXPECT_FALSE(nlohmann::json::parse(r.out)["ok"].get<bool>()) << r.out;
  EXPECT_FALSE(std::filesystem::exists(csv));
  EXPECT_EQ(*(*store)->ReadCurrent(), current);
}

TEST(DeltaBuildTest, BinaryNamesTheMismatchingFlag) {
  Fixture f;
  auto r = testing_util::RunBuildBinary(
      {"--input=" + f.delta_log, "--snapshot_root=" + f.root, "--delta_of=CURRENT",
       "--sketch_dim=16", "--seed=7", "--kappa=0.3", "--quiet"},
      f.dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("kappa=" + nlohmann::json(PipelineOptions().kappa).dump()),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find(f.base_version), std::string::npos) << r.err;

  // The base was built without an exposure discount: a delta with one is refused.
  r = testing_util::RunBuildBinary(
      {"--input=" + f.delta_log, "--snapshot_root=" + f.root, "--delta_of=CURRENT",
       "--sketch_dim=16", "--seed=7", "--kappa=" + absl::StrCat(PipelineOptions().kappa),
       "--exposure_power=1", "--quiet"},
      f.dir.path());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("exposure_power=1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(f.base_version), std::string::npos) << r.err;
}

// --rule_from_base: a delta given only --delta_of takes every parameter it
// must share with its base from the base's manifest (a base built with
// non-default rule flags and tune provenance), and carries the base's tune
// object; a flag given (on the command line or in a flag file) keeps its
// value and is still checked.
TEST(DeltaBuildTest, RuleFromBaseTakesTheBasesParametersAndTune) {
  ScopedTempDir dir;
  const std::string base_log = dir.path() + "/base.csv", delta_log = dir.path() + "/delta.csv";
  const std::string root = dir.path() + "/root";
  WriteBaseLog(base_log, 300, 400, 25, 1);
  WriteDeltaLog(delta_log, 30, 12, 400, 2);
  auto r = testing_util::RunBuildBinary(
      {"--input=" + base_log, "--snapshot_root=" + root, "--sketch_dim=16", "--seed=7",
       "--kappa=0.25", "--exposure_power=1", "--alpha=0.3", "--gamma=0.4", "--score_power=0.5",
       "--threads=1", "--tune_rule=mixture kappa=0.25 eta=1", "--tune_date=2026-11-28T00:00:00Z",
       "--tune_report_digest=xxh3:0123456789abcdef", "--quiet"},
      dir.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto store = SnapshotStore::Create({root, false});
  ASSERT_TRUE(store.ok()) << store.status();
  const std::string base_version = *(*store)->ReadCurrent();
  auto manifest_of = [&](const std::string& version) {
    auto text = snapshot::ReadFileToString(root + "/" + version + "/MANIFEST.json");
    EXPECT_TRUE(text.ok()) << text.status();
    return nlohmann::json::parse(text.value_or("{}"));
  };
  const nlohmann::json base = manifest_of(base_version);
  ASSERT_FALSE(base.value("tune", nlohmann::json()).is_null());
  ASSERT_NE(base["parameters"]["kappa"], nlohmann::json(PipelineOptions().kappa));

  // Without --rule_from_base the delta has the default flags: refused.
  const std::vector<std::string> delta = {"--input=" + delta_log, "--snapshot_root=" + root,
                                          "--delta_of=CURRENT", "--quiet"};
  r = testing_util::RunBuildBinary(delta, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("a delta must use its base's parameters"), std::string::npos) << r.err;

  // An explicit --kappa that is not the base's is still refused, naming it,
  // on the command line and in a flag file.
  std::vector<std::string> args = delta;
  args.insert(args.end(), {"--rule_from_base", "--kappa=0.3"});
  r = testing_util::RunBuildBinary(args, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("--kappa=0.25, this delta has --kappa=0.3"), std::string::npos) << r.err;
  const std::string flagfile = dir.path() + "/rule.flags";
  std::ofstream(flagfile) << "--kappa=0.3\n";
  args = delta;
  args.insert(args.end(), {"--rule_from_base", "--flagfile=" + flagfile});
  r = testing_util::RunBuildBinary(args, dir.path());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("this delta has --kappa=0.3"), std::string::npos) << r.err;
  EXPECT_EQ(*(*store)->ReadCurrent(), base_version);

  // Without --delta_of: a usage error naming the flag.
  r = testing_util::RunBuildBinary(
      {"--input=" + delta_log, "--snapshot_root=" + root, "--rule_from_base", "--quiet"},
      dir.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("--rule_from_base needs --delta_of"), std::string::npos) << r.err;
  EXPECT_EQ(*(*store)->ReadCurrent(), base_version);

  // Twice: the second delta's CURRENT is the first delta, which resolves to the base.
  args = delta;
  args.push_back("--rule_from_base");
  for (int i = 0; i < 2; ++i) {
    r = testing_util::RunBuildBinary(args, dir.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string version = *(*store)->ReadCurrent();
    ASSERT_NE(version, base_version);
    const nlohmann::json mine = manifest_of(version);
    EXPECT_EQ(mine["delta"]["base_version"], base_version);
    int compared = 0;
    for (const DeltaParameter& p : DeltaMustMatchParameters()) {
      if (!base["parameters"].contains(p.key)) continue;
      EXPECT_EQ(mine["parameters"][p.key], base["parameters"][p.key]) << p.key;
      ++compared;
    }
    EXPECT_GT(compared, 20);
    EXPECT_EQ(mine.value("tune", nlohmann::json()), base["tune"]);
  }
}

}  // namespace
}  // namespace graphsieve
