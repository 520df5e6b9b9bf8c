// The deployed mode of graphsieve-eval (docs/EVALUATION.md, "Deployed
// mode"): in production the builder runs on yesterday's log and the ingestion
// filter rates today's impressions through the server, mostly by the
// unseen-pair path. This file holds the two halves of that:
//
//  * AssignPeriods splits a log into an earlier period (the builder's input)
//    and a later one (the impressions to rate, train and test on): by time
//    when the log has timestamps, else by a seeded draw per instance.
//  * DeployedSnapshot builds a real snapshot of the earlier period with the
//    builder's job (core/offline/build_job.h: pipeline, gates, snapshot writer,
//    publish) into a snapshot root, opens it as graphsieve-server does and
//    rates pairs with the server's own scorer (core/serving/batch_scorer.h),
//    so every rate and source (EXACT / INFERRED / DEFAULT) is the one a
//    graphsieve-server on that root answers (tests/eval/deployed_test.cc
//    checks this against the real server binary).
//  * DeployedSnapshot::BuildDelta builds a delta version over such a
//    snapshot with the real delta builder (core/offline/delta_build.h) from the
//    impressions logged since, and opens base + delta as the server does
//    (core/snapshot/layered_snapshot_reader.h): the --refresh_every replay.
//  * AssignChunks cuts the later period into refresh chunks by time.
//
// Thread-safety: AssignPeriods is pure; a DeployedSnapshot is immutable after
// Build and Score() may run concurrently.
#ifndef GRAPHSIEVE_EVAL_DEPLOYED_H_
#define GRAPHSIEVE_EVAL_DEPLOYED_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/io/log_reader.h"
#include "core/maec/pipeline.h"
#include "core/serving/default_policy.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/version_opener.h"

namespace graphsieve::eval {

enum class Period : uint8_t { kEarlier = 0, kLater = 1 };

struct PeriodOptions {
  // Share of the instances in the later period: with timestamps, the later
  // period starts at the (1 - later_fraction) quantile of the timestamps.
  double later_fraction = 0.5;
  uint64_t seed = 1;  // the seeded draws (untimed instances, or every instance without timestamps)
  absl::Status Validate() const;
};

// Period of every instance of `log`.
//  * `timestamps` empty: a seeded draw per instance, later with probability
//    later_fraction (repeats of a pair may fall in both periods).
//  * else timestamps[i] >= 0 is instance i's time and < 0 means "untimed"
//    (MovieLens' unrated pairs in the all-pairs implicit setup). Timed
//    instances at or after the cutoff are later. An untimed instance of user u
//    is later with probability = the share of u's timed instances that are
//    later (later_fraction for a user without timed ones): a user's unrated
//    impressions are spread over the periods like the user's ratings, so a
//    user who only appears later has all their impressions later.
// Errors: INVALID_ARGUMENT for bad options, a timestamps size other than the
// log's, or no timed instance.
absl::StatusOr<std::vector<Period>> AssignPeriods(const ImpressionLog& log,
                                                  absl::Span<const int64_t> timestamps,
                                                  const PeriodOptions& options);

// The refresh chunk of every instance of the later period (`later` holds
// their indices into the log, `timestamps` the log's times): chunk
// floor((t - t0) / refresh_every), t0 the earliest timed later instance. An
// untimed later instance (MovieLens' unrated pairs) takes the chunk of one of
// its user's timed later instances drawn with `seed` (so a user's unrated
// impressions arrive with the user's ratings), chunk 0 when the user has
// none. Errors: INVALID_ARGUMENT when refresh_every < 1, timestamps is empty
// or no later instance is timed.
absl::StatusOr<std::vector<uint32_t>> AssignChunks(const ImpressionLog& log,
                                                   absl::Span<const int64_t> timestamps,
                                                   absl::Span<const size_t> later,
                                                   int64_t refresh_every, uint64_t seed);

// The directory the deployed mode makes its snapshot directories under:
// `work_dir` when given, else $TMPDIR, else /dev/shm when it is a writable
// tmpfs, else /tmp. The snapshots are thrown away after use, so nothing is
// gained by the fsyncs a publish makes on a disk: on one, a refresh replay (a
// delta published per chunk) spent most of its wall time waiting for them
// (docs/FRESHNESS.md "Cost").
std::string SnapshotWorkBase(const std::string& work_dir);

// Writes `log` as CSV (user_id,item_id,label[,pilot_score]) to `path`, the
// builder's input format.
absl::Status WriteLogCsv(const ImpressionLog& log, const std::string& path);

// Where a rate came from; the server's sources (core/serving/rate_source.h).
struct SourceShares {
  uint64_t exact = 0, inferred = 0, by_default = 0;
};

class DeployedSnapshot {
 public:
  // Writes `log` as CSV (user_id,item_id,label[,pilot_score]) into `work_dir`,
  // runs the builder job (a pilot-based method without pilot scores in `log`
  // fits the built-in pilot, as graphsieve-build without --pilot_col does) with `pipeline` (dry_run
  // off, gates on) publishing into `work_dir`/snapshots, and opens the published version with the
  // server's default reader options. `work_dir` must exist and is left for
  // the caller to remove. Errors: the builder's (INVALID_ARGUMENT when the
  // pipeline refuses the configuration for these data, FAILED_PRECONDITION
  // for a failed gate), the reader's.
  static absl::StatusOr<std::unique_ptr<DeployedSnapshot>> Build(const ImpressionLog& log,
                                                                 const PipelineOptions& pipeline,
                                                                 const std::string& work_dir);

  // Rates and sources of pairs (users[i], items[i]) exactly as the server's
  // GetSamplingRate answers them with `policy` for unknown nodes (the
  // server's --default-policy; node-mean by default): the server's
  // BatchScorer (core/serving/batch_scorer.h).
  // REQUIRES: all spans have the same size.
  absl::Status Score(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                     absl::Span<float> rates, absl::Span<uint8_t> sources, SourceShares* counts,
                     const DefaultPolicy& policy = DefaultPolicy{}) const;

  // A delta version over this snapshot (which must be a full version) built
  // by the delta builder from `inputs` (CSV files as WriteLogCsv writes them,
  // every impression since the base: deltas are cumulative) with the same
  // `pipeline` as the base, published into the same root and opened as
  // graphsieve-server opens a delta version (base + delta as one reader).
  // Errors: the delta builder's (FAILED_PRECONDITION when it refuses the
  // delta), the reader's.
  absl::StatusOr<std::unique_ptr<DeployedSnapshot>> BuildDelta(
      const std::vector<std::string>& inputs, const PipelineOptions& pipeline) const;

  const std::string& snapshot_root() const { return root_; }
  const std::string& version() const { return version_; }
  // Whether the build fitted the builder's built-in pilot (a pilot-based
  // method and a log without pilot scores; BuildReport::built_in_pilot): its
  // cross-fitted scores rate the EXACT pairs and its model on every pair the
  // INFERRED ones. A delta reports its base's.
  bool built_in_pilot() const { return built_in_pilot_; }

  // Source codes written by Score.
  static constexpr uint8_t kExact = 0, kInferred = 1, kDefault = 2;

 private:
  DeployedSnapshot(std::shared_ptr<VersionOpener> opener, std::string root, std::string version,
                   std::shared_ptr<const SnapshotReader> reader, bool built_in_pilot)
      : opener_(std::move(opener)),
        root_(std::move(root)),
        version_(std::move(version)),
        reader_(std::move(reader)),
        built_in_pilot_(built_in_pilot) {}
  // Constant after construction.
  // The opener of the version and of the deltas over it (shares their base).
  const std::shared_ptr<VersionOpener> opener_;
  const std::string root_, version_;
  const std::shared_ptr<const SnapshotReader> reader_;
  const bool built_in_pilot_;
};

}  // namespace graphsieve::eval

#endif  // GRAPHSIEVE_EVAL_DEPLOYED_H_
