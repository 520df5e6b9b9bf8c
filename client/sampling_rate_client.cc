#include "client/sampling_rate_client.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/batching.h"
#include "core/io/partition.h"
#include "grpcpp/grpcpp.h"

namespace graphsieve {
namespace {

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::InvalidArgumentError(absl::StrCat("cannot read TLS root cert '", path, "'"));
  std::ostringstream text;
  text << in.rdbuf();
  if (text.str().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("TLS root cert '", path, "' is empty"));
  }
  // gRPC takes any bytes and fails later with a message naming no file.
  if (text.str().find("-----BEGIN CERTIFICATE-----") == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TLS root cert '", path, "' is not PEM (no '-----BEGIN CERTIFICATE-----' line)"));
  }
  return text.str();
}

// The deadline of an attempt starting now. deadline_seconds is clamped to
// kMaxDeadlineSeconds first, so a huge or infinite value (which Validate lets
// through: > 0) is a far deadline, not an int64 overflow that expires at once.
std::chrono::system_clock::time_point AttemptDeadline(double deadline_seconds) {
  const double seconds = std::min(deadline_seconds, kMaxDeadlineSeconds);
  return std::chrono::system_clock::now() +
         std::chrono::microseconds(static_cast<int64_t>(seconds * 1e6));
}

// Whether a call may be retried when the server answers CANCELLED. A draining
// server answers CANCELLED to a call that had reached it but not a handler
// (docs/SERVER.md), so reads (GetSamplingRate, GetStatus) retry it like
// UNAVAILABLE; PinVersion, which changes the server, does not. The library
// never cancels a call itself (no caller cancellation path), so a CANCELLED
// seen here comes from the server.
enum class RetryCancelled { kNo, kYes };

// Whether `status` is retried (UNAVAILABLE, or CANCELLED per `cancelled`).
bool Retryable(const grpc::Status& status, RetryCancelled cancelled) {
  return status.error_code() == grpc::StatusCode::UNAVAILABLE ||
         (cancelled == RetryCancelled::kYes && status.error_code() == grpc::StatusCode::CANCELLED);
}

// A final CANCELLED of a retried read, its message saying why it may have come.
grpc::Status ExplainCancelled(const grpc::Status& status, int attempts) {
  if (status.error_code() != grpc::StatusCode::CANCELLED) return status;
  return grpc::Status(
      status.error_code(),
      absl::StrCat(status.error_message(), " (", attempts, attempts == 1 ? " attempt" : " attempts",
                   "; the server may have been draining after SIGTERM)"));
}

// Runs `attempt` (one RPC with a fresh context) until it succeeds, fails with a
// code other than UNAVAILABLE (or CANCELLED, per `cancelled`), or max_attempts
// is reached. Each retry is counted in *retries and, as it starts, in *total
// (the client's live total).
template <typename Attempt>
grpc::Status WithRetries(const SamplingRateClientOptions& options, int max_attempts,
                         RetryCancelled cancelled, Attempt attempt, int* retries,
                         std::atomic<uint64_t>* total) {
  BackoffPolicy backoff{options.initial_backoff_seconds, options.max_backoff_seconds,
                        options.backoff_multiplier, options.backoff_jitter};
  absl::BitGen gen;
  grpc::Status status;
  for (int i = 0; i < max_attempts; ++i) {
    if (i > 0) {
      absl::SleepFor(absl::Seconds(BackoffSeconds(backoff, i - 1, absl::Uniform(gen, 0.0, 1.0))));
      ++*retries;
      total->fetch_add(1, std::memory_order_relaxed);
    }
    grpc::ClientContext context;
    context.set_deadline(AttemptDeadline(options.deadline_seconds));
    status = attempt(&context);
    if (!Retryable(status, cancelled)) return status;
  }
  return cancelled == RetryCancelled::kYes ? ExplainCancelled(status, max_attempts) : status;
}

// One unary RPC `rpc` (a Stub method) with WithRetries; errors name the target and the RPC.
template <typename Request, typename Response>
absl::StatusOr<Response> UnaryCall(
    const SamplingRateClientOptions& options, const std::string& target, int max_attempts,
    v1::SamplingRateService::Stub* stub,
    grpc::Status (v1::SamplingRateService::Stub::*rpc)(grpc::ClientContext*, const Request&,
                                                       Response*),
    const Request& request, const char* rpc_name, RetryCancelled cancelled, int* retries,
    std::atomic<uint64_t>* total) {
  Response response;
  const grpc::Status status = WithRetries(
      options, max_attempts, cancelled,
      [&](grpc::ClientContext* ctx) {
        response.Clear();
        return (stub->*rpc)(ctx, request, &response);
      },
      retries, total);
  if (!status.ok()) {
    return FromGrpcStatus(status, absl::StrCat("server ", target, ": ", rpc_name));
  }
  return response;
}

}  // namespace

absl::Status FromGrpcStatus(const grpc::Status& status, const std::string& context) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      absl::StrCat(context, ": ", status.error_message()));
}

absl::Status SamplingRateClientOptions::Validate() const {
  if (target.empty()) return absl::InvalidArgumentError("target (host:port) is empty");
  if (!(deadline_seconds > 0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("deadline_seconds must be > 0, got ", deadline_seconds));
  }
  if (max_batch_pairs < 1) return absl::InvalidArgumentError("max_batch_pairs must be >= 1");
  if (max_attempts < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_attempts must be >= 1, got ", max_attempts));
  }
  if (!(initial_backoff_seconds >= 0) || !(max_backoff_seconds >= initial_backoff_seconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "backoff must satisfy 0 <= initial_backoff_seconds <= max_backoff_seconds, got ",
        initial_backoff_seconds, " and ", max_backoff_seconds));
  }
  if (!(backoff_multiplier >= 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("backoff_multiplier must be >= 1, got ", backoff_multiplier));
  }
  if (!(backoff_jitter >= 0 && backoff_jitter < 1)) {
    return absl::InvalidArgumentError(
        absl::StrCat("backoff_jitter must be in [0, 1), got ", backoff_jitter));
  }
  if (max_version_attempts < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_version_attempts must be >= 1, got ", max_version_attempts));
  }
  for (const std::string& t : PartitionTargets(target)) {
    if (t.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "target '", target, "': an empty entry in the comma-separated partition list"));
    }
  }
  if (max_reconnect_backoff_ms < 100) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_reconnect_backoff_ms must be >= 100, got ", max_reconnect_backoff_ms));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<SamplingRateClient>> SamplingRateClient::Create(
    const SamplingRateClientOptions& options) {
  if (absl::Status s = options.Validate(); !s.ok()) return s;
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  if (options.tls_root_cert_path.empty()) {
    credentials = grpc::InsecureChannelCredentials();
  } else {
    absl::StatusOr<std::string> roots = ReadWholeFile(options.tls_root_cert_path);
    if (!roots.ok()) return roots.status();
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = *std::move(roots);
    credentials = grpc::SslCredentials(ssl);
  }
  grpc::ChannelArguments args;
  args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS,
              std::min(100, options.max_reconnect_backoff_ms));
  // Not GRPC_ARG_MIN_RECONNECT_BACKOFF_MS: despite its name it is gRPC's
  // minimum *connect timeout* per attempt (gRPC's connection backoff protocol:
  // TryConnect(max(deadline, now + MIN_CONNECT_TIMEOUT))). Set to 100 ms it cut
  // off TCP + HTTP/2 handshakes that took longer on a loaded server, and calls
  // failed UNAVAILABLE (docs/RELIABILITY.md, swaps campaign). Its default
  // (20 s) is kept; a refused connection still fails at once, and the backoff
  // between attempts is the two arguments around this comment.
  args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, options.max_reconnect_backoff_ms);
  args.SetMaxReceiveMessageSize(-1);
  args.SetMaxSendMessageSize(-1);
  if (!options.tls_server_name_override.empty()) {
    args.SetSslTargetNameOverride(options.tls_server_name_override);
  }
  if (!options.lb_policy.empty()) args.SetLoadBalancingPolicyName(options.lb_policy);
  std::vector<std::unique_ptr<v1::SamplingRateService::Stub>> stubs;
  for (const std::string& target : PartitionTargets(options.target)) {
    stubs.push_back(
        v1::SamplingRateService::NewStub(grpc::CreateCustomChannel(target, credentials, args)));
  }
  return std::unique_ptr<SamplingRateClient>(new SamplingRateClient(options, std::move(stubs)));
}

std::vector<std::string> PartitionTargets(const std::string& target) {
  return absl::StrSplit(target, ',');
}

SamplingRateClient::SamplingRateClient(
    const SamplingRateClientOptions& options,
    std::vector<std::unique_ptr<v1::SamplingRateService::Stub>> stubs)
    : options_(options), targets_(PartitionTargets(options.target)), stubs_(std::move(stubs)) {}

absl::StatusOr<RateBatch> SamplingRateClient::GetRates(absl::Span<const uint64_t> users,
                                                       absl::Span<const uint64_t> items) const {
  return Call(users, items, {}, {});
}

absl::StatusOr<RateBatch> SamplingRateClient::GetDecisions(
    absl::Span<const uint64_t> users, absl::Span<const uint64_t> items,
    absl::Span<const uint8_t> labels, absl::Span<const uint64_t> instance_keys) const {
  if (labels.size() != users.size() || instance_keys.size() != users.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "GetDecisions: labels (", labels.size(), ") and instance_keys (", instance_keys.size(),
        ") must have as many entries as user_ids (", users.size(), ")"));
  }
  return Call(users, items, labels, instance_keys);
}

absl::StatusOr<RateBatch> SamplingRateClient::Call(absl::Span<const uint64_t> users,
                                                   absl::Span<const uint64_t> items,
                                                   absl::Span<const uint8_t> labels,
                                                   absl::Span<const uint64_t> keys) const {
  if (users.size() != items.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("GetRates: ", users.size(), " user_ids but ", items.size(), " item_ids"));
  }
  if (stubs_.size() == 1) return CallPart(0, users, items, labels, keys);
  return RoutedCall(users, items, labels, keys);
}

absl::StatusOr<RateBatch> SamplingRateClient::CallPart(size_t part,
                                                       absl::Span<const uint64_t> users,
                                                       absl::Span<const uint64_t> items,
                                                       absl::Span<const uint8_t> labels,
                                                       absl::Span<const uint64_t> keys,
                                                       const std::string& pin) const {
  const bool decide = !labels.empty();
  const size_t n = users.size();
  RateBatch out;
  out.rates.resize(n);
  out.sources.resize(n);
  if (decide) {
    out.keep.resize(n);
    out.log_odds_offsets.resize(n);
  }
  const std::string context = absl::StrCat("server ", targets_[part], ": GetSamplingRate");
  for (const ChunkRange& chunk : SplitIntoChunks(n, options_.max_batch_pairs)) {
    v1::GetSamplingRateRequest request;
    request.mutable_user_ids()->Add(users.begin() + chunk.begin, users.begin() + chunk.end);
    request.mutable_item_ids()->Add(items.begin() + chunk.begin, items.begin() + chunk.end);
    if (decide) {
      request.mutable_labels()->Reserve(static_cast<int>(chunk.size()));
      for (size_t i = chunk.begin; i < chunk.end; ++i) request.add_labels(labels[i] != 0);
      request.mutable_instance_keys()->Add(keys.begin() + chunk.begin, keys.begin() + chunk.end);
    }
    if (!pin.empty()) request.set_snapshot_version(pin);
    v1::GetSamplingRateResponse response;
    const grpc::Status status = WithRetries(
        options_, options_.max_attempts, RetryCancelled::kYes,
        [&](grpc::ClientContext* ctx) {
          response.Clear();
          return stubs_[part]->GetSamplingRate(ctx, request, &response);
        },
        &out.retries, &total_retries_);
    if (!status.ok()) {
      return FromGrpcStatus(status, context);
    }
    const size_t m = chunk.size();
    if (static_cast<size_t>(response.rates_size()) != m ||
        static_cast<size_t>(response.sources_size()) != m ||
        (decide && (static_cast<size_t>(response.keep_size()) != m ||
                    static_cast<size_t>(response.log_odds_offsets_size()) != m))) {
      return absl::DataLossError(
          absl::StrCat(context, ": the server answered ", response.rates_size(), " rates, ",
                       response.sources_size(), " sources, ", response.keep_size(),
                       " keep decisions for ", m, " pairs"));
    }
    std::copy(response.rates().begin(), response.rates().end(), out.rates.begin() + chunk.begin);
    for (size_t i = 0; i < m; ++i) {
      out.sources[chunk.begin + i] =
          static_cast<v1::RateSource>(response.sources(static_cast<int>(i)));
    }
    if (decide) {
      for (size_t i = 0; i < m; ++i) out.keep[chunk.begin + i] = response.keep(static_cast<int>(i));
      std::copy(response.log_odds_offsets().begin(), response.log_odds_offsets().end(),
                out.log_odds_offsets.begin() + chunk.begin);
    }
    if (std::find(out.snapshot_versions.begin(), out.snapshot_versions.end(),
                  response.snapshot_version()) == out.snapshot_versions.end()) {
      out.snapshot_versions.push_back(response.snapshot_version());
    }
  }
  return out;
}

absl::StatusOr<v1::GetStatusResponse> SamplingRateClient::GetStatus(size_t part) const {
  if (part >= stubs_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("GetStatus: partition ", part, " of ", stubs_.size(), " targets"));
  }
  int retries = 0;
  auto response = UnaryCall(options_, targets_[part], options_.max_attempts, stubs_[part].get(),
                            &v1::SamplingRateService::Stub::GetStatus, v1::GetStatusRequest(),
                            "GetStatus", RetryCancelled::kYes, &retries, &total_retries_);
  return response;
}

absl::StatusOr<v1::PinVersionResponse> SamplingRateClient::PinVersion(const std::string& version,
                                                                      bool reject_active) const {
  v1::PinVersionRequest request;
  request.set_version(version);
  request.set_reject_active(reject_active);
  int retries = 0;
  absl::StatusOr<v1::PinVersionResponse> response;
  // Every part in order; the first failure stops (earlier parts stay pinned).
  for (size_t part = 0; part < stubs_.size(); ++part) {
    response = UnaryCall(options_, targets_[part], reject_active ? 1 : options_.max_attempts,
                         stubs_[part].get(), &v1::SamplingRateService::Stub::PinVersion, request,
                         "PinVersion", RetryCancelled::kNo, &retries, &total_retries_);
    if (!response.ok()) break;
  }
  return response;
}

// Over a partitioned deployment (docs/CLIENTS.md "Partitioned deployments"):
// split by core/io/partition.h, call the parts in parallel, merge in request
// order, one snapshot version per batch.
// One part's share of a batch: request positions and the gathered columns.
struct RoutedShare {
  std::vector<size_t> positions;
  std::vector<uint64_t> users, items, keys;
  std::vector<uint8_t> labels;
};

namespace {

using PartShare = RoutedShare;

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

// One part's first attempt in flight on gRPC's callback API: all parts'
// calls overlap without a thread per part.
struct InFlight {
  grpc::ClientContext context;
  v1::GetSamplingRateRequest request;
  v1::GetSamplingRateResponse response;
  grpc::Status status;
};

// The response as a RateBatch, or DATA_LOSS when its sizes do not match.
absl::StatusOr<RateBatch> FromResponse(const v1::GetSamplingRateResponse& r, size_t n, bool decide,
                                       const std::string& target) {
  if (static_cast<size_t>(r.rates_size()) != n || static_cast<size_t>(r.sources_size()) != n ||
      (decide && (static_cast<size_t>(r.keep_size()) != n ||
                  static_cast<size_t>(r.log_odds_offsets_size()) != n))) {
    return absl::DataLossError(absl::StrCat("server ", target, ": GetSamplingRate: answered ",
                                            r.rates_size(), " rates for ", n, " pairs"));
  }
  RateBatch b;
  b.rates.assign(r.rates().begin(), r.rates().end());
  b.sources.reserve(n);
  for (int s : r.sources()) b.sources.push_back(static_cast<v1::RateSource>(s));
  if (decide) {
    b.keep.assign(r.keep().begin(), r.keep().end());
    b.log_odds_offsets.assign(r.log_odds_offsets().begin(), r.log_odds_offsets().end());
  }
  b.snapshot_versions.push_back(r.snapshot_version());
  return b;
}

// Splits `versions` (distinct, in order of first use) oldest first: version
// ids start with their UTC creation time, so byte order is age order.
std::vector<std::string> OldestFirst(std::vector<std::string> versions) {
  std::sort(versions.begin(), versions.end());
  return versions;
}

bool AnsweredOnly(const RateBatch& b, const std::string& version) {
  return b.snapshot_versions.size() == 1 && b.snapshot_versions[0] == version;
}

}  // namespace

std::vector<absl::StatusOr<RateBatch>> SamplingRateClient::AskParts(
    const std::vector<PartShare>& shares, const std::vector<bool>& ask, bool decide,
    const std::string& pin) const {
  const size_t parts = shares.size();
  // Every asked part's first attempt in flight at once (callback API); a part
  // that needs chunks, or whose attempt was UNAVAILABLE, then goes through
  // CallPart (chunks, retries with backoff) on this thread.
  std::vector<absl::StatusOr<RateBatch>> answers(parts, RateBatch());
  std::vector<std::unique_ptr<InFlight>> calls(parts);
  // Shared with the callbacks, so the last one may still be unlocking it
  // when this thread returns.
  struct Pending {
    absl::Mutex mu;
    size_t outstanding ABSL_GUARDED_BY(mu) = 0;
  };
  auto pending = std::make_shared<Pending>();
  for (size_t p = 0; p < parts; ++p) {
    const PartShare& s = shares[p];
    if (!ask[p] || s.positions.size() > options_.max_batch_pairs) continue;
    auto call = std::make_unique<InFlight>();
    call->request.mutable_user_ids()->Add(s.users.begin(), s.users.end());
    call->request.mutable_item_ids()->Add(s.items.begin(), s.items.end());
    if (decide) {
      for (uint8_t l : s.labels) call->request.add_labels(l != 0);
      call->request.mutable_instance_keys()->Add(s.keys.begin(), s.keys.end());
    }
    if (!pin.empty()) call->request.set_snapshot_version(pin);
    call->context.set_deadline(AttemptDeadline(options_.deadline_seconds));
    {
      absl::MutexLock lock(&pending->mu);
      ++pending->outstanding;
    }
    InFlight* c = call.get();
    stubs_[p]->async()->GetSamplingRate(&c->context, &c->request, &c->response,
                                        [c, pending](grpc::Status status) {
                                          absl::MutexLock lock(&pending->mu);
                                          c->status = std::move(status);
                                          --pending->outstanding;
                                        });
    calls[p] = std::move(call);
  }
  for (size_t p = 0; p < parts; ++p) {
    if (ask[p] && calls[p] == nullptr) {
      const PartShare& s = shares[p];
      answers[p] = CallPart(p, s.users, s.items, s.labels, s.keys, pin);
    }
  }
  {
    absl::MutexLock lock(&pending->mu);
    pending->mu.Await(absl::Condition(
        +[](Pending* w) { return w->outstanding == 0; }, pending.get()));
  }
  for (size_t p = 0; p < parts; ++p) {
    if (calls[p] == nullptr) continue;
    const PartShare& s = shares[p];
    const grpc::Status& st = calls[p]->status;
    if (st.ok()) {
      answers[p] = FromResponse(calls[p]->response, s.positions.size(), decide, targets_[p]);
    } else if (Retryable(st, RetryCancelled::kYes)) {
      total_retries_.fetch_add(1, std::memory_order_relaxed);  // the async attempt
      answers[p] = CallPart(p, s.users, s.items, s.labels, s.keys, pin);
      if (answers[p].ok()) answers[p]->retries += 1;
    } else {
      answers[p] = FromGrpcStatus(st, absl::StrCat("server ", targets_[p], ": GetSamplingRate"));
    }
  }
  return answers;
}

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
  std::vector<bool> used(parts);
  for (size_t p = 0; p < parts; ++p) used[p] = !shares[p].positions.empty();
  std::vector<std::string> seen;  // versions of the last disagreeing attempt
  std::string why;                // why no version was held by every part
  for (int attempt = 0; attempt < options_.max_version_attempts; ++attempt) {
    if (attempt > 0) {
      absl::SleepFor(absl::Seconds(options_.version_retry_backoff_seconds));
      ++out.version_retries;
    }
    std::vector<absl::StatusOr<RateBatch>> answers = AskParts(shares, used, decide, "");
    // Errors first (with the part's target in the message), then versions.
    std::vector<std::string> versions;
    for (size_t p = 0; p < parts; ++p) {
      if (!used[p]) continue;
      if (!answers[p].ok()) return PartError(p, answers[p].status());
      for (const std::string& v : answers[p]->snapshot_versions) {
        if (std::find(versions.begin(), versions.end(), v) == versions.end()) versions.push_back(v);
      }
    }
    if (versions.size() > 1) {
      // A swap in progress: ask the parts that answered otherwise for one
      // version every part still holds, oldest first (the parts that swapped
      // keep the version before for a while: GetSamplingRateRequest.
      // snapshot_version). None held everywhere: ask the whole batch afresh.
      seen = versions;
      absl::StatusOr<bool> agreed =
          Agree(shares, used, decide, OldestFirst(versions), &answers, &out.version_reasks, &why);
      if (!agreed.ok()) return agreed.status();
      if (!*agreed) continue;
      versions = answers[FirstUsed(used)]->snapshot_versions;
    }
    Merge(shares, answers, decide, n, &out);
    out.snapshot_versions = versions;
    // UNAVAILABLE retries were counted by CallPart as they started.
    total_retries_.fetch_add(out.version_retries, std::memory_order_relaxed);
    return out;
  }
  total_retries_.fetch_add(out.version_retries, std::memory_order_relaxed);
  return absl::AbortedError(absl::StrCat(
      "partitioned targets ", options_.target,
      ": the parts answered from different snapshot "
      "versions (",
      absl::StrJoin(seen, ", "), ") in each of ", options_.max_version_attempts,
      " attempts and no part still held a version every other part served (", why,
      "); a swap is in progress for longer than the servers' --previous-version-hold-seconds, "
      "or the parts follow different roots"));
}

absl::StatusOr<bool> SamplingRateClient::Agree(const std::vector<PartShare>& shares,
                                               const std::vector<bool>& used, bool decide,
                                               const std::vector<std::string>& candidates,
                                               std::vector<absl::StatusOr<RateBatch>>* answers,
                                               int* reasks, std::string* why) const {
  const size_t parts = shares.size();
  for (const std::string& version : candidates) {
    std::vector<bool> ask(parts, false);
    for (size_t p = 0; p < parts; ++p) ask[p] = used[p] && !AnsweredOnly(*(*answers)[p], version);
    std::vector<absl::StatusOr<RateBatch>> again = AskParts(shares, ask, decide, version);
    bool all = true;
    for (size_t p = 0; p < parts && all; ++p) {
      if (!ask[p]) continue;
      ++*reasks;
      if (again[p].ok()) {
        all = AnsweredOnly(*again[p], version);  // an old server ignores the field
        if (!all) *why = absl::StrCat("partition ", p, " ignored snapshot_version");
      } else if (absl::IsNotFound(again[p].status())) {
        all = false;
        *why = absl::StrCat("partition ", p, ": ", again[p].status().message());
      } else {
        return PartError(p, again[p].status());
      }
    }
    if (!all) continue;
    for (size_t p = 0; p < parts; ++p) {
      if (ask[p]) (*answers)[p] = std::move(again[p]);
    }
    return true;
  }
  return false;
}

absl::Status SamplingRateClient::PartError(size_t part, const absl::Status& status) const {
  return absl::Status(status.code(), absl::StrCat("partition ", part, " of ", stubs_.size(), ": ",
                                                  status.message()));
}

size_t SamplingRateClient::FirstUsed(const std::vector<bool>& used) {
  return static_cast<size_t>(std::find(used.begin(), used.end(), true) - used.begin());
}

void SamplingRateClient::Merge(const std::vector<PartShare>& shares,
                               const std::vector<absl::StatusOr<RateBatch>>& answers, bool decide,
                               size_t n, RateBatch* out) {
  out->rates.resize(n);
  out->sources.resize(n);
  if (decide) {
    out->keep.resize(n);
    out->log_odds_offsets.resize(n);
  }
  for (size_t p = 0; p < shares.size(); ++p) {
    const PartShare& s = shares[p];
    if (s.positions.empty()) continue;
    const RateBatch& a = *answers[p];
    out->retries += a.retries;
    for (size_t k = 0; k < s.positions.size(); ++k) {
      const size_t i = s.positions[k];
      out->rates[i] = a.rates[k];
      out->sources[i] = a.sources[k];
      if (decide) {
        out->keep[i] = a.keep[k];
        out->log_odds_offsets[i] = a.log_odds_offsets[k];
      }
    }
  }
}

}  // namespace graphsieve
