#include "client/sampling_rate_client.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/random/random.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "client/batching.h"
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
  return text.str();
}

// Runs `attempt` (one RPC with a fresh context) until it succeeds, fails with a
// code other than UNAVAILABLE, or max_attempts is reached. Each retry is counted
// in *retries and, as it starts, in *total (the client's live total).
template <typename Attempt>
grpc::Status WithRetries(const SamplingRateClientOptions& options, int max_attempts,
                         Attempt attempt, int* retries, std::atomic<uint64_t>* total) {
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
    context.set_deadline(
        std::chrono::system_clock::now() +
        std::chrono::microseconds(static_cast<int64_t>(options.deadline_seconds * 1e6)));
    status = attempt(&context);
    if (status.error_code() != grpc::StatusCode::UNAVAILABLE) return status;
  }
  return status;
}

// One unary RPC `rpc` (a Stub method) with WithRetries; errors name the target and the RPC.
template <typename Request, typename Response>
absl::StatusOr<Response> UnaryCall(
    const SamplingRateClientOptions& options, const std::string& target, int max_attempts,
    v1::SamplingRateService::Stub* stub,
    grpc::Status (v1::SamplingRateService::Stub::*rpc)(grpc::ClientContext*, const Request&,
                                                       Response*),
    const Request& request, const char* rpc_name, int* retries, std::atomic<uint64_t>* total) {
  Response response;
  const grpc::Status status = WithRetries(
      options, max_attempts,
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
  return RoutedCall(users, items, labels, keys);  // routed_call.cc
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
        options_, options_.max_attempts,
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
                            "GetStatus", &retries, &total_retries_);
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
                         "PinVersion", &retries, &total_retries_);
    if (!response.ok()) break;
  }
  return response;
}

}  // namespace graphsieve
