// graphsieve-eval tune: the selection rule on differences with a known answer,
// the flag file through the real graphsieve-build (the same rates as the flags
// given by hand, and the provenance in the manifest), bad inputs, and the
// command end to end on generated logs whose right answer is known
// (docs/EVALUATION.md "Choosing the rule on your own log").
#include "eval/tune.h"

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "eval/random.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/eval/synthetic_log.h"
#include "tests/temp_dir.h"

namespace graphsieve::eval {
namespace {

using ::graphsieve::testing::NewTempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

int RunShell(const std::string& cmd, const std::string& dir, std::string* out) {
  const std::string out_path = dir + "/run.txt";
  const int rc = std::system((cmd + " > " + out_path + " 2>&1").c_str());
  *out = ReadAll(out_path);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

std::string Tune(const std::string& args) {
  return std::string(GRAPHSIEVE_EVAL_BIN) + " tune " + args;
}

// ---- The selection rule.

std::vector<double> Around(double mean, double spread, int n) {
  std::vector<double> out;
  for (int i = 0; i < n; ++i) out.push_back(mean + (i % 2 == 0 ? spread : -spread));
  return out;
}

TEST(TuneSelectionTest, NonInferiorityNeedsTheMarginAndOneStandardError) {
  std::string why;
  EXPECT_TRUE(NonInferior(Around(0.0, 0.001, 8), SelectionRule{}, &why)) << why;
  EXPECT_TRUE(NonInferior(Around(-0.0004, 0.002, 8), SelectionRule{}, &why)) << why;
  // Mean -0.0006: below the margin.
  EXPECT_FALSE(NonInferior(Around(-0.0006, 0.01, 8), SelectionRule{}, &why));
  EXPECT_NE(why.find("< -0.0005"), std::string::npos) << why;
  // Mean -0.0004 with a tiny spread: inside the margin but many SE below 0.
  EXPECT_FALSE(NonInferior(Around(-0.0004, 0.00001, 8), SelectionRule{}, &why));
  EXPECT_NE(why.find("SE"), std::string::npos) << why;
  EXPECT_FALSE(NonInferior({0.01}, SelectionRule{}, &why)) << "one seed has no standard error";
}

TEST(TuneSelectionTest, LargestSavingAmongPassingWinsAndUniformWhenNoneSaves) {
  const std::vector<SelectionCandidate> c = {
      {"passes, saves 20%", {Around(0.0002, 0.001, 8)}, {0.2, 0.0, 0.4}},
      {"fails, saves 60%", {Around(-0.003, 0.001, 8)}, {0.6, 0.5, 0.7}},
      {"passes, saves 35%", {Around(0.0008, 0.001, 8)}, {0.35, 0.1, 0.5}},
      {"passes on row 0, fails on row 1",
       {Around(0.001, 0.001, 8), Around(-0.002, 0.001, 8)},
       {0.9, 0.8, 1.0}},
  };
  const Selection s = SelectRule(c);
  EXPECT_EQ(s.chosen, 2);
  ASSERT_EQ(s.verdicts.size(), 4u);
  EXPECT_TRUE(s.verdicts[0].passes);
  EXPECT_FALSE(s.verdicts[1].passes);
  EXPECT_FALSE(s.verdicts[3].passes);
  EXPECT_NE(s.verdicts[3].failed.find("row 1"), std::string::npos) << s.verdicts[3].failed;
  // Nothing that passes saves anything: uniform (-1).
  const std::vector<SelectionCandidate> none = {
      {"passes, saves 0", {Around(0.0, 0.001, 8)}, {0.0, 0.0, 0.3}},
      {"fails", {Around(-0.01, 0.001, 8)}, {0.5, 0.4, 0.6}},
  };
  EXPECT_EQ(SelectRule(none).chosen, -1);
  EXPECT_EQ(SelectRule({}).chosen, -1);
}

// ---- The candidates and the flags that publish them.

TEST(TuneFlagsTest, CandidatesHoldTheDefaultAndTheFlagsNameTheSameRule) {
  const std::vector<TuneCandidate> c = TuneCandidates({0.25}, /*with_pilot=*/false);
  ASSERT_EQ(c.size(), 6u);  // κ {0.25, 1} (the default's κ added) × η {0, 0.5, 1}
  int defaults = 0;
  for (const TuneCandidate& x : c) defaults += x.is_default;
  EXPECT_EQ(defaults, 1);
  EXPECT_EQ(TuneCandidates({0.25, 1}, true).size(), 10u);  // + opt-mix and max-mix per κ
  TuneCandidate eta;
  eta.method = "maec-prop-mix-exp1";
  eta.kappa = 0.25;
  eta.exposure_power = 1;
  EXPECT_EQ(BuildFlagsFor(&eta, 0.2),
            (std::vector<std::string>{"--method=maec", "--alpha=0.2", "--rate_rule=mixture",
                                      "--kappa=0.25", "--gamma=0.5", "--exposure_power=1"}));
  EXPECT_EQ(BuildFlagsFor(nullptr, 0.3),
            (std::vector<std::string>{"--method=uniform", "--alpha=0.3"}));
}

// A report whose chosen rule is the graph rule with κ 0.25 and η 1.
TuneReport ChosenGraphRule() {
  TuneReport r;
  r.input = "log.csv";
  r.alpha = 0.2;
  TuneRow row;
  row.candidate.name = "graph kappa=0.25 eta=1";
  row.candidate.method = "maec-prop-mix-exp1";
  row.candidate.kappa = 0.25;
  row.candidate.exposure_power = 1;
  row.gain = {0.001, 0.0004, 0.0001, 0.002, 8};
  row.saving = {0.3, 0.1, 0.5};
  row.budget.alpha = 0.28;
  r.rows.push_back(row);
  r.chosen = 0;
  return r;
}

std::string ManifestOf(const std::string& root) {
  const std::string version = ReadAll(root + "/CURRENT");
  return ReadAll(root + "/" + version.substr(0, version.find_first_of("\r\n")) + "/MANIFEST.json");
}

TEST(TuneFlagFileTest, TheBuilderReadsItWithTheSameRatesAsTheFlagsByHandAndRecordsTheTune) {
  const std::string dir = NewTempDir("tune");
  ASSERT_TRUE(testing::WriteCsv(testing::SyntheticLog(60, 80, 3), dir + "/log.csv"));
  const std::string digest = ReportDigest("{\"a\": 1}\n");
  EXPECT_EQ(digest.size(), 21u);
  {
    std::ofstream(dir + "/rule.flags")
        << FormatFlagFile(ChosenGraphRule(), "2026-11-28T21:25:14Z", digest);
  }
  const std::string build = std::string(GRAPHSIEVE_BUILD_BIN) + " --quiet --input=" + dir +
                            "/log.csv --threads=1 --snapshot_root=";
  std::string out;
  ASSERT_EQ(
      RunShell(build + dir + "/a --flagfile=" + dir + "/rule.flags --export=" + dir + "/a.csv", dir,
               &out),
      0)
      << out << "\n"
      << ReadAll(dir + "/rule.flags");
  ASSERT_EQ(
      RunShell(build + dir +
                   "/b --method=maec --alpha=0.2 --rate_rule=mixture --kappa=0.25 --gamma=0.5 "
                   "--exposure_power=1 --export=" +
                   dir + "/b.csv",
               dir, &out),
      0)
      << out;
  const std::string a = ReadAll(dir + "/a.csv"), b = ReadAll(dir + "/b.csv");
  EXPECT_GT(a.size(), 1000u);
  EXPECT_TRUE(a == b) << "the flag file's build exports other rates than the hand-given flags";
  // And not the default's: the flag file did change the rule.
  ASSERT_EQ(RunShell(build + dir + "/c --export=" + dir + "/c.csv", dir, &out), 0) << out;
  EXPECT_FALSE(a == ReadAll(dir + "/c.csv"));
  const nlohmann::json with = nlohmann::json::parse(ManifestOf(dir + "/a"));
  EXPECT_EQ(with["tune"]["rule"], "graph,kappa=0.25,eta=1");
  EXPECT_EQ(with["tune"]["date"], "2026-11-28T21:25:14Z");
  EXPECT_EQ(with["tune"]["report_digest"], digest);
  EXPECT_EQ(with["parameters"]["exposure_power"], 1.0);
  EXPECT_FALSE(nlohmann::json::parse(ManifestOf(dir + "/b")).contains("tune"));
  // Provenance goes whole: a date alone is refused (a usage error).
  EXPECT_EQ(RunShell(build + dir + "/d --tune_date=2026-11-28T21:25:14Z", dir, &out), 2) << out;
  EXPECT_NE(out.find("--tune_rule, --tune_date and --tune_report_digest go together"),
            std::string::npos)
      << out;
}

// ---- The command end to end.

// `users` × `items`, every pair shown once with probability `shown`; labels a coin
// flip with probability 0.1 whatever the pair: nothing can be learnt.
std::string WriteNoiseLog(const std::string& path, int users, int items, uint64_t seed) {
  SplitMix64 rng(seed);
  std::ofstream out(path);
  out << "user_id,item_id,label,ts\n";
  int64_t t = 0;
  for (int u = 0; u < users; ++u) {
    for (int i = 0; i < items; ++i) {
      if (rng.Uniform() < 0.5) continue;
      out << u << ',' << i << ',' << (rng.Uniform() < 0.1 ? 1 : 0) << ',' << (t++ * 7919) % 100003
          << '\n';
    }
  }
  return path;
}

TEST(TuneCommandTest, BadInputsNameTheInput) {
  const std::string dir = NewTempDir("tune");
  std::string out;
  // Too few positives.
  {
    std::ofstream f(dir + "/few.csv");
    f << "user_id,item_id,label\n";
    for (int i = 0; i < 400; ++i) f << i % 20 << ',' << i / 20 << ',' << (i % 50 == 0) << '\n';
  }
  EXPECT_EQ(
      RunShell(Tune("--input " + dir + "/few.csv --output_dir " + dir + " --quiet"), dir, &out), 1);
  EXPECT_NE(out.find("few.csv: 8 positive impressions of 400; tune needs at least 50"),
            std::string::npos)
      << out;
  // --time-col naming a column the log does not have.
  const std::string noise = WriteNoiseLog(dir + "/noise.csv", 40, 50, 1);
  EXPECT_EQ(RunShell(Tune("--input " + noise + " --time-col when --output_dir " + dir + " --quiet"),
                     dir, &out),
            1);
  EXPECT_NE(out.find("noise.csv:1: no time column 'when' (--time-col)"), std::string::npos) << out;
  // A test file of users the log never shows.
  {
    std::ofstream f(dir + "/strangers.csv");
    f << "user_id,item_id,label\n";
    for (int i = 0; i < 100; ++i) f << 9000 + i << ',' << i % 50 << ',' << (i % 3 == 0) << '\n';
  }
  EXPECT_EQ(RunShell(Tune("--input " + noise + " --test " + dir + "/strangers.csv --output_dir " +
                          dir + " --quiet"),
                     dir, &out),
            1);
  EXPECT_NE(out.find("--test " + dir + "/strangers.csv: 0 impressions"), std::string::npos) << out;
  EXPECT_NE(out.find("(100 dropped)"), std::string::npos) << out;
  // Usage errors (exit 2), before anything is read.
  EXPECT_EQ(RunShell(Tune("--input " + noise + " --alpha 1.5"), dir, &out), 2);
  EXPECT_NE(out.find("--alpha must be in (0, 1), got 1.5"), std::string::npos) << out;
  EXPECT_EQ(RunShell(Tune("--input " + noise + " --methods uniform"), dir, &out), 2);
  EXPECT_NE(out.find("--methods does not apply to tune"), std::string::npos) << out;
  EXPECT_EQ(RunShell(Tune("--input " + noise + " --output_dir " + dir + "/missing"), dir, &out), 2);
  EXPECT_NE(out.find("--output_dir '" + dir + "/missing' is not an existing directory"),
            std::string::npos)
      << out;
}

// The pilot rules are measured with graphsieve-build's built-in pilot (each
// snapshot of the earlier period fits it, as a build without --pilot_col does),
// so they are deployable and their flags build a snapshot with that pilot.
TEST(TuneCommandTest, ThePilotRulesAreMeasuredWithTheBuiltInPilotAndTheirFlagsBuildIt) {
  const std::string dir = NewTempDir("tune");
  std::string out;
  ASSERT_EQ(RunShell(std::string(GRAPHSIEVE_GEN_BIN) +
                         " --preset tiny --seed 3 --threads 1 --quiet --output " + dir + "/log.csv",
                     dir, &out),
            0)
      << out;
  const int rc = RunShell(Tune("--input " + dir + "/log.csv --output_dir " + dir +
                               " --seeds 2 --dim 4 --threads 2 --quiet"),
                          dir, &out);
  ASSERT_TRUE(rc == 0 || rc == 3 || rc == 4) << out;
  const nlohmann::json j = nlohmann::json::parse(ReadAll(dir + "/tune.json"));
  EXPECT_EQ(j["pilot"].get<std::string>().rfind("built-in", 0), 0u) << j["pilot"];
  // The reported pilot candidate: the chosen rule when it is one, else the first.
  nlohmann::json pilot;
  int pilot_rules = 0;
  for (const nlohmann::json& c : j["candidates"]) {
    const std::string method = c["method"];
    if (method != "opt-mix" && method != "max-mix") continue;
    ++pilot_rules;
    EXPECT_TRUE(c["deployable"].get<bool>()) << c.dump();
    EXPECT_TRUE(c["skipped"].empty()) << c.dump();
    EXPECT_EQ(c["delta_auc"]["n"], 2) << c.dump();  // measured on both seeds
    if (pilot.is_null() || c["name"] == j["chosen"]) pilot = c;
  }
  ASSERT_EQ(pilot_rules, 4) << "opt-mix and max-mix at kappa 0.25 and 1";
  {
    std::ofstream flags(dir + "/pilot.flags");
    for (const nlohmann::json& f : pilot["build_flags"]) {
      const std::string flag = f;
      EXPECT_EQ(flag.find("--pilot_col"), std::string::npos) << flag;
      flags << flag << "\n";
    }
  }
  ASSERT_EQ(RunShell(std::string(GRAPHSIEVE_BUILD_BIN) + " --quiet --input=" + dir +
                         "/log.csv --threads=1 --snapshot_root=" + dir + "/snap --flagfile=" + dir +
                         "/pilot.flags",
                     dir, &out),
            0)
      << out << "\n"
      << ReadAll(dir + "/pilot.flags");
  const nlohmann::json m = nlohmann::json::parse(ManifestOf(dir + "/snap"));
  EXPECT_EQ(m["parameters"]["pilot"], "built-in") << m.dump(2);
  EXPECT_EQ(m["parameters"]["method"], pilot["method"] == "opt-mix" ? "opt" : "max") << m.dump(2);
  // A pilot the builder cannot fit (the eval's own) is refused: its flags
  // would publish something else than what was measured.
  EXPECT_EQ(
      RunShell(Tune("--input " + dir + "/log.csv --output_dir " + dir + " --pilot fm"), dir, &out),
      2);
  EXPECT_NE(out.find("--pilot: tune measures the pilot rules with graphsieve-build's built-in"),
            std::string::npos)
      << out;
}

// Labels independent of the pair: unsampled training gains nothing over uniform,
// so there is no budget to save, and tune writes uniform (exit 3 or 4).
TEST(TuneKnownAnswerTest, APureNoiseLogGetsUniform) {
  const std::string dir = NewTempDir("tune");
  const std::string log = WriteNoiseLog(dir + "/noise.csv", 300, 200, 7);
  std::string out;
  const int rc = RunShell(
      Tune("--input " + log + " --output_dir " + dir + " --pilot none --dim 4 --threads 2"), dir,
      &out);
  EXPECT_TRUE(rc == 3 || rc == 4) << out;
  EXPECT_NE(out.find("**Chosen rule: uniform**"), std::string::npos) << out;
  EXPECT_NE(out.find("tune: ["), std::string::npos) << "progress on stderr: " << out;
  const std::string flags = ReadAll(dir + "/rule.flags");
  EXPECT_NE(flags.find("\n--method=uniform\n--alpha=0.2\n"), std::string::npos) << flags;
  EXPECT_NE(flags.find("--tune_rule=uniform\n"), std::string::npos) << flags;
  // The flag file names the report it came from.
  EXPECT_NE(flags.find("--tune_report_digest=" + ReportDigest(ReadAll(dir + "/tune.json"))),
            std::string::npos)
      << flags;
  const nlohmann::json j = nlohmann::json::parse(ReadAll(dir + "/tune.json"));
  EXPECT_EQ(j["chosen"], "uniform");
  EXPECT_EQ(j["seeds"], 8);
  EXPECT_EQ(j["exit_code"], rc);
  EXPECT_NE(ReadAll(dir + "/tune-curve.svg").find("</svg>"), std::string::npos);
}

// A preference log (graphsieve-gen --exposure preference: a previous model's top
// items per user plus exploration) judged on a randomly exposed test: the log
// shows popular and preferred items far more often than a random test does, so
// the right rule discounts exposure (eta > 0). 400,000 impressions, 8 seeds.
TEST(TuneKnownAnswerTest, APreferenceLogJudgedOnItsRandomTestGetsAnExposureDiscount) {
  const std::string dir = NewTempDir("tune");
  std::string out;
  ASSERT_EQ(RunShell(std::string(GRAPHSIEVE_GEN_BIN) +
                         " --preset small --instances 400000 --exposure preference --seed 1 "
                         "--threads 1 --quiet --output " +
                         dir + "/pref.csv --test_output " + dir +
                         "/test.csv --test_exposure random --test_instances 100000",
                     dir, &out),
            0)
      << out;
  const int rc =
      RunShell(Tune("--input " + dir + "/pref.csv --test " + dir + "/test.csv --output_dir " + dir +
                    " --pilot none --threads 2 --quiet"),
               dir, &out);
  EXPECT_EQ(rc, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(ReadAll(dir + "/tune.json"));
  const std::string chosen = j["chosen"];
  ASSERT_NE(chosen, "uniform") << out;
  double eta = 0.0;
  for (const nlohmann::json& c : j["candidates"]) {
    if (c["name"] == chosen) eta = c["exposure_power"];
  }
  EXPECT_GT(eta, 0.0) << chosen << "\n" << out;
  EXPECT_TRUE(j["sampling_costs"].get<bool>()) << out;
  EXPECT_NE(ReadAll(dir + "/rule.flags").find("\n--exposure_power=" + absl::StrFormat("%g", eta)),
            std::string::npos);
}

// Two user blocks and two item blocks (as tests/eval/verdict_test.cc's): a user clicks
// only items of its own block, so every informative negative lies inside a block,
// where the positive graph connects user and item; the graph rule spends the budget
// there, uniform on the uninformative cross-block negatives. Judged on the log's
// own held-out part, the graph rule is the answer.
TEST(TuneKnownAnswerTest, ABlockLogJudgedOnItsOwnTestGetsTheGraphRule) {
  const std::string dir = NewTempDir("tune");
  const int users = 60, items = 100;
  SplitMix64 rng(11);
  std::vector<double> bu(2 * users), bi(2 * items);
  for (double& x : bu) x = rng.Normal();
  for (double& x : bi) x = rng.Normal();
  {
    std::ofstream f(dir + "/blocks.csv");
    f << "user_id,item_id,label\n";
    for (int u = 0; u < 2 * users; ++u) {
      for (int i = 0; i < 2 * items; ++i) {
        const bool same = (u / users) == (i / items);
        const double p = same ? 1.0 / (1.0 + std::exp(-(-1.0 + 1.5 * bu[u] + 1.5 * bi[i]))) : 0.0;
        f << u << ',' << i << ',' << (rng.Uniform() < p ? 1 : 0) << '\n';
      }
    }
  }
  std::string out;
  const int rc = RunShell(Tune("--input " + dir + "/blocks.csv --output_dir " + dir +
                               " --pilot none --dim 4 --threads 2 --quiet"),
                          dir, &out);
  EXPECT_EQ(rc, 0) << out;
  const nlohmann::json j = nlohmann::json::parse(ReadAll(dir + "/tune.json"));
  EXPECT_EQ(j["chosen"].get<std::string>().rfind("graph ", 0), 0u) << out;
}

}  // namespace
}  // namespace graphsieve::eval
