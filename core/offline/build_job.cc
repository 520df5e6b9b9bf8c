// The build job's driver (build_job.h): the stage list over a communicator.
// The stages' parts live next to it: build_validation.cc (options, gates),
// build_manifest.cc, build_publish.cc (write, publish), dist_exchange.cc
// (data movements between ranks), dist_parts.cc (per-rank parts).
#include "core/offline/build_job.h"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "core/maec/conductance.h"
#include "core/model/node_default_fit.h"
#include "core/offline/build_pilot.h"
#include "core/offline/build_stage.h"
#include "core/offline/build_stages.h"
#include "core/offline/dist_exchange.h"
#include "core/offline/dist_parts.h"
#include "core/offline/export_csv.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_store.h"

namespace graphsieve {
namespace build_internal {

uint64_t FileSizeOrZero(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

void ReserveForInputsLeft(uint64_t disk_bytes_done, uint64_t disk_bytes_left, ImpressionLog* log) {
  if (disk_bytes_done == 0 || disk_bytes_left == 0 || log->size() == 0) return;
  const double rows_per_byte =
      static_cast<double>(log->size()) / static_cast<double>(disk_bytes_done);
  const size_t expect = log->size() + static_cast<size_t>(static_cast<double>(disk_bytes_left) *
                                                          rows_per_byte * 1.03);
  if (expect <= log->user_ids.capacity()) return;
  log->user_ids.reserve(expect);
  log->item_ids.reserve(expect);
  log->labels.reserve(expect);
  if (!log->pilot_scores.empty()) log->pilot_scores.reserve(expect);
}

void RecordPipelineResult(const PairTable& pairs, const PipelineResult& result,
                          BuildReport* report) {
  report->instances = pairs.total_instances;
  report->negative_instances = pairs.total_negatives;
  report->pairs = pairs.num_pairs();
  report->positive_pairs = result.positive_pairs;
  report->users = pairs.num_users();
  report->items = pairs.num_items();
  report->components = result.num_components;
  report->achieved_negative_mean_rate = result.achieved_negative_mean_rate;
  report->resistance_route = result.resistance_route;
  if (!result.uncertainty_converged || !result.score_converged) {
    report->warnings.push_back(absl::StrCat(
        "propagation stopped at --propagation_max_iterations (uncertainty ",
        result.uncertainty_iterations, ", score ", result.score_iterations, " iterations)"));
  }
}

}  // namespace build_internal

uint64_t PeakRssBytes() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  // GRAPHSIEVE_DEBUG_RSS resets the kernel's peak at each stage (rss_probe.h).
  return std::max<uint64_t>(static_cast<uint64_t>(ru.ru_maxrss) * 1024, ProbedPeakRssBytes());
}

namespace {

using build_internal::CpuSeconds;
using build_internal::FileSizeOrZero;
using build_internal::LocalStage;
using build_internal::Stage;
using dist_internal::GatheredPairs;
using Clock = std::chrono::steady_clock;

// Rank r parses the inputs k with k mod N == r in order, reporting progress
// by bytes; errors name the file.
absl::Status ReadMyFiles(const BuildOptions& options, const Communicator& comm,
                         const BuildObserver& obs, ImpressionLog* log) {
  uint64_t left = 0, done = 0;
  for (size_t k = comm.rank(); k < options.inputs.size(); k += comm.size()) {
    left += FileSizeOrZero(options.inputs[k]);
  }
  const uint64_t total = left;
  for (size_t k = comm.rank(); k < options.inputs.size(); k += comm.size()) {
    const std::string& f = options.inputs[k];
    LogReaderOptions ro = options.reader;
    // --max_bad_rows is a budget for the whole log, not per file: what the
    // files before this one skipped is spent (across ranks: ReadStage).
    if (ro.max_bad_rows > 0) {
      ro.max_bad_rows -= std::min<int64_t>(ro.max_bad_rows, log->bad_rows_skipped);
    }
    ro.progress = [&](uint64_t bytes, uint64_t rows) {
      if (obs.progress && total > 0) {
        obs.progress("read", std::min(0.99, double(done + bytes) / total), log->rows_read + rows);
      }
    };
    absl::Status s = ReadImpressionLog(f, ro, log);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("--input ", f, ": ", s.message()));
    const uint64_t size = std::min(left, FileSizeOrZero(f));
    done += size, left -= size;
    build_internal::ReserveForInputsLeft(done, left, log);
  }
  return absl::OkStatus();
}

// This rank's inputs (k with k mod N == rank) digested (size + XXH3-64, for
// the manifest) on a thread of their own, started with the parse so the two
// overlap. Join() before reading the results.
class RankDigester {
 public:
  RankDigester(const BuildOptions& options, const Communicator& comm)
      : options_(options), rank_(comm.rank()), size_(comm.size()), thread_([this] { Run(); }) {}
  ~RankDigester() { Join(); }
  void Join() {
    if (thread_.joinable()) thread_.join();
  }
  // REQUIRES: Join(). Records {k, size, xxh3} of this rank's files, or the
  // first failure naming the flag.
  const std::string& records() const { return records_; }
  const absl::Status& status() const { return status_; }

 private:
  void Run() {
    for (size_t k = rank_; k < options_.inputs.size(); k += size_) {
      auto d = snapshot::DigestFile(options_.inputs[k]);
      if (!d.ok()) {
        status_ = absl::Status(d.status().code(), absl::StrCat("--input: ", d.status().message()));
        return;
      }
      const uint64_t rec[3] = {k, d->size_bytes, d->xxh3};
      records_.append(reinterpret_cast<const char*>(rec), sizeof rec);
    }
  }
  const BuildOptions& options_;
  const size_t rank_, size_;
  std::string records_;
  absl::Status status_;
  std::thread thread_;
};

// Every input's size and XXH3-64, in --input order, on rank 0, from every
// rank's RankDigester.
absl::Status GatherDigests(const BuildOptions& options, Communicator& comm,
                           const RankDigester& digester,
                           std::vector<snapshot::InputFileInfo>* infos) {
  absl::Status status = AgreeOnStatus(comm, digester.status());
  if (!status.ok()) return status;
  const std::vector<std::string> all = comm.GatherToRoot(digester.records());
  infos->assign(options.inputs.size(), {});
  for (const std::string& part : all) {
    for (size_t off = 0; off + 24 <= part.size(); off += 24) {
      uint64_t rec[3];
      std::memcpy(rec, part.data() + off, sizeof rec);
      (*infos)[rec[0]] = {options.inputs[rec[0]], rec[1], rec[2]};
    }
  }
  return absl::OkStatus();
}

// Global row counters (for the manifest and the non-empty gate).
void SumLogCounters(Communicator& comm, ImpressionLog* counters, uint64_t* usable_rows) {
  uint64_t c[4] = {counters->rows_read, counters->bad_rows_skipped, counters->bytes_read,
                   *usable_rows};
  comm.AllReduceSum(absl::MakeSpan(c, 4));
  counters->rows_read = c[0];
  counters->bad_rows_skipped = c[1];
  counters->bytes_read = c[2];
  *usable_rows = c[3];
}

// The first skipped rows' messages of every rank, in rank order, on rank 0
// (a collective: every rank calls it).
void GatherBadRowExamples(Communicator& comm, const ImpressionLog& log, BuildReport* report) {
  std::string mine;
  for (const std::string& m : log.bad_row_messages) absl::StrAppend(&mine, m, "\n");
  const std::vector<std::string> all = comm.GatherToRoot(mine);
  for (const std::string& part : all) {
    for (absl::string_view m : absl::StrSplit(part, '\n', absl::SkipEmpty())) {
      if (report->bad_row_examples.size() < BuildReport::kMaxBadRowExamples) {
        report->bad_row_examples.emplace_back(m);
      }
    }
  }
}

// Stage "read": this rank's files parsed and digested; `names` gets the
// global row counters and, for --export, every rank's id names on rank 0.
absl::Status ReadStage(const BuildOptions& options, const BuildObserver& obs, Communicator& comm,
                       BuildReport* report, ImpressionLog* log, ImpressionLog* names,
                       std::vector<snapshot::InputFileInfo>* inputs) {
  RankDigester digester(options, comm);
  absl::Status s = Stage(comm, obs, report, "read", [&] {
    absl::Status parsed = ReadMyFiles(options, comm, obs, log);
    digester.Join();
    return parsed;
  });
  if (!s.ok()) return s;
  if (s = GatherDigests(options, comm, digester, inputs); !s.ok()) return s;
  uint64_t usable = log->size();
  names->rows_read = log->rows_read, names->bad_rows_skipped = log->bad_rows_skipped;
  names->bytes_read = log->bytes_read;
  SumLogCounters(comm, names, &usable);
  report->rows_read = names->rows_read;
  report->bad_rows_skipped = names->bad_rows_skipped;
  // Each rank kept within the budget on its own; together they may not.
  if (names->bad_rows_skipped > static_cast<uint64_t>(options.reader.max_bad_rows)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--max_bad_rows=", options.reader.max_bad_rows, ": the log has ", names->bad_rows_skipped,
        " bad rows over its ", options.inputs.size(),
        options.inputs.size() == 1 ? " file" : " files", " (read by ", comm.size(),
        comm.size() == 1 ? " process" : " ranks", "); the limit counts the whole log"));
  }
  if (names->bad_rows_skipped > 0) GatherBadRowExamples(comm, *log, report);
  for (const auto& in : *inputs) report->input_bytes += in.size_bytes;
  if (usable == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("gate non-empty failed: the input has no usable rows (", names->rows_read,
                     " rows read, ", names->bad_rows_skipped, " skipped)"));
  }
  if (!options.export_csv.empty()) dist_internal::RouteNames(comm, log, names);
  return absl::OkStatus();
}

// Stage "export" on several ranks (export_csv.h): the gates over every
// rank's pairs, then each rank writes its part of the CSV with its users'
// names, then rank 0 joins the parts. Nothing of the export goes through
// rank 0's memory. A failure anywhere removes the parts.
absl::Status ExportPartsStage(const BuildOptions& options, const BuildObserver& obs,
                              Communicator& comm, const PairTable& pairs,
                              const PipelineResult& result, const ImpressionLog& names,
                              BuildReport* report) {
  const std::string& path = options.export_csv;
  absl::Status s = Stage(comm, obs, report, "export", [&]() -> absl::Status {
    uint64_t totals[3];
    absl::Status gates = build_internal::CheckGatesOverRanks(
        comm, pairs, result, options.pipeline.alpha, options.gate_tolerance, totals);
    if (!gates.ok()) return gates;  // the same status on every rank
    absl::Status mine =
        WriteExportCsv(ExportPartPath(path, comm.rank(), comm.size()), pairs, result,
                       names.user_names, names.item_names, /*header=*/comm.rank() == 0);
    absl::Status all = AgreeOnStatus(comm, mine);
    if (!all.ok() || comm.rank() != 0) return all;
    return JoinExportParts(path, comm.size());
  });
  if (!s.ok() && comm.rank() == 0) RemoveExportParts(path, comm.size());
  return s;
}

// Stage "pipeline" (docs/DESIGN.md §2): the conductance on the positive graph
// of every rank's pairs, then the method's half, its collectives over `comm`.
absl::Status PipelineStage(const BuildOptions& options, const BuildObserver& obs,
                           Communicator& comm, const PairTable& pairs, BuildReport* report,
                           PipelineResult* result) {
  const bool ranks = comm.size() > 1;
  return Stage(comm, obs, report, "pipeline", [&]() -> absl::Status {
    PipelineOptions po = options.pipeline;
    po.comm = ranks ? &comm : nullptr;
    // Without --export the write needs the rates only (docs/SCALING.md
    // "Memory per impression").
    po.per_pair_details = !options.export_csv.empty();
    po.progress = [&](const std::string& stage, double f) {
      if (obs.progress) obs.progress("pipeline: " + stage, f, 0);
    };
    absl::StatusOr<ConductanceResult> cond =
        ranks ? ComputeConductanceOnGraph(pairs, dist_internal::AllGatherPositiveGraph(comm, pairs),
                                          po)
              : ComputeConductance(pairs, po);
    if (!cond.ok()) return cond.status();
    absl::StatusOr<PipelineResult> r = RunPipelineWithConductance(pairs, std::move(*cond), po);
    if (!r.ok()) return r.status();
    r->timings.insert(r->timings.begin(), cond->timings.begin(), cond->timings.end());
    *result = std::move(*r);
    return absl::OkStatus();
  });
}

// Rank 0: gates, export, write; then the agreement every rank waits in
// before CURRENT flips; then a final agreement on the publish's outcome.
absl::Status FinishOnRoot(const BuildOptions& options, const BuildObserver& obs, Communicator& comm,
                          SnapshotStore* store, absl::Time created, const GatheredPairs& g,
                          const ImpressionLog& names,
                          const std::vector<snapshot::InputFileInfo>& inputs, BuildReport* report) {
  build_internal::RecordPipelineResult(g.pairs, g.result, report);
  absl::Status s =
      build_internal::GatesAndExportStage(options, obs, g.pairs, g.result, names, report);
  bool agreed = false;
  if (s.ok() && !options.dry_run) {
    s = build_internal::WriteAndPublishStage(options, obs, store, created, g.pairs, g.result, names,
                                             inputs, report, [&] {
                                               agreed = true;
                                               return AgreeOnStatus(comm, absl::OkStatus());
                                             });
  }
  if (!agreed) {  // failed before the write finished, or a dry run
    absl::Status pre = AgreeOnStatus(comm, s);
    if (!pre.ok()) return pre;
  }
  return AgreeOnStatus(comm, s);
}

absl::Status FinishOnOtherRank(Communicator& comm) {
  absl::Status pre = AgreeOnStatus(comm, absl::OkStatus());
  if (!pre.ok()) return pre;
  return AgreeOnStatus(comm, absl::OkStatus());
}

// Per-rank wall, CPU, peak RSS and share of the pairs, gathered to rank 0.
nlohmann::json RankTable(Communicator& comm, Clock::time_point t0, double cpu0, uint64_t pairs,
                         uint64_t instances) {
  const double mine[6] = {
      double(comm.rank()), double(pairs),
      double(instances),   std::chrono::duration<double>(Clock::now() - t0).count(),
      CpuSeconds() - cpu0, double(PeakRssBytes())};
  const std::vector<std::string> all =
      comm.GatherToRoot(std::string(reinterpret_cast<const char*>(mine), sizeof mine));
  nlohmann::json table = nlohmann::json::array();
  for (const std::string& part : all) {
    double v[6];
    std::memcpy(v, part.data(), sizeof v);
    table.push_back({{"rank", int(v[0])},
                     {"pairs", uint64_t(v[1])},
                     {"instances", uint64_t(v[2])},
                     {"wall_seconds", v[3]},
                     {"cpu_seconds", v[4]},
                     {"peak_rss_bytes", uint64_t(v[5])}});
  }
  return table;
}

// On several ranks, rank 0's report gets the per-rank resource table.
void AddRankTable(Communicator& comm, Clock::time_point t0, double cpu0, uint64_t pairs,
                  uint64_t instances, BuildReport* report) {
  if (comm.size() == 1) return;
  nlohmann::json ranks = RankTable(comm, t0, cpu0, pairs, instances);
  if (comm.rank() == 0) report->ranks = std::move(ranks);
}

}  // namespace

absl::StatusOr<BuildReport> RunBuild(const BuildOptions& options, const BuildObserver& obs,
                                     Communicator& comm) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  const Clock::time_point t0 = Clock::now();
  const double cpu0 = CpuSeconds();
  const bool root = comm.rank() == 0;
  BuildReport report;
  const absl::Time created = absl::Now();
  // The root first: a bad --snapshot_root fails before minutes of work.
  std::unique_ptr<SnapshotStore> store;
  absl::Status s = Stage(comm, obs, &report, "open", [&]() -> absl::Status {
    if (!root || options.dry_run) return absl::OkStatus();
    auto st = build_internal::OpenStore(options.snapshot_root);
    if (!st.ok()) return st.status();
    store = std::move(*st);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;

  ImpressionLog log;
  ImpressionLog names;  // counters (global) and, for --export, every rank's id names
  std::vector<snapshot::InputFileInfo> inputs;
  if (s = ReadStage(options, obs, comm, &report, &log, &names, &inputs); !s.ok()) return s;

  PairTable pairs;
  s = Stage(comm, obs, &report, "pair_table", [&] {
    dist_internal::ExchangeRowsByUser(comm, &log);
    return dist_internal::BuildGlobalPairTable(comm, options.pipeline.threads, &log, &pairs);
  });
  if (!s.ok()) return s;

  PilotFactors pilot;
  if (build_internal::UsesBuiltInPilot(options)) {
    s = Stage(comm, obs, &report, "pilot", [&] {
      return build_internal::FitBuiltInPilot(options, comm, &pairs, &pilot,
                                             &report.pilot_cross_fitted_log_loss);
    });
    if (!s.ok()) return s;
    report.built_in_pilot = true;
    const std::string hint = build_internal::BuiltInPilotWarning(options);
    if (root && !hint.empty()) report.warnings.push_back(hint);
  }

  PipelineResult result;
  s = PipelineStage(options, obs, comm, pairs, &report, &result);
  ::malloc_trim(0);  // the pipeline's freed scratch back to the system before the gather and write
  if (!s.ok()) return s;
  if (report.built_in_pilot) build_internal::AttachPilotRows(pilot, &result);

  const uint64_t my_pairs = pairs.num_pairs(), my_instances = pairs.total_instances;
  // On several ranks the export is written in per-rank parts now, so the
  // rest of the build runs as without --export (no export columns gathered).
  BuildOptions rest = options;
  if (comm.size() > 1 && !options.export_csv.empty()) {
    s = ExportPartsStage(options, obs, comm, pairs, result, names, &report);
    if (!s.ok()) return s;
    ImpressionLog counters;  // the names are no longer needed: keep the row counters only
    counters.rows_read = names.rows_read, counters.bad_rows_skipped = names.bad_rows_skipped;
    counters.bytes_read = names.bytes_read;
    names = std::move(counters);
    rest.export_csv.clear();
  }
  if (dist_internal::RanksWriteParts(rest, comm)) {  // no gather: each rank writes its parts
    s = dist_internal::WritePartsOnEveryRank(rest, obs, comm, store.get(), created, &pairs, &result,
                                             names, inputs, &report);
    if (!s.ok()) return s;
    AddRankTable(comm, t0, cpu0, my_pairs, my_instances, &report);
    return report;
  }
  GatheredPairs gathered;
  s = Stage(comm, obs, &report, "gather", [&] {
    dist_internal::GatherToRoot(comm, !rest.export_csv.empty(), std::move(pairs), std::move(result),
                                &gathered);
    // The whole table is on the root: per-node counts and the positive-rate
    // DEFAULT fit (core/model/node_default_fit.h) there.
    return root ? AttachNodeDefault(gathered.pairs, NodeDefaultOptions(), &gathered.result)
                : absl::OkStatus();
  });
  if (!s.ok()) return s;
  s = root ? FinishOnRoot(rest, obs, comm, store.get(), created, gathered, names, inputs, &report)
           : FinishOnOtherRank(comm);
  if (!s.ok()) return s;
  build_internal::MaybeReportRss(comm, "finish");
  AddRankTable(comm, t0, cpu0, my_pairs, my_instances, &report);
  return report;
}

absl::StatusOr<BuildReport> RunBuild(const BuildOptions& options, const BuildObserver& obs) {
  SingleProcessCommunicator one;
  return RunBuild(options, obs, one);
}

}  // namespace graphsieve
