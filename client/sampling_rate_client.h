// The C++ client of graphsieve's SamplingRateService (proto/graphsieve/v1).
//
//   SamplingRateClientOptions options;
//   options.target = "localhost:50051";
//   auto client = SamplingRateClient::Create(options);          // StatusOr<unique_ptr>
//   auto batch = (*client)->GetRates(user_ids, item_ids);       // StatusOr<RateBatch>
//   // batch->rates[i], batch->sources[i], batch->snapshot_versions
//
// With several comma-separated targets (the parts of a partitioned deployment,
// docs/CLIENTS.md "Partitioned deployments"), each batch is split by the
// user's partition (core/io/partition.h), the parts are called in parallel
// and the answers merged in request order; all of a batch's answers come from
// one snapshot version: when the parts answer from different versions (a swap
// in progress), the parts that answered otherwise are asked again for the
// oldest of them, which a server keeps open for a while after its swap
// (GetSamplingRateRequest.snapshot_version); only when no version is held by
// every part is the batch asked afresh (see max_version_attempts).
//
// Batches larger than Options::max_batch_pairs are split into chunks of near
// equal size, sent one after another and reassembled in request order. Each
// chunk (each RPC attempt) has its own deadline; a chunk that fails with
// UNAVAILABLE (server down or restarting, no snapshot loaded yet), or with
// CANCELLED from the server (a draining server answers it, docs/SERVER.md), is
// retried with jittered exponential backoff up to Options::max_attempts
// attempts (GetStatus likewise; PinVersion retries UNAVAILABLE only). Every
// other error is returned at once, prefixed with the target and the RPC.
//
// String ids: hash them with HashStringId (core/io/ids.h), the function the
// builder used, or parse them with ParseId(text, IdMode::kAuto).
//
// Thread-safety: thread-safe. One client (one gRPC channel) may be shared by
// any number of threads; calls do not block each other.
#ifndef GRAPHSIEVE_CLIENT_SAMPLING_RATE_CLIENT_H_
#define GRAPHSIEVE_CLIENT_SAMPLING_RATE_CLIENT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "graphsieve/v1/sampling.grpc.pb.h"

namespace graphsieve {

struct RoutedShare;  // one part's share of a batch (sampling_rate_client.cc)

// Largest per-attempt deadline, seconds (one day): SamplingRateClientOptions'
// deadline_seconds is clamped to it, and the CLI refuses
// --deadline-seconds above it.
inline constexpr double kMaxDeadlineSeconds = 86400.0;

struct SamplingRateClientOptions {
  // gRPC target of the server: "host:port", "ipv4:127.0.0.1:50051", "dns:///svc:50051";
  // for a partitioned deployment the targets of parts 0..N-1 in order,
  // comma-separated ("dns:///gs-part-0:50051,dns:///gs-part-1:50051").
  std::string target;
  // gRPC load-balancing policy of every channel: round_robin spreads calls over
  // every address a target resolves to (the replicas behind a headless
  // Service); "" = gRPC's default (pick_first).
  std::string lb_policy = "round_robin";
  // Partitioned targets: a batch whose parts answered from different snapshot
  // versions and could not be pinned to one that every part still holds is
  // asked afresh, in all at most this many times, then fails with ABORTED
  // naming the versions and why no version was held everywhere.
  int max_version_attempts = 10;
  // Pause before asking a batch again after a version mismatch.
  double version_retry_backoff_seconds = 0.05;
  // Deadline of each RPC attempt (one chunk), seconds; values above
  // kMaxDeadlineSeconds (infinity included) are clamped to it.
  double deadline_seconds = 10.0;
  // Largest chunk sent in one GetSamplingRate; must not exceed the server's
  // --max_batch_pairs (100000 by default).
  size_t max_batch_pairs = 50000;
  // Attempts per chunk (1 = no retries). Only UNAVAILABLE and the server's
  // CANCELLED are retried.
  int max_attempts = 5;
  // Backoff between attempts: initial * multiplier^retry, capped, then scaled by
  // a factor uniform in [1 - jitter, 1 + jitter].
  double initial_backoff_seconds = 0.1;
  double max_backoff_seconds = 2.0;
  double backoff_multiplier = 2.0;
  double backoff_jitter = 0.2;
  // Cap on gRPC's own reconnect backoff after a connection failure, so a
  // restarted server is found again quickly (gRPC's default cap is 120 s).
  int max_reconnect_backoff_ms = 1000;
  // Empty: plaintext. Otherwise TLS, trusting the PEM root certificate(s) in this file.
  std::string tls_root_cert_path;
  // Optional: the name to check in the server's certificate (tests, IP targets).
  std::string tls_server_name_override;

  // Names the broken constraint ("max_batch_pairs must be >= 1").
  absl::Status Validate() const;
};

// Answers for one (possibly split) batch, in request order.
struct RateBatch {
  std::vector<float> rates;             // keep probability of a negative, in (0, 1]
  std::vector<v1::RateSource> sources;  // EXACT / INFERRED / DEFAULT
  // Only when labels and instance keys were sent (GetDecisions):
  std::vector<bool> keep;               // positives always true
  std::vector<float> log_odds_offsets;  // log(rate) of each pair, positives included
  // Distinct snapshot versions that answered, in order of first use. One
  // entry unless the server swapped snapshots between two chunks.
  std::vector<std::string> snapshot_versions;
  int retries = 0;  // UNAVAILABLE/CANCELLED retries this batch needed
  // Partitioned: whole-batch re-asks after the parts disagreed on the version
  // and no version was still held by every part.
  int version_retries = 0;
  // Partitioned: part calls asked again for one named version (the oldest
  // every part still held) after the parts disagreed during a swap.
  int version_reasks = 0;

  size_t size() const { return rates.size(); }
};

class SamplingRateClient {
 public:
  // Errors: INVALID_ARGUMENT (options; unreadable TLS root file, naming it).
  // Does not connect: the first call does.
  static absl::StatusOr<std::unique_ptr<SamplingRateClient>> Create(
      const SamplingRateClientOptions& options);

  // Rates and sources for pairs (users[i], items[i]).
  // REQUIRES: users.size() == items.size() (else INVALID_ARGUMENT).
  // An empty batch returns an empty RateBatch without calling the server.
  absl::StatusOr<RateBatch> GetRates(absl::Span<const uint64_t> users,
                                     absl::Span<const uint64_t> items) const;

  // As GetRates, plus the server's keep decisions and log-odds offsets for
  // impressions with these labels (nonzero = positive) and instance keys.
  // REQUIRES: all four spans have the same size.
  absl::StatusOr<RateBatch> GetDecisions(absl::Span<const uint64_t> users,
                                         absl::Span<const uint64_t> items,
                                         absl::Span<const uint8_t> labels,
                                         absl::Span<const uint64_t> instance_keys) const;

  // The status (active snapshot, manifest summary, refresh history) of the
  // server of partition `part` (0: the only one when unpartitioned).
  // Retried on UNAVAILABLE like the rate calls.
  absl::StatusOr<v1::GetStatusResponse> GetStatus(size_t part = 0) const;

  // Operator action (PinVersionRequest): serve `version` and stop following
  // CURRENT, or with an empty version unpin and follow CURRENT again. With
  // reject_active the version active before the call is marked rolled back.
  // Partitioned: every part in order, stopping at the first error.
  // Returns the (last) server's active and pinned versions after the call; errors
  // carry the server's code (NOT_FOUND / DATA_LOSS: the version did not load,
  // the old one keeps serving; FAILED_PRECONDITION). UNAVAILABLE is retried
  // like the other calls only without reject_active: a repeated plain pin or
  // unpin changes nothing, a repeated rollback could reject more.
  absl::StatusOr<v1::PinVersionResponse> PinVersion(const std::string& version,
                                                    bool reject_active) const;

  const SamplingRateClientOptions& options() const { return options_; }
  // Targets, one per partition (1 when unpartitioned).
  size_t partitions() const { return stubs_.size(); }
  // Retries (UNAVAILABLE, CANCELLED) over the client's lifetime (all threads), counted as
  // each retry starts (so a call still retrying is visible).
  uint64_t total_retries() const { return total_retries_.load(std::memory_order_relaxed); }

 private:
  SamplingRateClient(const SamplingRateClientOptions& options,
                     std::vector<std::unique_ptr<v1::SamplingRateService::Stub>> stubs);

  absl::StatusOr<RateBatch> Call(absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
                                 absl::Span<const uint8_t> labels,
                                 absl::Span<const uint64_t> instance_keys) const;
  // One target's chunked, retried calls; `pin` non-empty asks for that
  // snapshot version (GetSamplingRateRequest.snapshot_version).
  absl::StatusOr<RateBatch> CallPart(size_t part, absl::Span<const uint64_t> users,
                                     absl::Span<const uint64_t> items,
                                     absl::Span<const uint8_t> labels,
                                     absl::Span<const uint64_t> instance_keys,
                                     const std::string& pin = "") const;
  // Split by partition, parts in parallel, merged, one version.
  absl::StatusOr<RateBatch> RoutedCall(absl::Span<const uint64_t> users,
                                       absl::Span<const uint64_t> items,
                                       absl::Span<const uint8_t> labels,
                                       absl::Span<const uint64_t> instance_keys) const;

  // The parts with ask[p] in parallel (pinned to `pin` when
  // non-empty); one answer per part (untouched RateBatch when not asked).
  std::vector<absl::StatusOr<RateBatch>> AskParts(const std::vector<RoutedShare>& shares,
                                                  const std::vector<bool>& ask, bool decide,
                                                  const std::string& pin) const;
  // Asks the parts that answered otherwise for each candidate
  // version in turn; true (answers replaced) when every part answered from
  // one of them, false when none was held everywhere (*why says where), an
  // error other than NOT_FOUND as it came.
  absl::StatusOr<bool> Agree(const std::vector<RoutedShare>& shares, const std::vector<bool>& used,
                             bool decide, const std::vector<std::string>& candidates,
                             std::vector<absl::StatusOr<RateBatch>>* answers, int* reasks,
                             std::string* why) const;
  absl::Status PartError(size_t part, const absl::Status& status) const;
  static size_t FirstUsed(const std::vector<bool>& used);
  static void Merge(const std::vector<RoutedShare>& shares,
                    const std::vector<absl::StatusOr<RateBatch>>& answers, bool decide, size_t n,
                    RateBatch* out);

  // Constant after construction.
  const SamplingRateClientOptions options_;
  const std::vector<std::string> targets_;                                   // per partition
  const std::vector<std::unique_ptr<v1::SamplingRateService::Stub>> stubs_;  // thread-safe
  // Statistics only.
  mutable std::atomic<uint64_t> total_retries_{0};
};

// The comma-separated entries of a target (one per partition).
std::vector<std::string> PartitionTargets(const std::string& target);

// gRPC status -> absl::Status (same code), message prefixed with `context`.
absl::Status FromGrpcStatus(const grpc::Status& status, const std::string& context);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_CLIENT_SAMPLING_RATE_CLIENT_H_
