#include "server/rate_service.h"

#include <chrono>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/serving/keep_rule.h"
#include "server/grpc_status.h"
#include "server/tsan_sync.h"
#include "server/version.h"

namespace graphsieve {
namespace {

std::string Rfc3339(absl::Time t) {
  if (t == absl::InfinitePast()) return "";
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone());
}

void FillSummary(const ServingSnapshot& snap, v1::SnapshotSummary* out) {
  const ManifestSummary& m = snap.reader->manifest();
  out->set_version(snap.version);
  out->set_created_at(m.created_at);
  out->set_method(m.method);
  out->set_alpha(m.alpha);
  out->set_floor(m.floor);
  out->set_gamma(m.gamma);
  out->set_instances(m.instances);
  out->set_pairs(m.pairs);
  out->set_positive_pairs(m.positive_pairs);
  out->set_users(m.users);
  out->set_items(m.items);
  out->set_components(m.components);
  out->set_achieved_negative_mean_rate(m.achieved_negative_mean_rate);
  out->set_resistance(m.resistance);
  out->set_sketch_dim(static_cast<uint32_t>(m.sketch_dim));
  out->set_seed(m.seed);
  out->set_input_digest(m.input_digest);
  out->set_manifest_json(m.json);
  out->set_base_version(m.base_version);
  out->set_covers_through(m.covers_through);
}

}  // namespace

absl::Status ValidateSamplingRequest(const v1::GetSamplingRateRequest& request,
                                     int max_batch_pairs) {
  const int n = request.user_ids_size();
  if (n == 0 && request.item_ids_size() == 0) {
    return absl::InvalidArgumentError("user_ids and item_ids are empty: a batch needs >= 1 pair");
  }
  if (request.item_ids_size() != n) {
    return absl::InvalidArgumentError(absl::StrCat("item_ids has ", request.item_ids_size(),
                                                   " entries but user_ids has ", n,
                                                   "; they must have the same length"));
  }
  if (n > max_batch_pairs) {
    return absl::InvalidArgumentError(
        absl::StrCat("user_ids has ", n, " pairs, more than --max-batch-pairs=", max_batch_pairs,
                     "; split the batch"));
  }
  if (request.labels_size() != 0 && request.labels_size() != n) {
    return absl::InvalidArgumentError(absl::StrCat("labels has ", request.labels_size(),
                                                   " entries but user_ids has ", n,
                                                   "; give one label per pair or none"));
  }
  if (request.instance_keys_size() != request.labels_size()) {
    if (request.labels_size() == 0) {
      return absl::InvalidArgumentError(
          "instance_keys given without labels; keep decisions need both columns");
    }
    return absl::InvalidArgumentError(absl::StrCat(
        "instance_keys has ", request.instance_keys_size(), " entries but labels has ",
        request.labels_size(), "; keep decisions need one instance key per labelled pair"));
  }
  return absl::OkStatus();
}

void FillStatus(const ManagerState& state, v1::GetStatusResponse* response) {
  response->set_serving(state.active != nullptr);
  if (state.active != nullptr) {
    FillSummary(*state.active, response->mutable_active());
    if (state.active->created_at != absl::InfinitePast()) {
      response->set_snapshot_age_seconds(
          absl::ToDoubleSeconds(absl::Now() - state.active->created_at));
    }
    const absl::Time newest = NewestCovered(*state.active);
    if (newest != absl::InfinitePast()) {
      response->set_freshness_lag_seconds(absl::ToDoubleSeconds(absl::Now() - newest));
    }
  }
  response->set_held_version(state.held);
  response->set_current_on_disk(state.current_on_disk);
  response->set_current_error(state.current_error);
  for (const std::string& v : state.versions_on_disk) response->add_versions_on_disk(v);
  response->set_pinned_version(state.pinned);
  for (const std::string& v : state.rejected) response->add_rejected_versions(v);
  for (const RefreshEventRecord& e : state.history) {
    v1::RefreshEvent* out = response->add_refresh_history();
    out->set_version(e.version);
    out->set_at(Rfc3339(e.at));
    out->set_ok(e.ok);
    out->set_message(e.message);
    out->set_load_seconds(e.load_seconds);
  }
  response->set_server_version(kServerVersion);
}

SamplingRateServiceImpl::SamplingRateServiceImpl(const ServerOptions& options,
                                                 SnapshotManager* manager, ServerMetrics* metrics,
                                                 CallGate gate)
    : max_batch_pairs_(options.max_batch_pairs),
      pool_(options.lookup_helpers),
      scorer_(options.default_policy, options.chunk_pairs, &pool_),
      manager_(manager),
      metrics_(metrics),
      gate_(std::move(gate)) {}

absl::Status SamplingRateServiceImpl::Answer(grpc::CallbackServerContext* context,
                                             const v1::GetSamplingRateRequest& request,
                                             v1::GetSamplingRateResponse* response,
                                             SourceCounts* counts) const {
  absl::Status valid = ValidateSamplingRequest(request, max_batch_pairs_);
  if (!valid.ok()) return valid;
  // One snapshot for the whole batch, even if the refresher swaps meanwhile.
  std::shared_ptr<const ServingSnapshot> snap;
  if (request.snapshot_version().empty()) {
    snap = manager_->Current();
    if (snap == nullptr) {
      return absl::UnavailableError("no snapshot loaded yet; retry once the server is ready");
    }
  } else {  // pinned to a version: the active one or the held previous one
    bool held = false;
    absl::StatusOr<std::shared_ptr<const ServingSnapshot>> found =
        manager_->Find(request.snapshot_version(), &held);
    metrics_->ObservePinnedRequest(
        found.ok() ? (held ? "held" : "active")
                   : (absl::IsNotFound(found.status()) ? "not_held" : "unavailable"));
    if (!found.ok()) return found.status();
    snap = *std::move(found);
  }
  const size_t n = static_cast<size_t>(request.user_ids_size());
  response->mutable_rates()->Resize(static_cast<int>(n), 0.0f);
  response->mutable_sources()->Resize(static_cast<int>(n), 0);
  const auto deadline = context->deadline();
  auto should_stop = [context, deadline, n]() -> absl::Status {
    if (std::chrono::system_clock::now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrCat("deadline exceeded while scoring a batch of ", n, " pairs"));
    }
    if (context->IsCancelled()) {
      return absl::CancelledError(absl::StrCat("cancelled while scoring a batch of ", n, " pairs"));
    }
    return absl::OkStatus();
  };
  // Per-thread, grown once: no allocation per call after a thread's first
  // batch of this size.
  thread_local std::vector<RateSource> sources;
  if (sources.size() < n) sources.resize(n);
  absl::Status st = scorer_.Score(*snap->reader, absl::MakeConstSpan(request.user_ids().data(), n),
                                  absl::MakeConstSpan(request.item_ids().data(), n), should_stop,
                                  absl::MakeSpan(response->mutable_rates()->mutable_data(), n),
                                  absl::MakeSpan(sources.data(), n), counts);
  if (!st.ok()) return st;
  int* proto_sources = response->mutable_sources()->mutable_data();
  for (size_t i = 0; i < n; ++i) proto_sources[i] = ToProtoRateSource(sources[i]);
  if (request.labels_size() > 0) {
    response->mutable_keep()->Resize(static_cast<int>(n), false);
    response->mutable_log_odds_offsets()->Resize(static_cast<int>(n), 0.0f);
    DecideKeep(absl::MakeConstSpan(response->rates().data(), n),
               absl::MakeConstSpan(request.labels().data(), n),
               absl::MakeConstSpan(request.instance_keys().data(), n),
               snap->reader->manifest().seed,
               absl::MakeSpan(response->mutable_keep()->mutable_data(), n),
               absl::MakeSpan(response->mutable_log_odds_offsets()->mutable_data(), n));
  }
  response->set_snapshot_version(snap->version);
  return absl::OkStatus();
}

grpc::ServerUnaryReactor* SamplingRateServiceImpl::GetSamplingRate(
    grpc::CallbackServerContext* context, const v1::GetSamplingRateRequest* request,
    v1::GetSamplingRateResponse* response) {
  const absl::Time start = absl::Now();
  metrics_->AddInflight(1);
  if (gate_) gate_(*context, drain_started_);  // a test seam; none in the shipped server
  SourceCounts counts;
  absl::Status st = Answer(context, *request, response, &counts);
  if (!st.ok()) response->Clear();
  const grpc::Status out = ToGrpcStatus(st);
  metrics_->ObserveSamplingRate(GrpcCodeName(out.error_code()),
                                absl::ToDoubleSeconds(absl::Now() - start),
                                st.ok() ? &counts : nullptr);
  if (st.ok() && request->labels_size() > 0) {  // negatives served (dashboard, /metrics)
    metrics_->ObserveLabelled(response->snapshot_version(), request->labels(), response->rates(),
                              response->keep());
  }
  metrics_->AddInflight(-1);
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  TsanRelease(this);  // before Wait() returns (server/tsan_sync.h)
  reactor->Finish(out);
  return reactor;
}

grpc::ServerUnaryReactor* SamplingRateServiceImpl::GetStatus(grpc::CallbackServerContext* context,
                                                             const v1::GetStatusRequest* request,
                                                             v1::GetStatusResponse* response) {
  FillStatus(manager_->State(), response);
  metrics_->ObserveRpc("GetStatus", "OK");
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  TsanRelease(this);  // before Wait() returns (server/tsan_sync.h)
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

grpc::ServerUnaryReactor* SamplingRateServiceImpl::PinVersion(grpc::CallbackServerContext* context,
                                                              const v1::PinVersionRequest* request,
                                                              v1::PinVersionResponse* response) {
  absl::Status st = manager_->Pin(request->version(), request->reject_active());
  if (st.ok()) {
    const ManagerState state = manager_->State();
    response->set_active_version(state.active ? state.active->version : "");
    response->set_pinned_version(state.pinned);
  }
  const grpc::Status out = ToGrpcStatus(st);
  metrics_->ObserveRpc("PinVersion", GrpcCodeName(out.error_code()));
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  TsanRelease(this);  // before Wait() returns (server/tsan_sync.h)
  reactor->Finish(out);
  return reactor;
}

}  // namespace graphsieve
