#include "core/serving/canary_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "gtest/gtest.h"

namespace graphsieve {
namespace {

// The KS statistic by brute force: evaluate both empirical CDFs at every value.
double BruteForceKs(const std::vector<float>& a, const std::vector<float>& b) {
  double d = 0;
  auto cdf = [](const std::vector<float>& v, float x) {
    double c = 0;
    for (float y : v) c += y <= x;
    return c / v.size();
  };
  for (const auto* v : {&a, &b}) {
    for (float x : *v) d = std::max(d, std::fabs(cdf(a, x) - cdf(b, x)));
  }
  return d;
}

TEST(KolmogorovSmirnov, ClosedFormCases) {
  EXPECT_EQ(KolmogorovSmirnovDistance({0.1f, 0.2f, 0.3f}, {0.3f, 0.1f, 0.2f}), 0.0);
  EXPECT_EQ(KolmogorovSmirnovDistance({0.1f, 0.2f}, {0.5f, 0.6f, 0.7f}), 1.0);
  EXPECT_DOUBLE_EQ(KolmogorovSmirnovDistance({0.1f, 0.2f, 0.3f, 0.4f}, {0.3f, 0.4f, 0.5f, 0.6f}),
                   0.5);
  // Ties across the samples: at 0.5 both CDFs jump together.
  EXPECT_DOUBLE_EQ(KolmogorovSmirnovDistance({0.5f, 0.5f, 0.9f}, {0.5f, 0.9f, 0.9f}), 1.0 / 3.0);
  EXPECT_EQ(KolmogorovSmirnovDistance({}, {0.5f}), 0.0);
}

TEST(KolmogorovSmirnov, MatchesBruteForceOnRandomSamples) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> level(1, 20);  // coarse values: many ties
  for (int trial = 0; trial < 50; ++trial) {
    std::vector<float> a(1 + trial % 13), b(1 + (trial * 7) % 17);
    for (float& x : a) x = level(rng) / 20.0f;
    for (float& x : b) x = level(rng) / 20.0f;
    EXPECT_NEAR(KolmogorovSmirnovDistance(a, b), BruteForceKs(a, b), 1e-12) << trial;
  }
}

TEST(NearestRankQuantile, Definition) {
  const std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
  EXPECT_EQ(NearestRankQuantile(v, 0.5), 5);
  EXPECT_EQ(NearestRankQuantile(v, 0.99), 10);
  EXPECT_EQ(NearestRankQuantile(v, 0.0), 1);
  EXPECT_EQ(NearestRankQuantile(v, 1.0), 10);
  EXPECT_EQ(NearestRankQuantile({}, 0.5), 0);
}

CanaryInput Input(std::vector<float> base, std::vector<float> cand) {
  CanaryInput in;
  in.baseline_rates = std::move(base);
  in.candidate_rates = std::move(cand);
  in.baseline_sources.assign(in.baseline_rates.size(), 1);
  in.candidate_sources.assign(in.baseline_rates.size(), 1);
  return in;
}

TEST(CompareRates, IdenticalRatesPassWithAllDeltasZero) {
  CanaryReport r;
  CompareRates(Input({0.1f, 0.5f, 1.0f, 0.02f}, {0.1f, 0.5f, 1.0f, 0.02f}), CanaryThresholds(), &r);
  EXPECT_TRUE(r.pass());
  EXPECT_EQ(r.pairs, 4u);
  EXPECT_EQ(r.mean_abs_delta, 0);
  EXPECT_EQ(r.p50_abs_delta, 0);
  EXPECT_EQ(r.p99_abs_delta, 0);
  EXPECT_EQ(r.max_abs_delta, 0);
  EXPECT_EQ(r.fraction_over, 0);
  EXPECT_EQ(r.ks_distance, 0);
  EXPECT_EQ(r.source_changed, 0u);
  EXPECT_NEAR(r.baseline_kept_fraction, (0.1 + 0.5 + 1.0 + 0.02) / 4, 1e-7);
  EXPECT_EQ(r.baseline_kept_fraction, r.candidate_kept_fraction);
  EXPECT_EQ(r.kept_fraction_over, "pairs (labels unknown)");
}

TEST(CompareRates, ShiftedRatesFailEveryCheck) {
  std::vector<float> base(100), cand(100);
  for (int i = 0; i < 100; ++i) {
    base[i] = 0.2f + 0.001f * i;
    cand[i] = base[i] + (i < 10 ? 0.3f : 0.0f);  // 10 % of pairs move by 0.3
  }
  CanaryReport r;
  CompareRates(Input(base, cand), CanaryThresholds(), &r);
  EXPECT_FALSE(r.pass());
  EXPECT_NEAR(r.mean_abs_delta, 0.03, 1e-6);
  EXPECT_NEAR(r.max_abs_delta, 0.3, 1e-6);
  EXPECT_NEAR(r.p99_abs_delta, 0.3, 1e-6);
  EXPECT_EQ(r.p50_abs_delta, 0);
  EXPECT_NEAR(r.fraction_over, 0.10, 1e-12);
  EXPECT_NEAR(r.candidate_kept_fraction - r.baseline_kept_fraction, 0.03, 1e-6);
  EXPECT_GT(r.ks_distance, 0.05);
  EXPECT_EQ(r.violations.size(), 4u);  // mean, p99, KS, fraction over

  CanaryThresholds off;
  off.max_mean_delta = off.max_p99_delta = off.max_ks = off.max_fraction_over = -1;
  CompareRates(Input(base, cand), off, &r);
  EXPECT_TRUE(r.pass()) << "negative limits switch the checks off";
}

TEST(CompareRates, KeptFractionCountsOnlyNegativesAndSourceMixIsCounted) {
  CanaryInput in = Input({0.1f, 0.3f, 0.9f}, {0.1f, 0.5f, 0.9f});
  in.negative = {1, 1, 0};
  in.baseline_sources = {1, 2, 3};
  in.candidate_sources = {1, 1, 3};
  CanaryReport r;
  CompareRates(in, CanaryThresholds(), &r);
  EXPECT_EQ(r.negatives, 2u);
  EXPECT_EQ(r.kept_fraction_over, "negative instances");
  EXPECT_NEAR(r.baseline_kept_fraction, 0.2, 1e-7);
  EXPECT_NEAR(r.candidate_kept_fraction, 0.3, 1e-7);
  EXPECT_EQ(r.baseline_mix.exact, 1u);
  EXPECT_EQ(r.baseline_mix.inferred, 1u);
  EXPECT_EQ(r.baseline_mix.by_default, 1u);
  EXPECT_EQ(r.candidate_mix.exact, 2u);
  EXPECT_EQ(r.source_changed, 1u);
}

TEST(CompareRates, QuantilesAndMaxAreThoseOfTheSortedDeltas) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<int> level(0, 40);  // coarse values: many ties
  for (size_t n : {1, 2, 3, 99, 100, 101, 1000, 4097}) {
    std::vector<float> base(n), cand(n);
    for (size_t i = 0; i < n; ++i) {
      base[i] = level(rng) / 40.0f;
      cand[i] = level(rng) / 40.0f;
    }
    std::vector<double> sorted(n);
    for (size_t i = 0; i < n; ++i) sorted[i] = std::fabs(double{cand[i]} - double{base[i]});
    std::sort(sorted.begin(), sorted.end());
    CanaryReport r;
    CompareRates(Input(base, cand), CanaryThresholds(), &r);
    EXPECT_EQ(r.p50_abs_delta, NearestRankQuantile(sorted, 0.5)) << n;
    EXPECT_EQ(r.p99_abs_delta, NearestRankQuantile(sorted, 0.99)) << n;
    EXPECT_EQ(r.max_abs_delta, sorted.back()) << n;
  }
}

TEST(CompareRates, NanFailsInsteadOfPassing) {
  CanaryReport r;
  CompareRates(Input({0.1f}, {std::numeric_limits<float>::quiet_NaN()}), CanaryThresholds(), &r);
  EXPECT_FALSE(r.pass());
}

TEST(CanaryReport, TableAndJsonCarryTheFigures) {
  CanaryReport r;
  r.baseline_version = "v-base";
  r.candidate_version = "v-cand";
  CompareRates(Input({0.2f, 0.4f}, {0.2f, 0.6f}), CanaryThresholds(), &r);
  const std::string table = FormatCanaryTable(r);
  EXPECT_NE(table.find("v-base"), std::string::npos);
  EXPECT_NE(table.find("v-cand"), std::string::npos);
  EXPECT_NE(table.find("FAIL"), std::string::npos);
  const nlohmann::json j = CanaryReportToJson(r);
  EXPECT_EQ(j["pass"], false);
  EXPECT_NEAR(j["abs_delta"]["max"].get<double>(), 0.2, 1e-6);
  EXPECT_EQ(j["baseline"]["version"], "v-base");
  EXPECT_EQ(j["violations"].size(), r.violations.size());
}

}  // namespace
}  // namespace graphsieve
