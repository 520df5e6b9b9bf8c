// The deployed mode of the experiment (experiment.h, EvalMode::kDeployed):
// per seed, the earlier period is the builder's input and the later period
// is split 80/10/10; per configuration a real snapshot of the earlier period
// rates the later training pairs as the server would (deployed.h).
#include <stdlib.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/snapshot/file_util.h"
#include "eval/deployed.h"
#include "eval/experiment_internal.h"
#include "eval/split.h"

namespace graphsieve::eval::internal {
namespace {

// A fresh directory under SnapshotWorkBase(o.work_dir) (deployed.h); the
// caller removes it.
absl::StatusOr<std::string> MakeWorkDir(const ExperimentOptions& o) {
  const std::string base = SnapshotWorkBase(o.work_dir);
  std::string templ = absl::StrCat(base, "/graphsieve-eval-XXXXXX");
  if (::mkdtemp(templ.data()) == nullptr) {
    const int err = errno;
    return absl::ErrnoToStatus(
        err, absl::StrCat("cannot create a snapshot work directory under ", base,
                          " (--work_dir must be an existing, writable directory)"));
  }
  return templ;
}

// The refresh chunks that hold training impressions, renumbered 0, 1, ...
// in time order (empty chunks change no delta); s->chunk_logs and
// s->pair_chunk from them.
void ChunkTrainingPairs(const std::vector<uint32_t>& train_chunk, SeedData* s) {
  std::vector<uint32_t> ids = train_chunk;
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  absl::flat_hash_map<uint32_t, uint32_t> rank;
  for (size_t r = 0; r < ids.size(); ++r) rank[ids[r]] = static_cast<uint32_t>(r);
  s->chunk_logs.assign(ids.size(), ImpressionLog{});
  s->pair_chunk.assign(s->pairs.num_pairs(), static_cast<uint32_t>(ids.size()));
  for (size_t i = 0; i < train_chunk.size(); ++i) {
    const uint32_t c = rank[train_chunk[i]];
    ImpressionLog& l = s->chunk_logs[c];
    l.user_ids.push_back(s->train_log.user_ids[i]);
    l.item_ids.push_back(s->train_log.item_ids[i]);
    l.labels.push_back(s->train_log.labels[i]);
    uint32_t& first = s->pair_chunk[s->pair_of[i]];
    first = std::min(first, c);
  }
  for (ImpressionLog& l : s->chunk_logs) l.rows_read = l.size();
}

std::vector<uint32_t> AllPairs(size_t n) {
  std::vector<uint32_t> all(n);
  for (size_t q = 0; q < n; ++q) all[q] = static_cast<uint32_t>(q);
  return all;
}

// Rates and sources of the training pairs `pairs` from `snap`.
absl::Status ScorePairs(const DeployedSnapshot& snap, const SeedData& s,
                        absl::Span<const uint32_t> pairs, const ExperimentOptions& o,
                        absl::Span<float> rates, std::vector<uint8_t>* sources) {
  if (pairs.empty()) return absl::OkStatus();
  std::vector<uint64_t> users(pairs.size()), items(pairs.size());
  for (size_t k = 0; k < pairs.size(); ++k) {
    users[k] = s.pairs.user_ids[s.pairs.pair_user[pairs[k]]];
    items[k] = s.pairs.item_ids[s.pairs.pair_item[pairs[k]]];
  }
  std::vector<float> r(pairs.size());
  std::vector<uint8_t> src(pairs.size());
  if (absl::Status st = snap.Score(users, items, absl::MakeSpan(r), absl::MakeSpan(src), nullptr,
                                   o.default_policy);
      !st.ok()) {
    return st;
  }
  for (size_t k = 0; k < pairs.size(); ++k) {
    rates[pairs[k]] = r[k];
    (*sources)[pairs[k]] = src[k];
  }
  return absl::OkStatus();
}

// The refresh replay: chunk 0's pairs from the base, chunk k's from base +
// a delta built (cumulatively, as the delta CronJob does) from the training
// impressions of chunks 0..k-1.
absl::Status ScoreByChunk(const DeployedSnapshot& base, const SeedData& s, const PipelineOptions& p,
                          const std::string& dir, const ExperimentOptions& o,
                          const std::string& run_name, absl::Span<float> rates,
                          std::vector<uint8_t>* sources) {
  std::vector<std::vector<uint32_t>> by_chunk(s.chunk_logs.size());
  for (size_t q = 0; q < s.pair_chunk.size(); ++q) {
    by_chunk[s.pair_chunk[q]].push_back(static_cast<uint32_t>(q));
  }
  size_t deltas_needed = 0, deltas_built = 0, rows_read = 0;
  for (uint32_t k = 1; k < by_chunk.size(); ++k) deltas_needed += !by_chunk[k].empty();
  // A replay builds one delta per chunk, each over everything before it:
  // at most one progress line every 30 s (and none under --quiet).
  const absl::Time start = absl::Now();
  absl::Time last_progress = start;
  std::vector<std::string> inputs;
  size_t input_rows = 0;
  for (uint32_t k = 0; k < s.chunk_logs.size(); ++k) {
    if (!by_chunk[k].empty()) {  // else no pair is first rated in chunk k: no delta needed
      std::unique_ptr<DeployedSnapshot> delta;
      if (k > 0) {
        if (o.progress && absl::Now() - last_progress >= absl::Seconds(30)) {
          last_progress = absl::Now();
          o.progress(absl::StrFormat(
              "%s: refresh replay: %d of %d deltas built (%d training impressions read), "
              "now chunk %d of %d over %d impressions, %.0f s",
              run_name, deltas_built, deltas_needed, rows_read, k, s.chunk_logs.size(), input_rows,
              absl::ToDoubleSeconds(last_progress - start)));
        }
        absl::StatusOr<std::unique_ptr<DeployedSnapshot>> d = base.BuildDelta(inputs, p);
        if (!d.ok()) {
          return absl::Status(d.status().code(), absl::StrCat("delta before refresh chunk ", k,
                                                              ": ", d.status().message()));
        }
        delta = *std::move(d);
        ++deltas_built;
        rows_read += input_rows;
      }
      const DeployedSnapshot& snap = delta != nullptr ? *delta : base;
      if (absl::Status st = ScorePairs(snap, s, by_chunk[k], o, rates, sources); !st.ok()) {
        return st;
      }
    }
    inputs.push_back(absl::StrCat(dir, "/chunk-", k, ".csv"));
    if (absl::Status st = WriteLogCsv(s.chunk_logs[k], inputs.back()); !st.ok()) return st;
    input_rows += s.chunk_logs[k].size();
  }
  if (o.progress && last_progress != start) {  // the replay was long enough to report on
    o.progress(absl::StrFormat(
        "%s: refresh replay done: %d deltas, %d training impressions read, "
        "%.0f s",
        run_name, deltas_built, rows_read, absl::ToDoubleSeconds(absl::Now() - start)));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SeedData> PrepareDeployedSeed(const ImpressionLog& log, const DenseLog& dense,
                                             absl::Span<const int64_t> timestamps,
                                             const ExperimentOptions& o, uint64_t seed,
                                             bool need_pilot, std::string* pilot_name) {
  PeriodOptions po;
  po.later_fraction = o.later_fraction;
  po.seed = seed;
  absl::StatusOr<std::vector<Period>> periods = AssignPeriods(log, timestamps, po);
  if (!periods.ok()) return periods.status();
  SeedData s;
  const bool has_pilot = !log.pilot_scores.empty();
  // The built-in pilot: the earlier period goes to the builder without a
  // pilot column, so each pilot method's snapshot build fits its own.
  const bool built_in_pilot = need_pilot && o.pilot == PilotSource::kBuiltIn;
  const bool column_pilot = need_pilot && has_pilot && !IsTrainedPilot(o.pilot) && !built_in_pilot;
  std::vector<size_t> later;
  Instances earlier_dense;
  for (size_t i = 0; i < log.size(); ++i) {
    if ((*periods)[i] == Period::kLater) {
      later.push_back(i);
      continue;
    }
    s.earlier.user_ids.push_back(log.user_ids[i]);
    s.earlier.item_ids.push_back(log.item_ids[i]);
    s.earlier.labels.push_back(log.labels[i]);
    if (column_pilot) s.earlier.pilot_scores.push_back(log.pilot_scores[i]);
    Append(dense.all, i, &earlier_dense);
  }
  if (later.size() < 10 || s.earlier.size() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "deployed mode: the earlier period has ", s.earlier.size(), " and the later period ",
        later.size(), " instances; need both (later at least 10)"));
  }
  if (absl::Status st = CheckBothClasses(earlier_dense, "earlier-period"); !st.ok()) return st;
  std::vector<uint32_t> chunk_of_later;  // refresh: per later instance
  if (o.refresh_every != 0) {
    if (need_pilot) {
      return absl::InvalidArgumentError(
          "--refresh_every: methods that need a pilot score (opt, max, ...) are not supported "
          "with refresh; drop them from --methods");
    }
    absl::StatusOr<std::vector<uint32_t>> chunks =
        AssignChunks(log, timestamps, later, o.refresh_every, seed);
    if (!chunks.ok()) return chunks.status();
    chunk_of_later = *std::move(chunks);
  }
  std::vector<uint32_t> train_chunk;  // refresh: per training instance
  SplitOptions split = o.split;
  split.seed = seed;
  absl::StatusOr<std::vector<Part>> parts = SplitByInstance(later.size(), split);
  if (!parts.ok()) return parts.status();
  for (size_t k = 0; k < later.size(); ++k) {
    const size_t i = later[k];
    switch ((*parts)[k]) {
      case Part::kTrain:
        AppendWithTruth(dense, i, &s.train, &s.train_truth);
        s.train_log.user_ids.push_back(log.user_ids[i]);
        s.train_log.item_ids.push_back(log.item_ids[i]);
        s.train_log.labels.push_back(log.labels[i]);
        s.train_negatives += log.labels[i] == 0;
        if (!chunk_of_later.empty()) train_chunk.push_back(chunk_of_later[k]);
        break;
      case Part::kValidation:
        Append(dense.all, i, &s.validation);
        break;
      case Part::kTest:
        AppendWithTruth(dense, i, &s.test, &s.test_truth);
        break;
    }
  }
  for (const auto& [d, name] :
       {std::pair<const Instances*, const char*>{&s.train, "later training"},
        {&s.validation, "later validation"},
        {&s.test, "later test"}}) {
    if (absl::Status st = CheckBothClasses(*d, name); !st.ok()) return st;
  }
  s.later_instances = later.size();
  if (built_in_pilot) {
    *pilot_name =
        "built-in (graphsieve-build's cross-fitted factorisation, fitted by each snapshot build "
        "on the earlier period)";
  } else if (need_pilot && !column_pilot) {
    if (o.pilot == PilotSource::kColumn) {
      return absl::InvalidArgumentError(
          "--pilot=column but no pilot score column was read: name the log's column with "
          "--pilot-col (graphsieve-gen --pilot writes 'pilot_score')");
    }
    // The builder's pilot: an LR trained on the earlier period (what a
    // previous model would have been trained on), early-stopped on the later
    // validation part.
    absl::StatusOr<std::vector<float>> p =
        TrainPilot(o, dense, seed, earlier_dense, s.validation, "the earlier period", pilot_name);
    if (!p.ok()) return p.status();
    s.earlier.pilot_scores = *std::move(p);
  } else if (need_pilot) {
    *pilot_name = "column (the log's pilot score)";
  }
  if (absl::Status st = IndexTrainingPairs(o.pipeline.threads, &s); !st.ok()) return st;
  if (!chunk_of_later.empty()) ChunkTrainingPairs(train_chunk, &s);
  return s;
}

absl::StatusOr<std::vector<float>> ComputeDeployedRates(const Config& c, const SeedData& s,
                                                        const ExperimentOptions& o, uint64_t seed,
                                                        bool* refused_by_data,
                                                        std::vector<uint8_t>* sources) {
  *refused_by_data = false;
  auto fail = [&](const absl::Status& st) {
    return absl::Status(
        st.code(),
        absl::StrFormat("method %s (alpha=%g floor=%g gamma=%g, deployed): %s", c.spec.name,
                        c.alpha, c.floor, c.gamma, InEvalTerms(st.message(), c.spec)));
  };
  const PipelineOptions p = PipelineOptionsFor(c, o, seed);
  if (absl::Status st = p.Validate(); !st.ok()) return fail(st);
  absl::StatusOr<std::string> dir = MakeWorkDir(o);
  if (!dir.ok()) return dir.status();
  absl::StatusOr<std::unique_ptr<DeployedSnapshot>> snap =
      DeployedSnapshot::Build(s.earlier, p, *dir);
  if (!snap.ok()) {
    (void)snapshot::RemoveTree(*dir);
    // The pipeline refusing the configuration, or a gate (alpha not reached).
    *refused_by_data =
        absl::IsInvalidArgument(snap.status()) || absl::IsFailedPrecondition(snap.status());
    return fail(snap.status());
  }
  if (c.spec.needs_pilot() && o.pilot == PilotSource::kBuiltIn && !(*snap)->built_in_pilot()) {
    snap->reset();
    (void)snapshot::RemoveTree(*dir);
    return fail(absl::InternalError(
        "--pilot=builtin: the snapshot build fitted no built-in pilot for this method"));
  }
  const size_t n = s.pairs.num_pairs();
  std::vector<float> rates(n);
  sources->assign(n, 0);
  absl::Status st =
      s.chunk_logs.empty()
          ? ScorePairs(**snap, s, AllPairs(n), o, absl::MakeSpan(rates), sources)
          : ScoreByChunk(**snap, s, p, *dir, o,
                         absl::StrFormat("seed %d %s a=%.2f", seed, c.spec.name, c.alpha),
                         absl::MakeSpan(rates), sources);
  snap->reset();
  (void)snapshot::RemoveTree(*dir);
  if (!st.ok()) return fail(st);
  for (size_t q = 0; q < n; ++q) {
    if (!(rates[q] > 0.0f && rates[q] <= 1.0f)) {
      return fail(absl::InternalError(
          absl::StrCat("pair ", q, " has rate ", rates[q], ", expected (0, 1]")));
    }
  }
  return rates;
}

}  // namespace graphsieve::eval::internal
