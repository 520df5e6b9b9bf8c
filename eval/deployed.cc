#include "eval/deployed.h"

#include <linux/magic.h>
#include <sys/statfs.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/offline/build_job.h"
#include "core/offline/delta_build.h"
#include "core/serving/batch_scorer.h"
#include "core/snapshot/layered_snapshot_reader.h"
#include "eval/random.h"

namespace graphsieve::eval {
namespace {

constexpr uint64_t kPeriodStream = 0x70657264ULL;  // "perd"
constexpr uint64_t kChunkStream = 0x6368756eULL;   // "chun"

// Whether `dir` is a writable directory in memory (tmpfs).
bool IsWritableTmpfs(const char* dir) {
  struct statfs fs;
  return ::statfs(dir, &fs) == 0 && fs.f_type == TMPFS_MAGIC && ::access(dir, W_OK | X_OK) == 0;
}

}  // namespace

std::string SnapshotWorkBase(const std::string& work_dir) {
  if (!work_dir.empty()) return work_dir;
  const char* tmp = std::getenv("TMPDIR");
  if (tmp != nullptr && *tmp != '\0') return tmp;
  return IsWritableTmpfs("/dev/shm") ? "/dev/shm" : "/tmp";
}

absl::Status WriteLogCsv(const ImpressionLog& log, const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return absl::PermissionDeniedError(absl::StrCat("cannot write ", path));
  const bool pilot = !log.pilot_scores.empty();
  std::fputs(pilot ? "user_id,item_id,label,pilot_score\n" : "user_id,item_id,label\n", f);
  for (size_t i = 0; i < log.size(); ++i) {
    if (pilot) {
      // %.9g round-trips a float exactly, so the builder reads the same score.
      std::fprintf(f, "%llu,%llu,%u,%.9g\n", static_cast<unsigned long long>(log.user_ids[i]),
                   static_cast<unsigned long long>(log.item_ids[i]), log.labels[i],
                   static_cast<double>(log.pilot_scores[i]));
    } else {
      std::fprintf(f, "%llu,%llu,%u\n", static_cast<unsigned long long>(log.user_ids[i]),
                   static_cast<unsigned long long>(log.item_ids[i]), log.labels[i]);
    }
  }
  const bool failed = std::ferror(f) != 0;
  if (std::fclose(f) != 0 || failed)
    return absl::DataLossError(absl::StrCat("error writing ", path));
  return absl::OkStatus();
}

absl::Status PeriodOptions::Validate() const {
  if (!(later_fraction > 0.0 && later_fraction < 1.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("later_fraction must be in (0, 1), got ", later_fraction));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Period>> AssignPeriods(const ImpressionLog& log,
                                                  absl::Span<const int64_t> timestamps,
                                                  const PeriodOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  const size_t n = log.size();
  std::vector<Period> out(n, Period::kEarlier);
  auto draw = [&](size_t i, double p) {
    return UnitFromIndex(options.seed, kPeriodStream, i) < p ? Period::kLater : Period::kEarlier;
  };
  if (timestamps.empty()) {
    for (size_t i = 0; i < n; ++i) out[i] = draw(i, options.later_fraction);
    return out;
  }
  if (timestamps.size() != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(timestamps.size(), " timestamps for ", n, " instances"));
  }
  std::vector<int64_t> timed;
  for (int64_t t : timestamps) {
    if (t >= 0) timed.push_back(t);
  }
  if (timed.empty()) return absl::InvalidArgumentError("no instance has a timestamp");
  const size_t k = std::min(
      timed.size() - 1,
      static_cast<size_t>((1.0 - options.later_fraction) * static_cast<double>(timed.size())));
  std::nth_element(timed.begin(), timed.begin() + static_cast<std::ptrdiff_t>(k), timed.end());
  const int64_t cutoff = timed[k];
  absl::flat_hash_map<uint64_t, std::pair<uint64_t, uint64_t>> per_user;  // (later, timed)
  for (size_t i = 0; i < n; ++i) {
    if (timestamps[i] < 0) continue;
    auto& c = per_user[log.user_ids[i]];
    c.first += timestamps[i] >= cutoff;
    c.second += 1;
  }
  for (size_t i = 0; i < n; ++i) {
    if (timestamps[i] >= 0) {
      out[i] = timestamps[i] >= cutoff ? Period::kLater : Period::kEarlier;
      continue;
    }
    const auto it = per_user.find(log.user_ids[i]);
    const double share = it == per_user.end()
                             ? options.later_fraction
                             : static_cast<double>(it->second.first) / it->second.second;
    out[i] = draw(i, share);
  }
  return out;
}

absl::StatusOr<std::vector<uint32_t>> AssignChunks(const ImpressionLog& log,
                                                   absl::Span<const int64_t> timestamps,
                                                   absl::Span<const size_t> later,
                                                   int64_t refresh_every, uint64_t seed) {
  if (refresh_every < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("refresh_every must be >= 1 (log time units), got ", refresh_every));
  }
  if (timestamps.size() != log.size()) {
    return absl::InvalidArgumentError(
        "refresh_every needs a time per instance (MovieLens' timestamps or --time_col)");
  }
  int64_t t0 = -1;
  for (size_t i : later) {
    if (timestamps[i] >= 0 && (t0 < 0 || timestamps[i] < t0)) t0 = timestamps[i];
  }
  if (t0 < 0) return absl::InvalidArgumentError("no instance of the later period has a time");
  std::vector<uint32_t> chunk(later.size(), 0);
  absl::flat_hash_map<uint64_t, std::vector<uint32_t>> user_chunks;  // of timed instances
  for (size_t k = 0; k < later.size(); ++k) {
    const int64_t t = timestamps[later[k]];
    if (t < 0) continue;
    chunk[k] = static_cast<uint32_t>((t - t0) / refresh_every);
    user_chunks[log.user_ids[later[k]]].push_back(chunk[k]);
  }
  for (size_t k = 0; k < later.size(); ++k) {
    if (timestamps[later[k]] >= 0) continue;
    const auto it = user_chunks.find(log.user_ids[later[k]]);
    if (it == user_chunks.end()) continue;  // chunk 0
    const double u = UnitFromIndex(seed, kChunkStream, later[k]);
    const size_t pick = std::min(it->second.size() - 1,
                                 static_cast<size_t>(u * static_cast<double>(it->second.size())));
    chunk[k] = it->second[pick];
  }
  return chunk;
}

absl::StatusOr<std::unique_ptr<DeployedSnapshot>> DeployedSnapshot::Build(
    const ImpressionLog& log, const PipelineOptions& pipeline, const std::string& work_dir) {
  const std::string csv = absl::StrCat(work_dir, "/earlier.csv");
  if (absl::Status s = WriteLogCsv(log, csv); !s.ok()) return s;
  BuildOptions b;
  b.inputs = {csv};
  if (!log.pilot_scores.empty()) b.reader.pilot_column = "pilot_score";
  b.pipeline = pipeline;
  b.pipeline.progress = nullptr;
  b.snapshot_root = absl::StrCat(work_dir, "/snapshots");
  b.keep_versions = 1;
  absl::StatusOr<BuildReport> report = RunBuild(b, BuildObserver{});
  std::remove(csv.c_str());
  if (!report.ok()) return report.status();
  if (!report->published) return absl::InternalError("the builder published no version");
  SnapshotReaderOptions r;  // the server's defaults: in-memory index, checksums verified
  auto opener = std::make_shared<VersionOpener>();
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> reader =
      opener->OpenStored(b.snapshot_root, report->version, r);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<DeployedSnapshot>(new DeployedSnapshot(std::move(opener), b.snapshot_root,
                                                                report->version, *std::move(reader),
                                                                report->built_in_pilot));
}

absl::StatusOr<std::unique_ptr<DeployedSnapshot>> DeployedSnapshot::BuildDelta(
    const std::vector<std::string>& inputs, const PipelineOptions& pipeline) const {
  DeltaBuildOptions d;
  d.base = version_;
  d.build.inputs = inputs;
  d.build.pipeline = pipeline;
  d.build.pipeline.progress = nullptr;
  d.build.snapshot_root = root_;
  d.build.keep_versions = 2;  // the base and the newest delta
  absl::StatusOr<DeltaReport> report = RunDeltaBuild(d, BuildObserver{});
  if (!report.ok()) return report.status();
  if (!report->published) return absl::InternalError("the delta builder published no version");
  SnapshotReaderOptions r;  // the server's defaults
  absl::StatusOr<std::shared_ptr<const SnapshotReader>> reader =
      opener_->Open(root_, report->version, r);
  if (!reader.ok()) return reader.status();
  return std::unique_ptr<DeployedSnapshot>(
      new DeployedSnapshot(opener_, root_, report->version, *std::move(reader), built_in_pilot_));
}

absl::Status DeployedSnapshot::Score(absl::Span<const uint64_t> users,
                                     absl::Span<const uint64_t> items, absl::Span<float> rates,
                                     absl::Span<uint8_t> sources, SourceShares* counts,
                                     const DefaultPolicy& policy) const {
  // The server's scorer (core/serving) with the server's chunk size
  // (server/options.h) and the given --default-policy.
  const BatchScorer scorer(policy, 4096);
  std::vector<RateSource> raw(users.size());
  SourceCounts c;
  if (absl::Status s =
          scorer.Score(*reader_, users, items, nullptr, rates, absl::MakeSpan(raw), &c);
      !s.ok()) {
    return s;
  }
  for (size_t i = 0; i < raw.size(); ++i) {
    sources[i] = raw[i] == RateSource::kExact      ? kExact
                 : raw[i] == RateSource::kInferred ? kInferred
                                                   : kDefault;
  }
  if (counts != nullptr) *counts = {c.exact, c.inferred, c.by_default};
  return absl::OkStatus();
}

}  // namespace graphsieve::eval
