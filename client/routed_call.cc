// SamplingRateClient over a partitioned deployment (docs/CLIENTS.md
// "Partitioned deployments"): split by core/io/partition.h, call the parts in
// parallel, merge in request order, one snapshot version per batch.
#include <future>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "client/sampling_rate_client.h"
#include "core/io/partition.h"

namespace graphsieve {
namespace {

// One part's share of a batch: request positions and the gathered columns.
struct PartShare {
  std::vector<size_t> positions;
  std::vector<uint64_t> users, items, keys;
  std::vector<uint8_t> labels;
};

std::vector<PartShare> Split(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                             absl::Span<const uint8_t> labels, absl::Span<const uint64_t> keys,
                             size_t parts) {
  std::vector<PartShare> shares(parts);
  const uint32_t n_parts = static_cast<uint32_t>(parts);
  uint64_t last_user = 0;
  uint32_t last_part = 0;
  for (size_t i = 0; i < users.size(); ++i) {
    if (i == 0 || users[i] != last_user) {
      last_user = users[i];
      last_part = PartitionOfUser(last_user, n_parts);
    }
    PartShare& s = shares[last_part];
    s.positions.push_back(i);
    s.users.push_back(users[i]);
    s.items.push_back(items[i]);
    if (!labels.empty()) {
      s.labels.push_back(labels[i]);
      s.keys.push_back(keys[i]);
    }
  }
  return shares;
}

}  // namespace

absl::StatusOr<RateBatch> SamplingRateClient::RoutedCall(absl::Span<const uint64_t> users,
                                                         absl::Span<const uint64_t> items,
                                                         absl::Span<const uint8_t> labels,
                                                         absl::Span<const uint64_t> keys) const {
  const size_t n = users.size();
  const size_t parts = stubs_.size();
  const bool decide = !labels.empty();
  RateBatch out;
  if (n == 0) return out;
  const std::vector<PartShare> shares = Split(users, items, labels, keys, parts);
  std::vector<std::string> seen;  // versions of the last mismatching attempt
  for (int attempt = 0; attempt < options_.max_version_attempts; ++attempt) {
    if (attempt > 0) {
      absl::SleepFor(absl::Seconds(options_.version_retry_backoff_seconds));
      ++out.version_retries;
    }
    // Parts with pairs in parallel: all but the first on their own threads.
    std::vector<std::future<absl::StatusOr<RateBatch>>> pending(parts);
    std::vector<absl::StatusOr<RateBatch>> answers(parts, RateBatch());
    size_t first = parts;
    for (size_t p = 0; p < parts; ++p) {
      if (shares[p].positions.empty()) continue;
      if (first == parts) {
        first = p;
        continue;
      }
      pending[p] = std::async(std::launch::async, [this, p, &shares] {
        const PartShare& s = shares[p];
        return CallPart(p, s.users, s.items, s.labels, s.keys);
      });
    }
    answers[first] = CallPart(first, shares[first].users, shares[first].items,
                              shares[first].labels, shares[first].keys);
    for (size_t p = 0; p < parts; ++p) {
      if (pending[p].valid()) answers[p] = pending[p].get();
    }
    // Errors first (with the part's target in the message), then versions.
    std::vector<std::string> versions;
    for (size_t p = 0; p < parts; ++p) {
      if (shares[p].positions.empty()) continue;
      if (!answers[p].ok()) {
        return absl::Status(answers[p].status().code(),
                            absl::StrCat("partition ", p, " of ", parts, ": ",
                                         answers[p].status().message()));
      }
      out.retries += answers[p]->retries;
      for (const std::string& v : answers[p]->snapshot_versions) {
        if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
      }
    }
    if (versions.size() > 1) {
      seen = versions;
      continue;  // a swap in progress: ask again
    }
    out.rates.resize(n);
    out.sources.resize(n);
    if (decide) {
      out.keep.resize(n);
      out.log_odds_offsets.resize(n);
    }
    for (size_t p = 0; p < parts; ++p) {
      const PartShare& s = shares[p];
      if (s.positions.empty()) continue;
      const RateBatch& a = *answers[p];
      for (size_t k = 0; k < s.positions.size(); ++k) {
        const size_t i = s.positions[k];
        out.rates[i] = a.rates[k];
        out.sources[i] = a.sources[k];
        if (decide) {
          out.keep[i] = a.keep[k];
          out.log_odds_offsets[i] = a.log_odds_offsets[k];
        }
      }
    }
    out.snapshot_versions = versions;
    total_retries_.fetch_add(out.retries + out.version_retries, std::memory_order_relaxed);
    return out;
  }
  total_retries_.fetch_add(out.retries + out.version_retries, std::memory_order_relaxed);
  return absl::AbortedError(absl::StrCat(
      "partitioned targets ", options_.target, ": the parts answered from different snapshot "
      "versions (", absl::StrJoin(seen, ", "), ") in each of ", options_.max_version_attempts,
      " attempts; a swap is in progress or the parts follow different roots"));
}

}  // namespace graphsieve
