// graphsieve-bench-core: the whole MA-EC core pipeline on a kuairec-shaped
// log (generated in memory by graphsieve_gen's "kuairec" preset, or read with
// --input), with seconds and peak RSS per stage, then the accuracy of the
// effective-resistance routes against an exact reference on sampled pairs.
//
// Reference: the one-sided exact route at a tight PCG tolerance (1e-10),
// itself checked against direct solves L x = e_u − e_v (tolerance 1e-12) on
// a few pairs; the deviation is printed. Baseline for speed: the sketch route
// at each k, measured in the same run.
#include <sys/resource.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "core/io/log_reader.h"
#include "core/maec/block_pcg.h"
#include "core/maec/graph.h"
#include "core/maec/parallel.h"
#include "core/maec/pipeline.h"
#include "core/maec/resistance.h"
#include "gen/generator.h"
#include "tests/maec/rank_correlation.h"

ABSL_FLAG(
    std::string, input, "",
    "Impression log (CSV/TSV, optionally gzip). Empty: generate the kuairec preset in memory.");
ABSL_FLAG(std::string, label, "label",
          "Label rule for --input, e.g. 'label' or 'watch_ratio > 3'.");
ABSL_FLAG(double, scale, 1.0, "Scale of the generated kuairec preset (without --input).");
ABSL_FLAG(double, nodes_scale, 0,
          "Users and items x N instead of sqrt(--scale) (graphsieve-gen --nodes_scale); 0 = off.");
ABSL_FLAG(double, users_scale, 0,
          "Users alone x N, items keeping their factor (graphsieve-gen --users_scale); 0 = off.");
ABSL_FLAG(
    std::string, reference, "one-sided",
    "Exact reference of the accuracy table: one-sided (every pair, |S| solves at tol 1e-10) or "
    "pairs (one direct solve L x = e_u - e_v per sampled pair at tol 1e-10: cheaper on big "
    "graphs).");
ABSL_FLAG(uint64_t, seed, 1,
          "Generator seed (without --input); the pipeline seed is --pipeline_seed.");
ABSL_FLAG(uint64_t, pipeline_seed, 42, "Seed of the sketch and of the pair sample.");
ABSL_FLAG(int, threads, 2, "Threads for the pipeline and the solves.");
ABSL_FLAG(std::string, resistance, "auto",
          "Route of the timed pipeline run: auto, exact, sketch, one-sided.");
ABSL_FLAG(double, solver_tolerance, graphsieve::PipelineOptions().solver_tolerance,
          "Relative residual of every PCG column in the timed pipeline run.");
ABSL_FLAG(int, block_columns, graphsieve::PipelineOptions().block_columns,
          "Right-hand sides per PCG block in the timed pipeline run (one-sided route).");
ABSL_FLAG(int, sketch_dim, graphsieve::PipelineOptions().sketch_dim,
          "k of the node sketch rows (and of the sketch route) in the timed pipeline run.");
ABSL_FLAG(std::string, ks, "32,64,128,256",
          "Sketch sizes for the accuracy table (comma-separated).");
ABSL_FLAG(std::string, cv_ks, "",
          "Pair-sketch sizes for the control-variate table (comma-separated; empty = skip): the "
          "sketch route with and without the control variate, on the sampled pairs only.");
ABSL_FLAG(int, cv_seeds, 1,
          "Sketch seeds per k in the control-variate table (errors averaged over seeds).");
ABSL_FLAG(int, sample, 5000, "Pairs sampled (inside components) for the accuracy table.");
ABSL_FLAG(
    int, unseen_pairs, 0,
    "Held-out user-item pairs (uniform, same component, not in the log) for the unseen-pair table: "
    "R from the stored node rows, plain vs control variate (docs/METHOD.md \"Unseen pairs\"); 0 = "
    "off.");
ABSL_FLAG(std::string, unseen_ks, "64",
          "Row sketch sizes k for the unseen-pair table (comma-separated).");
ABSL_FLAG(int, unseen_seeds, 3,
          "Sketch seeds per k in the unseen-pair table (errors averaged over seeds).");
ABSL_FLAG(bool, accuracy, true, "Run the accuracy table (costs an exact reference solve).");
ABSL_FLAG(
    int, repeat, 1,
    "Run the core pipeline (not the pair table) this many times on the same pair table and print "
    "each stage's smallest and median CPU seconds over the runs (a shared machine's noise is "
    "one-sided).");
ABSL_FLAG(std::string, dump, "",
          "Write the timed run's per-pair and per-node outputs (raw float arrays: geff, hardness, "
          "uncertainty, "
          "propagated score, score, rate; node records; node rows; then rho) to this file, to "
          "compare two "
          "builds bit for bit (bench/compare_dumps.py).");

namespace graphsieve {
namespace {

double PeakRssMiB() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::stod(line.substr(6)) / 1024.0;
  }
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_maxrss / 1024.0;
}

// Process CPU seconds (user + system, all threads): a load-independent figure
// next to the wall clock on a shared machine.
double CpuSeconds() {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
         1e-6 * (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

double g_last_cpu = 0;
std::map<std::string, std::vector<double>> g_stage_cpu;  // every Row's CPU seconds, per stage

template <typename T>
void WriteArray(std::FILE* f, const std::vector<T>& v) {
  const uint64_t n = v.size();
  std::fwrite(&n, sizeof n, 1, f);
  std::fwrite(v.data(), sizeof(T), v.size(), f);
}

// --dump: the outputs that must not change when only the speed does.
bool DumpOutputs(const std::string& path, const PipelineResult& r) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return false;
  for (const std::vector<float>* v :
       {&r.geff, &r.hardness, &r.uncertainty, &r.propagated_score, &r.score, &r.rate}) {
    WriteArray(f, *v);
  }
  std::vector<float> records;
  for (const NodeRecord& n : r.nodes.records) {
    records.insert(records.end(), {float(n.component), float(n.degree), n.sum_uncertainty,
                                   n.sum_score, n.mean_rate});
  }
  WriteArray(f, records);
  WriteArray(f, r.nodes.sketch);
  std::fwrite(&r.model.rho, sizeof r.model.rho, 1, f);
  return std::fclose(f) == 0;
}

void Row(const std::string& stage, double seconds) {
  const double cpu = CpuSeconds();
  std::printf("  %-22s wall %7.2f s   cpu %7.2f s   peak RSS %6.0f MiB\n", stage.c_str(), seconds,
              cpu - g_last_cpu, PeakRssMiB());
  g_stage_cpu[stage].push_back(cpu - g_last_cpu);
  g_last_cpu = cpu;
  std::fflush(stdout);
}

double Median(std::vector<double> v) {
  std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
  return v[v.size() / 2];
}

using testing::Spearman;

struct Accuracy {
  double median_rel = 0, p90_rel = 0, spearman = 0;
};

Accuracy Compare(const std::vector<double>& est, const std::vector<double>& ref) {
  std::vector<double> rel(est.size());
  for (size_t i = 0; i < est.size(); ++i) rel[i] = std::abs(est[i] - ref[i]) / ref[i];
  Accuracy a;
  a.median_rel = Median(rel);
  std::nth_element(rel.begin(), rel.begin() + rel.size() * 9 / 10, rel.end());
  a.p90_rel = rel[rel.size() * 9 / 10];
  a.spearman = Spearman(est, ref);
  return a;
}

// R(u, v) = x_u − x_v with L x = e_u − e_v on the pair's component, tol 1e-10,
// 32 pairs per block PCG.
std::vector<double> PairSolves(const PairTable& pairs, const PositiveGraph& g,
                               const std::vector<size_t>& sample, int threads) {
  std::map<uint32_t, std::vector<size_t>> by_component;  // component -> positions in sample
  for (size_t i = 0; i < sample.size(); ++i)
    by_component[g.component[pairs.pair_user[sample[i]]]].push_back(i);
  std::vector<double> ref(sample.size());
  for (const auto& [c, idx] : by_component) {
    const ComponentLaplacian lap = ComponentLaplacian::Build(g, c);
    const size_t blocks = (idx.size() + 31) / 32;
    std::vector<BlockPcg> solvers(threads);
    maec_internal::ParallelTasks(blocks, threads, [&](int t, size_t b) {
      const size_t begin = b * 32, end = std::min(idx.size(), begin + 32);
      RowMatrix rhs = RowMatrix::Zero(lap.size(), end - begin), x;
      for (size_t j = begin; j < end; ++j) {
        const size_t p = sample[idx[j]];
        rhs(g.local_index[pairs.pair_user[p]], j - begin) = 1;
        rhs(g.local_index[g.num_users + pairs.pair_item[p]], j - begin) = -1;
      }
      solvers[t].Solve(lap, rhs, 1e-10, 100000, &x);
      for (size_t j = begin; j < end; ++j) {
        const size_t p = sample[idx[j]];
        ref[idx[j]] = x(g.local_index[pairs.pair_user[p]], j - begin) -
                      x(g.local_index[g.num_users + pairs.pair_item[p]], j - begin);
      }
    });
  }
  return ref;
}

// The sampled pairs as a pair table of their own (same user and item
// indices, sorted by user as PairIncidence requires): the sketch route then
// computes distances for these pairs only. `order` maps its pairs back to
// positions in `sample`.
PairTable SampleTable(const PairTable& pairs, const std::vector<size_t>& sample,
                      std::vector<size_t>* order) {
  order->resize(sample.size());
  for (size_t i = 0; i < sample.size(); ++i) (*order)[i] = i;
  std::sort(order->begin(), order->end(),
            [&](size_t a, size_t b) { return sample[a] < sample[b]; });
  PairTable t;
  t.user_ids = pairs.user_ids;
  t.item_ids = pairs.item_ids;
  for (size_t i : *order) {
    const size_t p = sample[i];
    t.pair_user.push_back(pairs.pair_user[p]);
    t.pair_item.push_back(pairs.pair_item[p]);
    t.label.push_back(pairs.label[p]);
    t.instances.push_back(pairs.instances[p]);
    t.negatives.push_back(pairs.negatives[p]);
  }
  return t;
}

double Quantile(std::vector<double> v, double q) {
  const size_t i = std::min(v.size() - 1, size_t(q * v.size()));
  std::nth_element(v.begin(), v.begin() + i, v.end());
  return v[i];
}

// The exact parts of the control variates y = M b, b = e_u − e_v, and the
// share of R they leave to the sketch: with T = D^-½AD^-½ and M the series
// D^-½(Σ_{j≤m} T^j)D^-½, bᵀ(2M − MLM)b = b̃ᵀ(Σ_{j≤2m+1} T^j)b̃, b̃ = D^-½b.
// m = 0: 1/d_u + 1/d_v − 2w/(d_u d_v). m = 1 adds the 2-walks
// Σ_{w∼u} 1/(d_w d_u²) (+ the same at v) and the 3-paths
// −2/(d_u d_v)·Σ_{u∼w∼x∼v} 1/(d_w d_x) (odd closed walks vanish: bipartite).
void PrintResidualShares(const PairTable& pairs, const PositiveGraph& g,
                         const std::vector<size_t>& sample, const std::vector<double>& ref) {
  std::vector<double> share0, share1;
  std::vector<uint8_t> mark(g.num_nodes(), 0);
  for (size_t i = 0; i < sample.size(); ++i) {
    const size_t p = sample[i];
    const uint32_t u = pairs.pair_user[p], v = g.num_users + pairs.pair_item[p];
    const double du = g.degree(u), dv = g.degree(v);
    const double m0 = 1 / du + 1 / dv - 2.0 * pairs.label[p] / (du * dv);
    double walks2 = 0, paths3 = 0;
    for (uint64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) {
      mark[g.neighbors[e]] = 1;
      walks2 += 1.0 / (g.degree(g.neighbors[e]) * dv * dv);
    }
    for (uint64_t e = g.offsets[u]; e < g.offsets[u + 1]; ++e) {
      const uint32_t w = g.neighbors[e];
      walks2 += 1.0 / (g.degree(w) * du * du);
      for (uint64_t f = g.offsets[w]; f < g.offsets[w + 1]; ++f) {
        const uint32_t x = g.neighbors[f];
        if (mark[x]) paths3 += 1.0 / (double(g.degree(w)) * g.degree(x));
      }
    }
    for (uint64_t e = g.offsets[v]; e < g.offsets[v + 1]; ++e) mark[g.neighbors[e]] = 0;
    const double m1 = m0 + walks2 - 2.0 * paths3 / (du * dv);
    share0.push_back((ref[i] - m0) / ref[i]);
    share1.push_back((ref[i] - m1) / ref[i]);
  }
  std::printf("residual share (R - exact part) / R on the sampled pairs:\n");
  for (const auto& [name, s] :
       {std::pair{"M = D^-1", &share0}, std::pair{"M = D^-1 + D^-1 A D^-1", &share1}}) {
    std::printf("  %-24s min %.4f  p10 %.4f  median %.4f  p90 %.4f  max %.4f  rms %.4f\n", name,
                Quantile(*s, 0), Quantile(*s, 0.1), Quantile(*s, 0.5), Quantile(*s, 0.9),
                Quantile(*s, 1.0), [&] {
                  double q = 0;
                  for (double x : *s) q += x * x;
                  return std::sqrt(q / s->size());
                }());
  }
}

// The pair sketch (sketch route, k columns) with and without the control
// variate on the sampled pairs, errors averaged over `seeds` sketch seeds.
absl::Status PrintControlVariateTable(const PairTable& pairs, const PositiveGraph& g,
                                      const std::vector<size_t>& sample,
                                      const std::vector<double>& ref, uint64_t seed, int threads) {
  std::vector<size_t> order;
  const PairTable sub = SampleTable(pairs, sample, &order);
  std::printf("%-30s %6s %9s %12s %12s %10s %10s\n", "pair sketch", "seeds", "cpu s", "median rel",
              "p90 rel", "Spearman", "mean bias");
  for (absl::string_view kv : absl::StrSplit(absl::GetFlag(FLAGS_cv_ks), ',', absl::SkipEmpty())) {
    int k = 0;
    if (!absl::SimpleAtoi(kv, &k) || k < 1) return absl::InvalidArgumentError("--cv_ks: bad value");
    for (bool cv : {false, true}) {
      Accuracy sum;
      double bias = 0, cpu = 0;
      const int seeds = absl::GetFlag(FLAGS_cv_seeds);
      for (int s = 0; s < seeds; ++s) {
        ResistanceOptions so;
        so.method = ResistanceMethod::kSketch;
        so.sketch_dim = k;
        so.block_columns = 32;
        so.pair_sketch_control_variate = cv;
        so.threads = threads;
        so.seed = seed + 1000 * s;
        const double c0 = CpuSeconds();
        absl::StatusOr<ResistanceResult> sk = ComputeResistance(sub, g, so);
        if (!sk.ok()) return sk.status();
        cpu += CpuSeconds() - c0;
        std::vector<double> est(sample.size());
        for (size_t j = 0; j < order.size(); ++j) est[order[j]] = sk->resistance[j];
        const Accuracy a = Compare(est, ref);
        sum.median_rel += a.median_rel / seeds;
        sum.p90_rel += a.p90_rel / seeds;
        sum.spearman += a.spearman / seeds;
        for (size_t j = 0; j < est.size(); ++j)
          bias += (est[j] - ref[j]) / ref[j] / double(est.size() * seeds);
      }
      std::printf("%-30s %6d %9.2f %12.2e %12.2e %10.6f %10.2e\n",
                  (std::string(cv ? "control variate" : "plain") + " k=" + std::string(kv)).c_str(),
                  seeds, cpu, sum.median_rel, sum.p90_rel, sum.spearman, bias);
    }
  }
  return absl::OkStatus();
}

// `n` held-out pairs: uniform (user, item) in the same component of the
// positive graph and absent from the log, as a pair table of their own.
PairTable HeldOutPairs(const PairTable& pairs, const PositiveGraph& g, size_t n, uint64_t seed) {
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (size_t p = 0; p < pairs.num_pairs(); ++p)
    seen.insert({pairs.pair_user[p], pairs.pair_item[p]});
  std::mt19937_64 rng(seed);
  std::set<std::pair<uint32_t, uint32_t>> picked;
  for (size_t tries = 0; picked.size() < n && tries < 1000 * n; ++tries) {
    const uint32_t u = uint32_t(rng() % g.num_users), i = uint32_t(rng() % g.num_items);
    if (g.degree(u) == 0 || g.component[u] != g.component[g.num_users + i] || seen.count({u, i}))
      continue;
    picked.insert({u, i});
  }
  PairTable t;
  t.user_ids = pairs.user_ids;
  t.item_ids = pairs.item_ids;
  for (const auto& [u, i] : picked) {  // sorted by user, as PairIncidence requires
    t.pair_user.push_back(u);
    t.pair_item.push_back(i);
    t.label.push_back(0);
    t.instances.push_back(1);
    t.negatives.push_back(1);
  }
  return t;
}

// Unseen pairs as the server scores them: ‖row_u − row_v‖² over every stored
// float of the node rows (unseen.cc ScoreUnseenPair), plain rows vs control-
// variate rows, against direct pair solves (tol 1e-10).
absl::Status PrintUnseenTable(const PairTable& pairs, const PositiveGraph& g,
                              const PipelineOptions& po) {
  const PairTable held =
      HeldOutPairs(pairs, g, size_t(absl::GetFlag(FLAGS_unseen_pairs)), po.seed + 7);
  if (held.num_pairs() == 0)
    return absl::FailedPreconditionError("--unseen_pairs: no held-out pair found");
  std::vector<size_t> all(held.num_pairs());
  for (size_t i = 0; i < all.size(); ++i) all[i] = i;
  const absl::Time t0 = absl::Now();
  const std::vector<double> ref = PairSolves(held, g, all, po.threads);
  std::printf(
      "\nunseen pairs: %zu held-out (user, item) pairs inside components, not in the log; "
      "reference = "
      "direct pair solves at tol 1e-10 (%.2f s)\n",
      held.num_pairs(), absl::ToDoubleSeconds(absl::Now() - t0));
  std::printf("%-30s %6s %9s %12s %12s %10s\n", "node rows", "seeds", "cpu s", "median rel",
              "p90 rel", "Spearman");
  for (absl::string_view kv :
       absl::StrSplit(absl::GetFlag(FLAGS_unseen_ks), ',', absl::SkipEmpty())) {
    int k = 0;
    if (!absl::SimpleAtoi(kv, &k) || k < 1)
      return absl::InvalidArgumentError("--unseen_ks: bad value");
    for (bool cv : {false, true}) {
      Accuracy sum;
      double cpu = 0;
      const int seeds = absl::GetFlag(FLAGS_unseen_seeds);
      for (int s = 0; s < seeds; ++s) {
        ResistanceOptions so = po.Resistance();  // the builder's route, node rows only
        so.sketch_dim = k;
        so.unseen_control_variate = cv;
        so.compute_pairs = false;
        so.seed = po.seed + 1000 * s;
        const double c0 = CpuSeconds();
        absl::StatusOr<ResistanceResult> rows = ComputeResistance(pairs, g, so);
        if (!rows.ok()) return rows.status();
        cpu += CpuSeconds() - c0;
        const size_t dim = size_t(rows->sketch_dim);
        std::vector<double> est(held.num_pairs());
        for (size_t i = 0; i < est.size(); ++i) {
          const float* a = rows->sketch.data() + size_t(held.pair_user[i]) * dim;
          const float* b = rows->sketch.data() + size_t(g.num_users + held.pair_item[i]) * dim;
          double r = 0;
          for (size_t j = 0; j < dim; ++j) r += double(a[j] - b[j]) * double(a[j] - b[j]);
          est[i] = r;
        }
        const Accuracy a = Compare(est, ref);
        sum.median_rel += a.median_rel / seeds;
        sum.p90_rel += a.p90_rel / seeds;
        sum.spearman += a.spearman / seeds;
      }
      std::printf("%-30s %6d %9.2f %12.2e %12.2e %10.6f\n",
                  (std::string(cv ? "control variate" : "plain") + " k=" + std::string(kv)).c_str(),
                  seeds, cpu, sum.median_rel, sum.p90_rel, sum.spearman);
    }
  }
  return absl::OkStatus();
}

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "graphsieve-bench-core: %s\n", std::string(s.message()).c_str());
  return 1;
}

int Main() {
  const int threads = absl::GetFlag(FLAGS_threads);
  std::printf("graphsieve-bench-core (threads=%d)\n", threads);
  absl::Time t0 = absl::Now();
  ImpressionLog log;
  if (!absl::GetFlag(FLAGS_input).empty()) {
    LogReaderOptions ro;
    absl::StatusOr<LabelRule> rule = LabelRule::Parse(absl::GetFlag(FLAGS_label));
    if (!rule.ok()) return Fail(rule.status());
    ro.label = *rule;
    ro.keep_id_names = false;
    if (absl::Status s = ReadImpressionLog(absl::GetFlag(FLAGS_input), ro, &log); !s.ok())
      return Fail(s);
  } else {
    absl::StatusOr<GeneratorOptions> go =
        GeneratorPreset("kuairec", absl::GetFlag(FLAGS_scale), absl::GetFlag(FLAGS_nodes_scale),
                        absl::GetFlag(FLAGS_users_scale));
    if (!go.ok()) return Fail(go.status());
    go->seed = absl::GetFlag(FLAGS_seed);
    absl::StatusOr<ImpressionLog> gen = GenerateImpressionLog(*go);
    if (!gen.ok()) return Fail(gen.status());
    log = std::move(*gen);
  }
  const double t_input = absl::ToDoubleSeconds(absl::Now() - t0);

  // ---- The timed core pipeline ----
  std::printf("load average at start: %s",
              [] {
                std::ifstream in("/proc/loadavg");
                std::string l;
                std::getline(in, l);
                return l + "\n";
              }()
                  .c_str());
  g_last_cpu = CpuSeconds();
  const double cpu_start = g_last_cpu;
  const absl::Time start = absl::Now();
  absl::StatusOr<PairTable> pairs = BuildPairTable(log, threads);
  if (!pairs.ok()) return Fail(pairs.status());
  const double t_pairs = absl::ToDoubleSeconds(absl::Now() - start);
  PipelineOptions po;
  po.threads = threads;
  po.seed = absl::GetFlag(FLAGS_pipeline_seed);
  absl::StatusOr<ResistanceMethod> rm = ParseResistanceMethod(absl::GetFlag(FLAGS_resistance));
  if (!rm.ok()) return Fail(rm.status());
  po.resistance = *rm;
  po.solver_tolerance = absl::GetFlag(FLAGS_solver_tolerance);
  po.block_columns = absl::GetFlag(FLAGS_block_columns);
  po.sketch_dim = absl::GetFlag(FLAGS_sketch_dim);
  if (absl::Status s = po.Validate(); !s.ok()) return Fail(s);
  std::printf(
      "input: %zu instances, %zu pairs, %zu users, %zu items (%s %.2f s, not part of the core)\n",
      log.size(), pairs->num_pairs(), pairs->num_users(), pairs->num_items(),
      absl::GetFlag(FLAGS_input).empty() ? "generated in" : "read in", t_input);
  std::printf("stages (cumulative peak RSS of the process, includes the log itself):\n");
  Row("pair_table", t_pairs);
  po.progress = [&, last = absl::Now()](const std::string& stage, double) mutable {
    const absl::Time now = absl::Now();
    Row(stage, absl::ToDoubleSeconds(now - last));
    last = now;
  };
  absl::StatusOr<PipelineResult> res = RunPipeline(*pairs, po);
  if (!res.ok()) return Fail(res.status());
  const double total = absl::ToDoubleSeconds(absl::Now() - start);
  std::printf(
      "  %-22s wall %7.2f s   cpu %7.2f s   peak RSS %6.0f MiB   (targets: wall <= 15 s, <= 4096 "
      "MiB)\n",
      "TOTAL core pipeline", total, CpuSeconds() - cpu_start, PeakRssMiB());
  std::printf("positive pairs %u, components %u, route of the largest: %s, alpha achieved %.12f\n",
              res->positive_pairs, res->num_components, res->resistance_route.c_str(),
              res->achieved_negative_mean_rate);
  std::printf("propagation iterations: uncertainty %d, score %d\n", res->uncertainty_iterations,
              res->score_iterations);
  for (int run = 1; run < absl::GetFlag(FLAGS_repeat); ++run) {
    std::printf("run %d of %d:\n", run + 1, absl::GetFlag(FLAGS_repeat));
    g_last_cpu = CpuSeconds();
    const double run_start = g_last_cpu;
    if (absl::StatusOr<PipelineResult> again = RunPipeline(*pairs, po); !again.ok())
      return Fail(again.status());
    g_stage_cpu["core pipeline, runs 2..N"].push_back(CpuSeconds() - run_start);
  }
  if (absl::GetFlag(FLAGS_repeat) > 1) {
    std::printf("CPU s per stage over %d runs: min / median\n", absl::GetFlag(FLAGS_repeat));
    for (auto& [stage, v] : g_stage_cpu) {
      std::sort(v.begin(), v.end());
      std::printf("  %-30s %7.2f / %7.2f\n", stage.c_str(), v.front(), v[v.size() / 2]);
    }
  }
  if (const std::string dump = absl::GetFlag(FLAGS_dump);
      !dump.empty() && !DumpOutputs(dump, *res)) {
    return Fail(absl::UnavailableError("cannot write --dump " + dump));
  }
  for (const SolveSummary& s : res->solves) {
    std::printf(
        "solve: component %u, %u nodes, %s, %d rhs, max %d iterations, max rel. residual %.2e, %s "
        "(%s)\n",
        s.component, s.nodes, s.method.c_str(), s.right_hand_sides, s.max_iterations,
        s.max_relative_residual, s.converged ? "converged" : "NOT converged", s.message.c_str());
  }
  if (!absl::GetFlag(FLAGS_accuracy) && absl::GetFlag(FLAGS_unseen_pairs) == 0) return 0;
  absl::StatusOr<PositiveGraph> graph = BuildPositiveGraph(*pairs);
  if (!graph.ok()) return Fail(graph.status());
  if (absl::GetFlag(FLAGS_unseen_pairs) > 0) {
    if (absl::Status s = PrintUnseenTable(*pairs, *graph, po); !s.ok()) return Fail(s);
  }
  if (!absl::GetFlag(FLAGS_accuracy)) return 0;

  // ---- Accuracy of R_eff on sampled pairs ----
  std::vector<size_t> inside;
  for (size_t p = 0; p < pairs->num_pairs(); ++p) {
    if (graph->component[pairs->pair_user[p]] ==
        graph->component[graph->num_users + pairs->pair_item[p]]) {
      inside.push_back(p);
    }
  }
  std::mt19937_64 rng(po.seed);
  std::shuffle(inside.begin(), inside.end(), rng);
  inside.resize(std::min<size_t>(inside.size(), absl::GetFlag(FLAGS_sample)));
  if (inside.empty()) return Fail(absl::FailedPreconditionError("no pair lies inside a component"));

  absl::Time ts = absl::Now();
  std::vector<double> ref(inside.size());
  const std::string reference = absl::GetFlag(FLAGS_reference);
  if (reference == "pairs") {
    ref = PairSolves(*pairs, *graph, inside, threads);
  } else if (reference == "one-sided") {
    ResistanceOptions exact;
    exact.method = ResistanceMethod::kOneSided;
    exact.solver_tolerance = 1e-10;
    exact.threads = threads;
    exact.sketch_dim = 1;
    absl::StatusOr<ResistanceResult> ref_all = ComputeResistance(*pairs, *graph, exact);
    if (!ref_all.ok()) return Fail(ref_all.status());
    for (size_t i = 0; i < inside.size(); ++i) ref[i] = ref_all->resistance[inside[i]];
  } else {
    return Fail(absl::InvalidArgumentError("--reference must be one-sided or pairs"));
  }
  std::printf(
      "\naccuracy on %zu sampled pairs inside components; reference = %s at tol 1e-10 (%.2f s)\n",
      inside.size(), reference == "pairs" ? "direct pair solves" : "one-sided",
      absl::ToDoubleSeconds(absl::Now() - ts));

  // Independent check of the reference: direct solves L x = e_u − e_v.
  {
    const int checks = std::min<int>(16, int(inside.size()));
    double worst = 0;
    for (int i = 0; i < checks; ++i) {
      const size_t p = inside[i];
      const uint32_t u = pairs->pair_user[p], v = graph->num_users + pairs->pair_item[p];
      ComponentLaplacian lap = ComponentLaplacian::Build(*graph, graph->component[u]);
      RowMatrix rhs = RowMatrix::Zero(lap.size(), 1), x;
      rhs(graph->local_index[u], 0) = 1;
      rhs(graph->local_index[v], 0) = -1;
      BlockPcg pcg;
      pcg.Solve(lap, rhs, 1e-12, 10000, &x);
      const double r = x(graph->local_index[u], 0) - x(graph->local_index[v], 0);
      worst = std::max(worst, std::abs(r - ref[i]) / r);
    }
    std::printf("reference vs %d direct pair solves (tol 1e-12): max rel. deviation %.2e\n", checks,
                worst);
  }
  PrintResidualShares(*pairs, *graph, inside, ref);
  if (!absl::GetFlag(FLAGS_cv_ks).empty()) {
    if (absl::Status s = PrintControlVariateTable(*pairs, *graph, inside, ref, po.seed, threads);
        !s.ok()) {
      return Fail(s);
    }
  }
  std::printf("%-26s %9s %12s %12s %10s\n", "route", "seconds", "median rel", "p90 rel",
              "Spearman");
  {
    std::vector<double> est(inside.size());
    for (size_t i = 0; i < inside.size(); ++i) est[i] = 1.0 / res->geff[inside[i]];
    const Accuracy a = Compare(est, ref);
    double route_seconds = 0;
    for (const StageTiming& st : res->timings)
      route_seconds += st.stage == "resistance" ? st.seconds : 0;
    std::printf("%-26s %9.2f %12.2e %12.2e %10.6f\n",
                ("default (" + res->resistance_route + ")").c_str(), route_seconds, a.median_rel,
                a.p90_rel, a.spearman);
  }
  for (absl::string_view kv : absl::StrSplit(absl::GetFlag(FLAGS_ks), ',', absl::SkipEmpty())) {
    int k = 0;
    if (!absl::SimpleAtoi(kv, &k) || k < 1)
      return Fail(absl::InvalidArgumentError("--ks: bad value"));
    ResistanceOptions so;
    so.method = ResistanceMethod::kSketch;
    so.sketch_dim = k;
    so.compute_pairs = false;
    so.unseen_control_variate = false;  // the plain rows: ‖Z_u − Z_v‖²
    so.threads = threads;
    so.seed = po.seed;
    ts = absl::Now();
    absl::StatusOr<ResistanceResult> sk = ComputeResistance(*pairs, *graph, so);
    if (!sk.ok()) return Fail(sk.status());
    const double secs = absl::ToDoubleSeconds(absl::Now() - ts);
    std::vector<double> est(inside.size());
    for (size_t i = 0; i < inside.size(); ++i) {
      const size_t p = inside[i];
      const float* a = sk->sketch.data() + size_t(pairs->pair_user[p]) * k;
      const float* b = sk->sketch.data() + size_t(graph->num_users + pairs->pair_item[p]) * k;
      double r = 0;
      for (int j = 0; j < k; ++j) r += double(a[j] - b[j]) * double(a[j] - b[j]);
      est[i] = r;
    }
    const Accuracy a = Compare(est, ref);
    std::printf("%-26s %9.2f %12.2e %12.2e %10.6f   (JL median prediction %.2e)\n",
                ("sketch k=" + std::string(kv)).c_str(), secs, a.median_rel, a.p90_rel, a.spearman,
                0.6745 * std::sqrt(2.0 / k));
  }
  return 0;
}

}  // namespace
}  // namespace graphsieve

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Benchmarks the MA-EC core pipeline (pair table, graph, effective resistance, propagation, "
      "rates)\n"
      "on a kuairec-shaped log and prints seconds and peak RSS per stage, then the R_eff accuracy "
      "of\n"
      "the sketch (k from --ks) and of the default route against an exact one-sided reference.\n"
      "Usage: graphsieve-bench-core [--input FILE --label RULE] [--threads 2] [--ks "
      "32,64,128,256]");
  absl::ParseCommandLine(argc, argv);
  return graphsieve::Main();
}
