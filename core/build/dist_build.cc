#include "core/build/dist_build.h"

#include <malloc.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/build/build_stages.h"
#include "core/build/dist_exchange.h"
#include "core/build/dist_parts.h"
#include "core/build/dist_stage.h"
#include "core/io/partition.h"
#include "core/maec/conductance.h"
#include "core/serving/node_default.h"
#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"

namespace graphsieve {
namespace {

using Clock = std::chrono::steady_clock;
using dist_internal::CpuSeconds;
using dist_internal::GatheredPairs;
using dist_internal::Stage;

uint64_t PeakRssBytes() {
  struct rusage ru;
  ::getrusage(RUSAGE_SELF, &ru);
  return static_cast<uint64_t>(ru.ru_maxrss) * 1024;
}

// Rank r parses the inputs k with k mod N == r; errors name the file.
absl::Status ReadMyFiles(const BuildOptions& options, const Communicator& comm,
                         ImpressionLog* log) {
  uint64_t left = 0, done = 0;
  for (size_t k = comm.rank(); k < options.inputs.size(); k += comm.size()) {
    left += build_internal::FileSizeOrZero(options.inputs[k]);
  }
  for (size_t k = comm.rank(); k < options.inputs.size(); k += comm.size()) {
    const std::string& f = options.inputs[k];
    absl::Status s = ReadImpressionLog(f, options.reader, log);
    if (!s.ok()) return absl::Status(s.code(), absl::StrCat("--input ", f, ": ", s.message()));
    const uint64_t size = std::min(left, build_internal::FileSizeOrZero(f));
    done += size, left -= size;
    build_internal::ReserveForInputsLeft(done, left, log);
  }
  return absl::OkStatus();
}

// This rank's inputs (k with k mod N == rank) digested on a thread of their
// own, started with the parse so the two overlap (as the single-process
// build's InputDigester). Join() before reading the results.
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

}  // namespace

absl::StatusOr<BuildReport> RunDistributedBuild(const BuildOptions& options,
                                                const BuildObserver& obs, Communicator& comm) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  const Clock::time_point t0 = Clock::now();
  const double cpu0 = CpuSeconds();
  const bool root = comm.rank() == 0;
  BuildReport report;
  const absl::Time created = absl::Now();
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
  RankDigester digester(options, comm);
  s = Stage(comm, obs, &report, "read", [&] {
    absl::Status parsed = ReadMyFiles(options, comm, &log);
    digester.Join();
    return parsed;
  });
  if (!s.ok()) return s;
  std::vector<snapshot::InputFileInfo> inputs;
  if (s = GatherDigests(options, comm, digester, &inputs); !s.ok()) return s;
  uint64_t usable = log.size();
  ImpressionLog names;  // counters (global) and, for --export, every rank's id names
  names.rows_read = log.rows_read, names.bad_rows_skipped = log.bad_rows_skipped;
  names.bytes_read = log.bytes_read;
  SumLogCounters(comm, &names, &usable);
  report.rows_read = names.rows_read;
  report.bad_rows_skipped = names.bad_rows_skipped;
  for (const auto& in : inputs) report.input_bytes += in.size_bytes;
  if (usable == 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("gate non-empty failed: the input has no usable rows (", names.rows_read,
                     " rows read, ", names.bad_rows_skipped, " skipped)"));
  }
  if (!options.export_csv.empty()) dist_internal::GatherNames(comm, log, &names);

  PairTable pairs;
  s = Stage(comm, obs, &report, "pair_table", [&] {
    dist_internal::ExchangeRowsByUser(comm, &log);
    return dist_internal::BuildGlobalPairTable(comm, options.pipeline.threads, &log, &pairs);
  });
  if (!s.ok()) return s;

  PipelineResult result;
  s = Stage(comm, obs, &report, "pipeline", [&]() -> absl::Status {
    const PositiveGraph graph = dist_internal::AllGatherPositiveGraph(comm, pairs);
    PipelineOptions po = options.pipeline;
    po.comm = &comm;
    po.progress = [&](const std::string& stage, double f) {
      if (obs.progress) obs.progress("pipeline: " + stage, f, 0);
    };
    absl::StatusOr<ConductanceResult> cond = ComputeConductanceOnGraph(pairs, graph, po);
    if (!cond.ok()) return cond.status();
    absl::StatusOr<PipelineResult> r = RunPipelineWithConductance(pairs, *cond, po);
    if (!r.ok()) return r.status();
    result = std::move(*r);
    return absl::OkStatus();
  });
  ::malloc_trim(0);  // the pipeline's freed scratch back to the system before the gather and write
  if (!s.ok()) return s;

  const uint64_t my_pairs = pairs.num_pairs(), my_instances = pairs.total_instances;
  if (dist_internal::RanksWriteParts(options, comm)) {  // no gather: each rank writes its parts
    s = dist_internal::WritePartsOnEveryRank(options, obs, comm, store.get(), created, pairs,
                                             &result, names, inputs, &report);
    if (!s.ok()) return s;
    nlohmann::json ranks = RankTable(comm, t0, cpu0, my_pairs, my_instances);
    if (root) report.ranks = std::move(ranks);
    return report;
  }
  GatheredPairs gathered;
  s = Stage(comm, obs, &report, "gather", [&] {
    dist_internal::GatherToRoot(comm, !options.export_csv.empty(), std::move(pairs),
                                std::move(result), &gathered);
    // The whole table is on the root: per-node counts and the positive-rate
    // DEFAULT fit there, as in the single-process build (build_job.cc).
    return root ? AttachNodeDefault(gathered.pairs, NodeDefaultOptions(), &gathered.result)
                : absl::OkStatus();
  });
  if (!s.ok()) return s;
  s = root
          ? FinishOnRoot(options, obs, comm, store.get(), created, gathered, names, inputs, &report)
          : FinishOnOtherRank(comm);
  if (!s.ok()) return s;
  dist_internal::MaybeReportRss(comm, "finish");
  nlohmann::json ranks = RankTable(comm, t0, cpu0, my_pairs, my_instances);
  if (root) report.ranks = std::move(ranks);
  return report;
}

}  // namespace graphsieve
