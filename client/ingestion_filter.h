// The log-ingestion filter: for impressions (user, item, label, instance key)
// decides which to keep before they are written, and the log-odds offset each
// kept impression carries into training (docs/DESIGN.md §2 item 9), by the
// keep rule of core/serving/keep_rule.h:
//
//   positive, rate r    -> kept; offset log(r)
//   negative, rate r    -> kept iff KeepNegative(instance_key, snapshot seed, r)
//                          (core/io/ids.h); offset log(r)
//   The offset is the pair's log-odds correction, whatever the label (the
//   server sets it for dropped negatives too; only kept rows reach training).
//
// Two ways to the same answer (tests check they agree bit for bit):
//   kServer  labels and instance keys are sent; the server decides (default).
//   kLocal   only the pairs are sent; the filter decides with the same
//            DecideKeep and the keep seed of the snapshot version that answered
//            (from GetStatus, cached per version). Smaller requests; the
//            server may be older.
//
// The instance key must be stable per impression (a log offset, an event id
// hash): the same impression then gets the same decision on every rerun.
//
// Thread-safety: thread-safe; Decide() may run concurrently. The client is
// not owned and must outlive the filter.
#ifndef GRAPHSIEVE_CLIENT_INGESTION_FILTER_H_
#define GRAPHSIEVE_CLIENT_INGESTION_FILTER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/types/span.h"
#include "client/sampling_rate_client.h"

namespace graphsieve {

struct IngestionFilterOptions {
  enum class Mode { kServer, kLocal };
  Mode mode = Mode::kServer;  // who computes the keep decisions (see above)
};

// Per impression, in request order.
struct FilterDecisions {
  std::vector<bool> keep;
  std::vector<float> rates;
  std::vector<float> log_odds_offsets;
  std::vector<v1::RateSource> sources;
  std::vector<std::string> snapshot_versions;  // as RateBatch::snapshot_versions
};

class IngestionFilter {
 public:
  // REQUIRES: client != nullptr and outlives the filter.
  static absl::StatusOr<std::unique_ptr<IngestionFilter>> Create(
      const SamplingRateClient* client, const IngestionFilterOptions& options);

  // labels: nonzero = positive. Errors: INVALID_ARGUMENT (sizes differ), the
  // client's errors, and in kLocal mode FAILED_PRECONDITION when the version
  // that answered is no longer the server's active one and its seed is unknown.
  // REQUIRES: all spans have the same size.
  absl::StatusOr<FilterDecisions> Decide(absl::Span<const uint64_t> users,
                                         absl::Span<const uint64_t> items,
                                         absl::Span<const uint8_t> labels,
                                         absl::Span<const uint64_t> instance_keys) const;

 private:
  IngestionFilter(const SamplingRateClient* client, const IngestionFilterOptions& options)
      : client_(client), options_(options) {}
  absl::StatusOr<uint64_t> SeedOf(const std::string& version) const;

  // Constant after construction.
  const SamplingRateClient* const client_;
  const IngestionFilterOptions options_;

  mutable absl::Mutex mu_;
  mutable absl::flat_hash_map<std::string, uint64_t> seeds_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CLIENT_INGESTION_FILTER_H_
