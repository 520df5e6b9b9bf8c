// graphsieve-build under the real mpirun (core/offline/build_job.h): np = 2 gives
// the rates of np = 1 and of a run without mpirun; a rank killed mid-job
// publishes nothing; a bad row on one rank stops every rank with the error
// naming file and line; --export is written in per-rank parts and joined.
#include <dirent.h>
#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/model/unseen.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/version_opener.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/io/test_files.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;

struct Result {
  int exit_code = -1;
  std::string output;
};

Result RunCommand(const std::string& command) {
  Result r;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.output.append(buf, n);
  const int status = ::pclose(pipe);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return r;
}

std::string Mpirun(int np, const std::string& extra = "",
                   const char* binary = GRAPHSIEVE_BUILD_BINARY) {
  return absl::StrCat(GRAPHSIEVE_MPIEXEC, " --allow-run-as-root --oversubscribe -np ", np, " ",
                      extra, " ", binary);
}

// A generated log split into two files by alternating rows (each with the header).
class DistBuildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string log = files_.Path("log.csv");
    Result g = RunCommand(
        absl::StrCat(GRAPHSIEVE_GEN_BINARY, " --preset small --seed 3 --quiet --output ", log));
    ASSERT_EQ(g.exit_code, 0) << g.output;
    std::vector<std::string> lines =
        absl::StrSplit(testing_io::ReadFile(log), '\n', absl::SkipEmpty());
    std::string a = lines[0] + "\n", b = a;
    for (size_t i = 1; i < lines.size(); ++i) (i % 2 ? a : b) += lines[i] + "\n";
    a_ = files_.Write("a.csv", a);
    b_ = files_.Write("b.csv", b);
  }
  // Exported rates by "user,item".
  std::map<std::string, double> Rates(const std::string& csv) {
    std::map<std::string, double> rates;
    std::vector<std::string> lines =
        absl::StrSplit(testing_io::ReadFile(csv), '\n', absl::SkipEmpty());
    for (size_t i = 1; i < lines.size(); ++i) {
      std::vector<std::string> f = absl::StrSplit(lines[i], ',');
      rates[f[0] + "," + f[1]] = std::stod(f.back());
    }
    return rates;
  }
  std::set<std::string> Entries(const std::string& dir) {
    std::set<std::string> names;
    if (DIR* d = ::opendir(dir.c_str())) {
      while (dirent* e = ::readdir(d)) names.insert(e->d_name);
      ::closedir(d);
    }
    return names;
  }
  std::string Flags(const std::string& root) const {
    return absl::StrCat(" --input ", a_, ",", b_, " --snapshot_root ", root, " --threads 1");
  }
  testing_io::TempFiles files_;
  std::string a_, b_;
};

// Both rate rules (docs/METHOD.md "Rate rules"): the α fit spans the ranks.
class SameRatesTest : public DistBuildTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(SameRatesTest, NpTwoGivesTheRatesOfNpOneAndOfOneProcess) {
  const std::string rule = absl::StrCat(" --rate_rule ", GetParam());
  Result alone = RunCommand(absl::StrCat(GRAPHSIEVE_BUILD_BINARY, Flags(files_.Path("r0")), rule,
                                         " --export ", files_.Path("e0.csv")));
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  Result np1 = RunCommand(Mpirun(1) + Flags(files_.Path("r1")) + rule + " --export " +
                          files_.Path("e1.csv"));
  ASSERT_EQ(np1.exit_code, 0) << np1.output;
  Result np2 = RunCommand(Mpirun(2) + Flags(files_.Path("r2")) + rule + " --export " +
                          files_.Path("e2.csv"));
  ASSERT_EQ(np2.exit_code, 0) << np2.output;
  EXPECT_THAT(np2.output, HasSubstr("rank 1:"));  // the per-rank resource lines
  EXPECT_FALSE(testing_io::ReadFile(files_.Path("r2/CURRENT")).empty());
  const std::map<std::string, double> r0 = Rates(files_.Path("e0.csv")),
                                      r1 = Rates(files_.Path("e1.csv")),
                                      r2 = Rates(files_.Path("e2.csv"));
  ASSERT_GT(r1.size(), 100000u);
  ASSERT_EQ(r1.size(), r2.size());
  ASSERT_EQ(r0.size(), r1.size());
  double worst = 0, worst_alone = 0;
  for (const auto& [key, rate] : r1) {
    ASSERT_EQ(r2.count(key), 1u) << key;
    worst = std::max(worst, std::abs(r2.at(key) - rate) / rate);
    worst_alone = std::max(worst_alone, std::abs(r0.at(key) - rate) / rate);
  }
  EXPECT_LE(worst, 1e-6);
  EXPECT_LE(worst_alone, 1e-6);
  // Per-node counts and the positive-rate DEFAULT fit (snapshot format 3,
  // counted on the root's gathered table under mpirun): the same in all three.
  std::shared_ptr<const SnapshotReader> snap[3];
  for (int k = 0; k < 3; ++k) {
    const std::string root = files_.Path(absl::StrCat("r", k));
    std::string version = testing_io::ReadFile(root + "/CURRENT");
    while (!version.empty() && (version.back() == '\n' || version.back() == ' '))
      version.pop_back();
    auto reader = VersionOpener().OpenStored(root, version, SnapshotReaderOptions());
    ASSERT_TRUE(reader.ok()) << reader.status();
    snap[k] = *reader;
  }
  ASSERT_GT(snap[1]->model().default_item_rho, 0.0);
  for (int k : {0, 2}) {
    const UnseenModel &a = snap[k]->model(), &b = snap[1]->model();
    EXPECT_NEAR(a.default_prior, b.default_prior, 1e-12 * b.default_prior) << k;
    EXPECT_NEAR(a.default_item_rho, b.default_item_rho, 1e-9 * b.default_item_rho) << k;
    EXPECT_NEAR(a.default_item_mean, b.default_item_mean, 1e-9 * b.default_item_mean) << k;
    EXPECT_NEAR(a.default_user_rho, b.default_user_rho, 1e-9 * b.default_user_rho) << k;
  }
  size_t nodes = 0;
  for (const auto& entry : r1) {
    const std::vector<std::string> ids = absl::StrSplit(entry.first, ',');
    for (int side = 0; side < 2; ++side) {
      NodeView want, got0, got2;
      const uint64_t id = std::stoull(ids[side]);
      ASSERT_TRUE(snap[1]->FindNode(side == 1, id, &want)) << entry.first;
      ASSERT_TRUE(snap[0]->FindNode(side == 1, id, &got0)) << entry.first;
      ASSERT_TRUE(snap[2]->FindNode(side == 1, id, &got2)) << entry.first;
      ASSERT_GT(want.record.impressions, 0u) << entry.first;
      ASSERT_EQ(got0.record.impressions, want.record.impressions) << entry.first;
      ASSERT_EQ(got2.record.impressions, want.record.impressions) << entry.first;
      ASSERT_EQ(got0.record.positives, want.record.positives) << entry.first;
      ASSERT_EQ(got2.record.positives, want.record.positives) << entry.first;
      ++nodes;
    }
  }
  EXPECT_EQ(nodes, 2 * r1.size());
  std::printf(
      "rule %s: max relative rate difference: np=2 vs np=1 %.3g, np=1 vs one process %.3g\n",
      GetParam(), worst, worst_alone);
}

INSTANTIATE_TEST_SUITE_P(Rules, SameRatesTest, ::testing::Values("floor", "mixture"));

// The built-in pilot (core/offline/build_pilot.h): --method opt (and the
// max ensemble) without a pilot column under mpirun -np 2 gives np = 1's
// rates and stores the same pilot rows (and the same member fits, so the
// same INFERRED rates); np = 1 runs on 2 threads, np = 2 on 1 each.
class BuiltInPilotTest : public DistBuildTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(BuiltInPilotTest, NpTwoGivesTheRatesAndFactorsOfNpOne) {
  const std::string pilot = absl::StrCat(" --method ", GetParam(),
                                         " --pilot_epochs 3 --pilot_dim 4 "
                                         "--pilot_negative_rate 0.2 --export ");
  Result np1 = RunCommand(Mpirun(1) + Flags(files_.Path("p1")) + " --threads 2" + pilot +
                          files_.Path("pe1.csv"));
  ASSERT_EQ(np1.exit_code, 0) << np1.output;
  Result np2 = RunCommand(Mpirun(2) + Flags(files_.Path("p2")) + pilot + files_.Path("pe2.csv"));
  ASSERT_EQ(np2.exit_code, 0) << np2.output;
  EXPECT_THAT(np2.output, HasSubstr("pilot"));  // the stage ran
  const std::map<std::string, double> r1 = Rates(files_.Path("pe1.csv")),
                                      r2 = Rates(files_.Path("pe2.csv"));
  ASSERT_GT(r1.size(), 100000u);
  ASSERT_EQ(r1.size(), r2.size());
  double worst = 0;
  std::set<double> distinct;
  for (const auto& [key, rate] : r1) {
    ASSERT_EQ(r2.count(key), 1u) << key;
    worst = std::max(worst, std::abs(r2.at(key) - rate) / rate);
    if (distinct.size() < 1000) distinct.insert(rate);
  }
  EXPECT_LE(worst, 1e-6);
  EXPECT_GT(distinct.size(), 100u);  // per-pair rates, not a constant
  std::shared_ptr<const SnapshotReader> snap[2];
  for (int k = 0; k < 2; ++k) {
    const std::string root = files_.Path(absl::StrCat("p", k + 1));
    std::string version = testing_io::ReadFile(root + "/CURRENT");
    while (!version.empty() && (version.back() == '\n' || version.back() == ' '))
      version.pop_back();
    auto reader = VersionOpener().OpenStored(root, version, SnapshotReaderOptions());
    ASSERT_TRUE(reader.ok()) << reader.status();
    snap[k] = *reader;
  }
  const UnseenModel &m1 = snap[0]->model(), &m2 = snap[1]->model();
  ASSERT_EQ(m1.pilot_dim, 4);
  EXPECT_EQ(m2.pilot_dim, 4);
  EXPECT_EQ(m1.pilot_bias, m2.pilot_bias);
  EXPECT_EQ(m1.sketch_dim, m2.sketch_dim);
  size_t rows = 0;
  for (auto it = r1.begin(); it != r1.end() && rows < 2000; ++it, ++rows) {
    const std::vector<std::string> ids = absl::StrSplit(it->first, ',');
    for (int side = 0; side < 2; ++side) {
      NodeView a, b;
      ASSERT_TRUE(snap[0]->FindNode(side == 1, std::stoull(ids[side]), &a));
      ASSERT_TRUE(snap[1]->FindNode(side == 1, std::stoull(ids[side]), &b));
      const size_t tail = a.sketch.size() - m1.PilotRowFloats();
      for (size_t k = tail; k < a.sketch.size(); ++k) {
        ASSERT_EQ(a.sketch[k], b.sketch[k]) << it->first << " side " << side << " float " << k;
      }
    }
  }
  // The ensembles' member fits (docs/SNAPSHOT.md "On-disk layout"), and the
  // INFERRED rates they give: pairs of the exported users and items that the
  // log does not hold.
  EXPECT_EQ(m1.has_members, std::string(GetParam()) != "opt");
  ASSERT_EQ(m2.has_members, m1.has_members);
  double worst_fit = 0, worst_inferred = 0;
  if (m1.has_members) {
    for (const auto& [a, b] :
         {std::pair(m1.maec_member, m2.maec_member), std::pair(m1.pilot_member, m2.pilot_member),
          std::pair(m1.combined, m2.combined)}) {
      EXPECT_EQ(a.rule, b.rule);
      EXPECT_EQ(a.floor, b.floor);
      EXPECT_EQ(a.kappa, b.kappa);
      ASSERT_GT(a.rho, 0.0);
      worst_fit = std::max(worst_fit, std::abs(a.rho - b.rho) / a.rho);
      if (a.score_mean > 0) {
        worst_fit = std::max(worst_fit, std::abs(a.score_mean - b.score_mean) / a.score_mean);
      }
    }
    EXPECT_LE(worst_fit, 1e-6);
    std::set<std::string> users, items;
    for (auto it = r1.begin(); it != r1.end() && (users.size() < 60 || items.size() < 60); ++it) {
      const std::vector<std::string> ids = absl::StrSplit(it->first, ',');
      if (users.size() < 60) users.insert(ids[0]);
      if (items.size() < 60) items.insert(ids[1]);
    }
    size_t inferred = 0;
    for (const std::string& u : users) {
      for (const std::string& i : items) {
        if (r1.count(u + "," + i)) continue;  // a stored pair
        NodeView a[2], b[2];
        for (int side = 0; side < 2; ++side) {
          const uint64_t id = std::stoull(side == 0 ? u : i);
          ASSERT_TRUE(snap[0]->FindNode(side == 1, id, &a[side]));
          ASSERT_TRUE(snap[1]->FindNode(side == 1, id, &b[side]));
        }
        const double x = ScoreUnseenPair(a[0], a[1], m1), y = ScoreUnseenPair(b[0], b[1], m2);
        worst_inferred = std::max(worst_inferred, std::abs(x - y) / x);
        ++inferred;
      }
    }
    EXPECT_GT(inferred, 1000u);
    EXPECT_LE(worst_inferred, 1e-5);
  }
  std::printf(
      "built-in pilot, %s: max relative difference np=2 vs np=1: rates %.3g, member fits %.3g, "
      "INFERRED rates %.3g\n",
      GetParam(), worst, worst_fit, worst_inferred);
}

INSTANTIATE_TEST_SUITE_P(Methods, BuiltInPilotTest, ::testing::Values("opt", "max"));

// Where rank 1 is killed, and the flags that make the build reach that stage
// (`write` on a rank other than 0 needs per-rank parts: --partitions 2).
struct KillPoint {
  const char* stage;
  const char* extra_flags;
};
void PrintTo(const KillPoint& k, std::ostream* os) { *os << k.stage << k.extra_flags; }

class KilledRankTest : public DistBuildTest, public ::testing::WithParamInterface<KillPoint> {};

TEST_P(KilledRankTest, PublishesNothingAndLeavesCurrent) {
  const std::string root = files_.Path("root");
  Result first = RunCommand(absl::StrCat(GRAPHSIEVE_BUILD_BINARY, Flags(root)));
  ASSERT_EQ(first.exit_code, 0) << first.output;
  const std::string current = testing_io::ReadFile(root + "/CURRENT");
  std::set<std::string> before = Entries(root);
  Result killed =
      RunCommand(Mpirun(2, absl::StrCat("-x GRAPHSIEVE_TEST_KILL_RANK_AT=1:", GetParam().stage),
                        GRAPHSIEVE_BUILD_TESTING_BINARY) +
                 Flags(root) + GetParam().extra_flags);
  EXPECT_NE(killed.exit_code, 0) << killed.output;
  EXPECT_EQ(testing_io::ReadFile(root + "/CURRENT"), current);
  EXPECT_THAT(killed.output, ::testing::Not(HasSubstr("published")));
  for (const std::string& e : Entries(root)) {  // at most a temporary, never a new version
    if (before.count(e) == 0) {
      EXPECT_THAT(e, ::testing::EndsWith(".tmp"));
    }
  }
}

// The last: a rank killed after writing its part, so rank 0 never publishes.
INSTANTIATE_TEST_SUITE_P(Stages, KilledRankTest,
                         ::testing::Values(KillPoint{"pipeline", ""}, KillPoint{"gather", ""},
                                           KillPoint{"write", " --partitions 2"}),
                         [](const ::testing::TestParamInfo<KillPoint>& info) {
                           return std::string(info.param.stage);
                         });

// Part `part` of the CURRENT version under `root`: "user,item" -> rate of
// every pair, "u<id>"/"i<id>" -> (positives, impressions) of the nodes of
// those pairs, and the model's positive-rate DEFAULT fit.
struct PartData {
  std::map<std::string, double> rates;
  std::map<std::string, std::pair<uint32_t, uint32_t>> counts;
  std::vector<double> fit;
};

PartData ReadPart(const std::string& root, int part) {
  PartData d;
  const std::string version = testing_io::ReadFile(root + "/CURRENT");
  SnapshotReaderOptions o;
  o.partition = part;  // verify_checksums (default): every file against its part's manifest
  auto reader = VersionOpener().OpenStored(root, version.substr(0, version.find('\n')), o);
  EXPECT_TRUE(reader.ok()) << reader.status();
  if (!reader.ok()) return d;
  EXPECT_EQ((*reader)->manifest().partition, static_cast<uint32_t>(part));
  std::set<uint64_t> users, items;
  absl::Status s = (*reader)->ForEachPair([&](uint64_t user, uint64_t item, float rate) {
    d.rates[absl::StrCat(user, ",", item)] = rate;
    users.insert(user);
    items.insert(item);
  });
  EXPECT_TRUE(s.ok()) << s;
  for (bool is_item : {false, true}) {
    for (uint64_t id : is_item ? items : users) {
      NodeView view;
      EXPECT_TRUE((*reader)->FindNode(is_item, id, &view)) << id;
      d.counts[absl::StrCat(is_item ? "i" : "u", id)] = {view.record.positives,
                                                         view.record.impressions};
    }
  }
  const UnseenModel& m = (*reader)->model();
  d.fit = {m.default_prior, m.default_user_rho, m.default_user_mean, m.default_item_rho,
           m.default_item_mean};
  return d;
}

// --partitions 2 under 2 ranks: each rank writes its part (no gather,
// core/offline/dist_parts.h); the parts hold the rates, the per-node counts and
// the DEFAULT fit of a single-process --partitions 2 build.
TEST_F(DistBuildTest, EachRankWritesItsPartOfAPartitionedVersion) {
  Result alone = RunCommand(
      absl::StrCat(GRAPHSIEVE_BUILD_BINARY, Flags(files_.Path("p0")), " --partitions 2"));
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  Result np2 = RunCommand(Mpirun(2) + Flags(files_.Path("p2")) + " --partitions 2");
  ASSERT_EQ(np2.exit_code, 0) << np2.output;
  EXPECT_THAT(np2.output, HasSubstr("published"));
  EXPECT_THAT(np2.output, ::testing::Not(HasSubstr("gather")));  // the gather stage did not run
  size_t pairs = 0;
  for (int part = 0; part < 2; ++part) {
    const PartData want = ReadPart(files_.Path("p0"), part),
                   got = ReadPart(files_.Path("p2"), part);
    ASSERT_GT(want.rates.size(), 10000u);
    ASSERT_EQ(got.rates.size(), want.rates.size()) << "part " << part;
    double worst = 0;
    for (const auto& [key, rate] : want.rates) {
      ASSERT_EQ(got.rates.count(key), 1u) << key;
      worst = std::max(worst, std::abs(got.rates.at(key) - rate) / rate);
    }
    EXPECT_LE(worst, 1e-6) << "part " << part;
    EXPECT_EQ(got.counts, want.counts) << "part " << part;
    ASSERT_EQ(got.fit.size(), want.fit.size());
    ASSERT_GT(want.fit[0], 0.0);  // the log has positives: a fit exists
    for (size_t k = 0; k < want.fit.size(); ++k) {
      EXPECT_NEAR(got.fit[k], want.fit[k], 1e-6 * std::abs(want.fit[k])) << "fit " << k;
    }
    pairs += got.rates.size();
  }
  std::printf("--partitions 2: %zu pairs in 2 parts written by 2 ranks\n", pairs);
}

// --export under 2 ranks with text ids: each rank writes its users' rows,
// with their names, to a part; rank 0 joins the parts into the one file (no
// part left behind, the header once) holding the rows of a single-process
// export. With --partitions 2 nothing is gathered to rank 0 at all.
TEST_F(DistBuildTest, ExportIsWrittenInPerRankPartsWithTheNamesAndJoined) {
  auto with_text_ids = [&](const std::string& path, const std::string& name) {
    std::vector<std::string> lines =
        absl::StrSplit(testing_io::ReadFile(path), '\n', absl::SkipEmpty());
    std::string out = lines[0] + "\n";
    for (size_t i = 1; i < lines.size(); ++i) {
      std::vector<std::string> f = absl::StrSplit(lines[i], ',');
      out += absl::StrCat("user-", f[0], ",item-", f[1], ",", f[2], "\n");
    }
    return files_.Write(name, out);
  };
  const std::string a = with_text_ids(a_, "ta.csv"), b = with_text_ids(b_, "tb.csv");
  const std::string flags = absl::StrCat(" --input ", a, ",", b, " --threads 1 --partitions 2");
  Result alone = RunCommand(absl::StrCat(GRAPHSIEVE_BUILD_BINARY, flags, " --snapshot_root ",
                                         files_.Path("x0"), " --export ", files_.Path("x0.csv")));
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  const std::string dir = files_.Path("out");
  ASSERT_EQ(RunCommand("mkdir -p " + dir).exit_code, 0);
  const std::string joined = dir + "/x2.csv";
  Result np2 = RunCommand(Mpirun(2) + flags + " --snapshot_root " + files_.Path("x2") +
                          " --export " + joined);
  ASSERT_EQ(np2.exit_code, 0) << np2.output;
  EXPECT_THAT(np2.output, ::testing::Not(HasSubstr("gather")));
  EXPECT_EQ(Entries(dir), (std::set<std::string>{".", "..", "x2.csv"}));  // the parts are gone
  const std::string text = testing_io::ReadFile(joined);
  EXPECT_EQ(text.substr(0, text.find('\n')),
            "user_id,item_id,label,instances,geff,hardness,score,rate");
  EXPECT_EQ(text.find("user_id", 1), std::string::npos);  // the header once
  const std::map<std::string, double> want = Rates(files_.Path("x0.csv")), got = Rates(joined);
  ASSERT_GT(want.size(), 100000u);
  ASSERT_EQ(got.size(), want.size());
  double worst = 0;
  for (const auto& [key, rate] : want) {
    ASSERT_EQ(got.count(key), 1u) << key;  // the ids' text: names reached the rank of the row
    worst = std::max(worst, std::abs(got.at(key) - rate) / rate);
  }
  EXPECT_LE(worst, 1e-6);
  EXPECT_THAT(want.begin()->first, ::testing::StartsWith("user-"));

  // An export into a directory that does not exist is refused on every rank
  // before the log is read, naming the flag and the directory.
  const std::string bad = files_.Path("missing-dir/x.csv");
  Result failed =
      RunCommand(Mpirun(2) + flags + " --snapshot_root " + files_.Path("x3") + " --export " + bad);
  EXPECT_NE(failed.exit_code, 0) << failed.output;
  EXPECT_THAT(failed.output, HasSubstr("--export '" + bad + "': the directory '" +
                                       files_.Path("missing-dir") + "' does not exist"));
  EXPECT_FALSE(std::filesystem::exists(files_.Path("x3") + "/CURRENT")) << "nothing published";
}

TEST_F(DistBuildTest, BadRowOnOneRankStopsEveryRankNamingFileAndLine) {
  std::string bad = testing_io::ReadFile(b_);
  std::vector<std::string> lines = absl::StrSplit(bad, '\n');
  lines[4] = "12,34,maybe";  // line 5 of b.csv, read by rank 1
  const std::string bad_path = files_.Write("bad.csv", absl::StrJoin(lines, "\n"));
  const std::string root = files_.Path("bad_root");
  Result r = RunCommand(Mpirun(2) +
                        absl::StrCat(" --input ", a_, ",", bad_path, " --snapshot_root ", root));
  EXPECT_EQ(r.exit_code, 1) << r.output;
  EXPECT_THAT(r.output, HasSubstr(absl::StrCat("rank 1: --input ", bad_path, ": ", bad_path,
                                               ":5: column 'label'")));
  EXPECT_THAT(r.output, HasSubstr("nothing published"));
  EXPECT_EQ(Entries(root).count("CURRENT"), 0u);
}

// --max_bad_rows counts the whole log, summed over the ranks: 2 bad rows in
// each rank's file are 4 in all, over a limit of 3 that each rank alone keeps.
TEST_F(DistBuildTest, MaxBadRowsCountsTheWholeLogAcrossRanks) {
  const std::string bad_a =
      files_.Write("bad_a.csv", testing_io::ReadFile(a_) + "1,2,maybe\n1,2,x\n");
  const std::string bad_b =
      files_.Write("bad_b.csv", testing_io::ReadFile(b_) + "3,4,maybe\n3,4,x\n");
  const std::string flags = absl::StrCat(" --input ", bad_a, ",", bad_b, " --threads 1");
  for (int np : {1, 2}) {
    const std::string root = files_.Path(absl::StrCat("limit3_np", np));
    Result r = RunCommand(Mpirun(np) + flags + " --snapshot_root " + root + " --max_bad_rows 3");
    EXPECT_EQ(r.exit_code, 1) << "np " << np << ": " << r.output;
    if (np == 2) {
      EXPECT_THAT(r.output, HasSubstr("--max_bad_rows=3: the log has 4 bad rows over its 2 files "
                                      "(read by 2 ranks); the limit counts the whole log"));
    } else {
      EXPECT_THAT(r.output, HasSubstr("--input " + bad_b + ": "));  // the 4th, in the second file
    }
    EXPECT_THAT(r.output, HasSubstr("nothing published"));
    EXPECT_EQ(Entries(root).count("CURRENT"), 0u);
  }
  const std::string root = files_.Path("limit4");
  Result ok = RunCommand(Mpirun(2) + flags + " --snapshot_root " + root + " --max_bad_rows 4");
  EXPECT_EQ(ok.exit_code, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("skipped 4 malformed rows (--max_bad_rows=4)"));
  EXPECT_EQ(Entries(root).count("CURRENT"), 1u);
}

}  // namespace
}  // namespace graphsieve
