// graphsieve-eval verdict: the interval, budget and recommendation arithmetic on
// values with a known answer, the time-column reader, and the command end to end on
// generated logs where the answer is known both ways.
#include "eval/verdict.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "eval/random.h"
#include "gtest/gtest.h"
#include "tests/eval/synthetic_log.h"
#include "tests/temp_dir.h"

namespace graphsieve::eval {
namespace {

using ::graphsieve::testing::NewTempDir;

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(VerdictIntervalTest, MeanStandardErrorAndStudentInterval) {
  // diffs 1, 2, 3: mean 2, sample sd 1, se 1/sqrt(3); t(2 df) = 4.303.
  const PairedInterval i = IntervalOf({1.0, 2.0, 3.0});
  EXPECT_EQ(i.n, 3);
  EXPECT_DOUBLE_EQ(i.mean, 2.0);
  EXPECT_NEAR(i.se, 1.0 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(i.low, 2.0 - 4.303 / std::sqrt(3.0), 1e-12);
  EXPECT_NEAR(i.high, 2.0 + 4.303 / std::sqrt(3.0), 1e-12);
  EXPECT_DOUBLE_EQ(StudentT975(7), 2.365);
  EXPECT_DOUBLE_EQ(StudentT975(100), 1.96);
  EXPECT_TRUE(std::isnan(IntervalOf({0.5}).se));  // one seed: no interval
}

TEST(VerdictBudgetTest, CrossingIsLogLinearAndTheBandGivesTheInterval) {
  // Paired uniform(α) − target: mean −0.002, −0.001, +0.001, +0.003 at α 0.2, 0.3, 0.5, 1,
  // each over two seeds ±0.0001 (se 0.0001, half-width 12.706 × 0.0001).
  const std::vector<double> alphas = {0.2, 0.3, 0.5, 1.0};
  std::vector<std::vector<double>> diffs;
  for (double m : {-0.002, -0.001, 0.001, 0.003}) diffs.push_back({m - 1e-4, m + 1e-4});
  const BudgetMatch b = MatchAlpha(alphas, diffs);
  ASSERT_TRUE(b.alpha.has_value());
  EXPECT_NEAR(*b.alpha, std::exp(0.5 * (std::log(0.3) + std::log(0.5))), 1e-9);
  // Upper band −0.001 + 0.0012706 >= 0 already at 0.3: the low end lies in (0.2, 0.3].
  ASSERT_TRUE(b.low.has_value());
  EXPECT_GT(*b.low, 0.2);
  EXPECT_LE(*b.low, 0.3);
  // Lower band at 0.5 is 0.001 − 0.0012706 < 0, at 1 it is > 0: the high end in (0.5, 1).
  ASSERT_TRUE(b.high.has_value());
  EXPECT_GT(*b.high, 0.5);
  EXPECT_LT(*b.high, 1.0);
  EXPECT_NEAR(BudgetSaved(0.2, *b.alpha), 1.0 - 0.2 / *b.alpha, 1e-12);
  // Uniform never catches up within the grid: no α, reported as "> 1".
  const BudgetMatch never =
      MatchAlpha(alphas, {{-3e-3, -2e-3}, {-3e-3, -2e-3}, {-3e-3, -2e-3}, {-3e-3, -2e-3}});
  EXPECT_FALSE(never.alpha.has_value());
  EXPECT_DOUBLE_EQ(never.largest_alpha, 1.0);
}

TEST(VerdictRecommendTest, BothWaysAndTheExitCodes) {
  EXPECT_EQ(Recommend(IntervalOf({0.002, 0.003, 0.0025})), Recommendation::kDeploy);
  EXPECT_EQ(Recommend(IntervalOf({-0.002, -0.003, -0.0025})), Recommendation::kKeepUniform);
  EXPECT_EQ(Recommend(IntervalOf({0.002, -0.002, 0.001})), Recommendation::kNoGain);
  EXPECT_EQ(Recommend(IntervalOf({0.01})), Recommendation::kNoGain);  // no interval
  EXPECT_EQ(ExitCode(Recommendation::kDeploy), 0);
  EXPECT_EQ(ExitCode(Recommendation::kNoGain), 3);
  EXPECT_EQ(ExitCode(Recommendation::kKeepUniform), 4);
}

TEST(VerdictTimeColumnTest, ReadsTheColumnAndNamesBadValues) {
  const std::string dir = NewTempDir("verdict");
  {
    std::ofstream(dir + "/ok.tsv") << "user_id\titem_id\tlabel\tts\n1\t2\t0\t100\n\n3\t4\t1\t7\n";
    std::ofstream(dir + "/bad.csv") << "user_id,item_id,label,ts\n1,2,0,100\n3,4,1,yesterday\n";
  }
  LogReaderOptions o;
  absl::StatusOr<std::vector<int64_t>> t = ReadTimeColumn(dir + "/ok.tsv", "ts", o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, (std::vector<int64_t>{100, 7}));
  absl::StatusOr<std::vector<int64_t>> bad = ReadTimeColumn(dir + "/bad.csv", "ts", o);
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("bad.csv:3: column 'ts'"), std::string::npos)
      << bad.status();
  EXPECT_NE(bad.status().message().find("yesterday"), std::string::npos);
  absl::StatusOr<std::vector<int64_t>> missing = ReadTimeColumn(dir + "/ok.tsv", "time", o);
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find("'time'"), std::string::npos);
}

// The time column is read as the log reader reads the log: a quoted header and quoted
// values (the reader accepts them), a byte order mark, CRLF, a header-less layout. It used to
// miss a quoted header's column, reject "100", and accept 1.5 (read as 1) and 1e30 (cast
// to int64_t, undefined behaviour).
TEST(VerdictTimeColumnTest, ReadsTheLogAsTheLogReaderDoes) {
  const std::string dir = NewTempDir("verdict");
  std::ofstream(dir + "/quoted.csv") << "\xEF\xBB\xBF\"user_id\",\"item_id\",\"label\",\"ts\"\r\n"
                                     << "\"1\",\"2\",\"0\",\"100\"\r\n"
                                     << "3,4,1, 9223372036854775807 \r\n"
                                     << "5,\"6,7\",1,2e3\r\n";
  LogReaderOptions o;
  ImpressionLog log;
  ASSERT_TRUE(ReadImpressionLog(dir + "/quoted.csv", o, &log).ok());
  absl::StatusOr<std::vector<int64_t>> t = ReadTimeColumn(dir + "/quoted.csv", "ts", o);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, (std::vector<int64_t>{100, INT64_MAX, 2000}));
  EXPECT_EQ(t->size(), log.size());

  LogReaderOptions headerless;
  headerless.column_names = {"user_id", "item_id", "label", "ts"};
  std::ofstream(dir + "/u.data") << "1\t2\t1\t881250949\n3\t4\t0\t881250950\n";
  t = ReadTimeColumn(dir + "/u.data", "ts", headerless);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(*t, (std::vector<int64_t>{881250949, 881250950}));

  for (const char* value : {"1.5", "1e30", "-3", "9223372036854775808", "nan", "\"\""}) {
    std::ofstream(dir + "/bad.csv")
        << "user_id,item_id,label,ts\n1,2,0,100\n3,4,1," << value << "\n";
    absl::StatusOr<std::vector<int64_t>> bad = ReadTimeColumn(dir + "/bad.csv", "ts", o);
    ASSERT_FALSE(bad.ok()) << value;
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << value;
    EXPECT_NE(bad.status().message().find("bad.csv:3: column 'ts'"), std::string::npos)
        << value << ": " << bad.status();
  }
  std::ofstream(dir + "/short.csv") << "user_id,item_id,label,ts\n1,2,0\n";
  EXPECT_NE(ReadTimeColumn(dir + "/short.csv", "ts", o).status().message().find("short.csv:2"),
            std::string::npos);
  EXPECT_FALSE(ReadTimeColumn("-", "ts", o).ok()) << "standard input cannot be read twice";
}

// Two user blocks and two item blocks; every pair is shown once. `helps`: a user clicks
// only items of its own block, with a probability from user and item effects, so every
// informative negative lies inside a block, where the positive graph connects user and item,
// and the default rule spends its budget there (uniform spreads it over the uninformative
// cross-block negatives). Otherwise every label is a coin flip with probability 0.15, the
// same for every pair: nothing can be learnt, so no sampling rule can gain over uniform.
std::string WriteBlockLog(const std::string& dir, bool helps) {
  const int users = 60, items = 100;
  SplitMix64 rng(helps ? 11 : 12);
  std::vector<double> bu(2 * users), bi(2 * items);
  for (double& x : bu) x = rng.Normal();
  for (double& x : bi) x = rng.Normal();
  const std::string path = dir + (helps ? "/helps.csv" : "/noise.csv");
  std::ofstream out(path);
  out << "user_id,item_id,label,ts\n";
  for (int u = 0; u < 2 * users; ++u) {
    for (int i = 0; i < 2 * items; ++i) {
      const bool same = (u / users) == (i / items);
      double p = 0.15;
      if (helps) p = same ? 1.0 / (1.0 + std::exp(-(-1.0 + 1.5 * bu[u] + 1.5 * bi[i]))) : 0.0;
      out << u << ',' << i << ',' << (rng.Uniform() < p ? 1 : 0) << ',' << u * 2 * items + i
          << '\n';
    }
  }
  return path;
}

int RunVerdictBinary(const std::string& args, const std::string& dir, std::string* out) {
  const std::string out_path = dir + "/verdict.txt";
  const std::string cmd =
      std::string(GRAPHSIEVE_EVAL_BIN) + " verdict " + args + " > " + out_path + " 2>&1";
  const int rc = std::system(cmd.c_str());
  *out = ReadAll(out_path);
  return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

TEST(VerdictCommandTest, RecommendsDeployWhereTheRuleHelps) {
  const std::string dir = NewTempDir("verdict");
  std::string out;
  // --kappa=0.1 (the rule leaning most on the graph score): on this small block log the
  // gain of the default κ 1 is inside its interval (NO MEASURABLE GAIN); the verdict judges
  // the κ it is given, and says which.
  const int rc =
      RunVerdictBinary("--input " + WriteBlockLog(dir, true) + " --dim=4 --kappa=0.1", dir, &out);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("recommendation: DEPLOY"), std::string::npos) << out;
  EXPECT_NE(out.find("rule judged: maec-prop-mix, kappa 0.1,"), std::string::npos) << out;
  EXPECT_NE(out.find("random split"), std::string::npos) << out;
  EXPECT_NE(out.find("budget saved at equal AUC"), std::string::npos) << out;
  EXPECT_NE(out.find("verdict: [40/40]"), std::string::npos) << "progress lines: " << out;
}

TEST(VerdictCommandTest, RejectsAKappaThatIsNotPositive) {
  const std::string dir = NewTempDir("verdict");
  std::string out;
  const int rc = RunVerdictBinary(
      "--input " + WriteBlockLog(dir, true) + " --dim=4 --quiet --kappa=0", dir, &out);
  EXPECT_EQ(rc, 2) << "a usage error: " << out;
  EXPECT_NE(out.find("--kappa must be a finite number > 0, got 0"), std::string::npos) << out;
}

TEST(VerdictCommandTest, DoesNotRecommendDeployWhereNothingCanBeLearnt) {
  const std::string dir = NewTempDir("verdict");
  std::string out;
  const int rc =
      RunVerdictBinary("--input " + WriteBlockLog(dir, false) + " --dim=4 --quiet", dir, &out);
  EXPECT_TRUE(rc == 3 || rc == 4) << out;
  EXPECT_EQ(out.find("recommendation: DEPLOY"), std::string::npos) << out;
  EXPECT_EQ(out.find("verdict: ["), std::string::npos) << "--quiet prints no progress: " << out;
}

TEST(VerdictCommandTest, TimeColumnRunsTheDeployedModeAndTheExitCodeFollowsTheVerdict) {
  const std::string dir = NewTempDir("verdict");
  std::string out;
  const int rc = RunVerdictBinary(
      "--input " + WriteBlockLog(dir, true) + " --time-col ts --dim=4 --seeds=3 --quiet", dir,
      &out);
  EXPECT_NE(out.find("deployed mode (time column 'ts'"), std::string::npos) << out;
  const int expected = out.find("recommendation: DEPLOY") != std::string::npos          ? 0
                       : out.find("recommendation: NO MEASURABLE") != std::string::npos ? 3
                       : out.find("recommendation: KEEP UNIFORM") != std::string::npos  ? 4
                                                                                        : -1;
  EXPECT_EQ(rc, expected) << out;
}

TEST(VerdictCommandTest, BadInvocationsNameTheInput) {
  const std::string dir = NewTempDir("verdict");
  const std::string log = WriteBlockLog(dir, true);
  std::string out;
  EXPECT_EQ(RunVerdictBinary("--input " + log + " --time-col when --quiet", dir, &out), 1);
  EXPECT_NE(out.find("no time column 'when'"), std::string::npos) << out;
  // Exit codes as verdict --help says: 1 an error reading the log, 2 a usage error.
  EXPECT_EQ(RunVerdictBinary("--quiet", dir, &out), 2);
  EXPECT_NE(out.find("--input is required"), std::string::npos) << out;
  EXPECT_EQ(RunVerdictBinary("--input " + dir + "/absent.csv --quiet", dir, &out), 1);
  EXPECT_NE(out.find("absent.csv"), std::string::npos) << out;
  EXPECT_EQ(RunVerdictBinary("--input " + log + " --models=fm,lr --quiet", dir, &out), 2);
  EXPECT_NE(out.find("one target model"), std::string::npos) << out;
  EXPECT_EQ(RunVerdictBinary("--input " + log + " --models=svm --quiet", dir, &out), 2);
  EXPECT_NE(out.find("--models: unknown model 'svm'"), std::string::npos) << out;
  EXPECT_EQ(RunVerdictBinary("--input " + log + " --no-such-flag --quiet", dir, &out), 2);
  EXPECT_NE(out.find("--no_such_flag: unknown flag"), std::string::npos) << out;
  EXPECT_EQ(RunVerdictBinary("--help", dir, &out), 0);
  EXPECT_NE(out.find("graphsieve-eval verdict --input LOG [--time-col C]"), std::string::npos)
      << out;
  EXPECT_NE(out.find("2 usage"), std::string::npos) << out;
}

// A paired standard error needs two seeds: one is a usage error up front (it used to print
// "+- nan (SE), interval +nan .. +nan" and exit 3), and RunVerdict itself refuses to report
// a gain over fewer than two paired seeds.
TEST(VerdictCommandTest, OneSeedIsRefusedNotReportedAsNaN) {
  const std::string dir = NewTempDir("verdict");
  const std::string log = WriteBlockLog(dir, true);
  std::string out;
  EXPECT_EQ(RunVerdictBinary("--input " + log + " --seeds=1 --dim=4", dir, &out), 2) << out;
  EXPECT_NE(out.find("--seeds must be >= 2"), std::string::npos) << out;
  EXPECT_EQ(out.find("nan"), std::string::npos) << out;
  EXPECT_EQ(out.find("verdict: ["), std::string::npos) << "nothing was trained: " << out;

  VerdictOptions v;
  v.experiment.seeds = 1;
  v.experiment.model.dim = 4;
  v.experiment.model.max_epochs = 2;
  v.experiment.pipeline.threads = 1;
  absl::StatusOr<VerdictReport> r =
      RunVerdict(testing::SyntheticLog(40, 30, 2), {}, v, "random split");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kFailedPrecondition) << r.status();
  EXPECT_NE(r.status().message().find("compared on 1 of 1 seeds"), std::string::npos) << r.status();
}

// Flags verdict does not read are refused naming the flag (--mode deployed used to run the
// random split), and verdict's own flags are refused by the experiment command.
TEST(VerdictCommandTest, FlagsVerdictDoesNotReadAreRefused) {
  const std::string dir = NewTempDir("verdict");
  const std::string log = WriteBlockLog(dir, true);
  std::string out;
  for (const char* flag : {"--mode=deployed", "--methods=maec", "--alphas=0.5", "--kappas=0.5",
                           "--output_md=x.md", "--pilot=lr", "--include_full=false"}) {
    EXPECT_EQ(RunVerdictBinary("--input " + log + " --dim=4 " + flag, dir, &out), 2) << flag;
    const std::string name = std::string(flag).substr(0, std::string(flag).find('='));
    EXPECT_NE(out.find(name + " does not apply to verdict"), std::string::npos) << out;
    EXPECT_EQ(out.find("verdict: ["), std::string::npos) << "nothing was trained: " << out;
  }
  EXPECT_EQ(RunVerdictBinary("--input " + log + " --dim=4 --later_fraction=0.3", dir, &out), 2);
  EXPECT_NE(out.find("--later_fraction applies to the deployed mode"), std::string::npos) << out;

  const std::string cmd = std::string(GRAPHSIEVE_EVAL_BIN) + " --log " + log + " --kappa=0.5 > " +
                          dir + "/main.txt 2>&1";
  const int rc = std::system(cmd.c_str());
  EXPECT_EQ(WIFEXITED(rc) ? WEXITSTATUS(rc) : -1, 2);
  EXPECT_NE(ReadAll(dir + "/main.txt").find("--kappa is verdict's flag"), std::string::npos)
      << ReadAll(dir + "/main.txt");
}

}  // namespace
}  // namespace graphsieve::eval
