#include "server/metrics.h"

#include <algorithm>
#include <cmath>

#include "prometheus/text_serializer.h"

namespace graphsieve {
namespace {

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* const kBuckets = new prometheus::Histogram::BucketBoundaries{
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0};
  return *kBuckets;
}

const prometheus::Histogram::BucketBoundaries& RateBuckets() {
  static const auto* const kBuckets = [] {
    auto* b = new prometheus::Histogram::BucketBoundaries;
    for (int i = 1; i <= 20; ++i) b->push_back(i / 20.0);
    return b;
  }();
  return *kBuckets;
}

}  // namespace

ServerMetrics::ServerMetrics() : registry_(std::make_shared<prometheus::Registry>()) {
  using prometheus::BuildCounter;
  using prometheus::BuildGauge;
  using prometheus::BuildHistogram;
  requests_ = &BuildCounter()
                   .Name("graphsieve_requests_total")
                   .Help("Finished RPCs by method and gRPC status code")
                   .Register(*registry_);
  errors_ = &BuildCounter()
                 .Name("graphsieve_request_errors_total")
                 .Help("GetSamplingRate calls that did not return OK, by gRPC status code")
                 .Register(*registry_);
  sampling_ok_ = &requests_->Add({{"method", "GetSamplingRate"}, {"code", "OK"}});
  auto& pairs = BuildCounter()
                    .Name("graphsieve_pairs_total")
                    .Help("Pairs answered by GetSamplingRate, by rate source")
                    .Register(*registry_);
  pairs_exact_ = &pairs.Add({{"source", "exact"}});
  pairs_inferred_ = &pairs.Add({{"source", "inferred"}});
  pairs_default_ = &pairs.Add({{"source", "default"}});
  helper_pairs_ = &BuildCounter()
                       .Name("graphsieve_helper_pairs_total")
                       .Help(
                           "Pairs of GetSamplingRate batches scored on a --lookup-helpers "
                           "thread while the call was the only one being scored")
                       .Register(*registry_)
                       .Add({});
  latency_ = &BuildHistogram()
                  .Name("graphsieve_request_latency_seconds")
                  .Help("GetSamplingRate latency in the handler (validation to finish)")
                  .Register(*registry_)
                  .Add({}, LatencyBuckets());
  inflight_ = &BuildGauge()
                   .Name("graphsieve_inflight_requests")
                   .Help("GetSamplingRate calls being handled")
                   .Register(*registry_)
                   .Add({});
  pinned_ = &BuildCounter()
                 .Name("graphsieve_version_pinned_requests_total")
                 .Help(
                     "GetSamplingRate calls naming a snapshot_version, by result: "
                     "active, held (the previous version), not_held, unavailable")
                 .Register(*registry_);
  info_family_ = &BuildGauge()
                      .Name("graphsieve_snapshot_info")
                      .Help("1 for the snapshot version being served")
                      .Register(*registry_);
  age_ = &BuildGauge()
              .Name("graphsieve_snapshot_age_seconds")
              .Help("Seconds since the serving snapshot was created (its manifest's created_at)")
              .Register(*registry_)
              .Add({});
  lag_ = &BuildGauge()
              .Name("graphsieve_freshness_lag_seconds")
              .Help("Seconds since the newest impression the serving version covers")
              .Register(*registry_)
              .Add({});
  layers_ = &BuildGauge()
                 .Name("graphsieve_snapshot_layers")
                 .Help("2 for a delta version served over its base, 1 for a full version")
                 .Register(*registry_)
                 .Add({});
  serving_ = &BuildGauge()
                  .Name("graphsieve_snapshot_serving")
                  .Help("1 when a validated snapshot is loaded")
                  .Register(*registry_)
                  .Add({});
  auto& refresh = BuildCounter()
                      .Name("graphsieve_refresh_total")
                      .Help("Refresh events (loads, pins, rollbacks) by result")
                      .Register(*registry_);
  refresh_ok_ = &refresh.Add({{"result", "success"}});
  refresh_failed_ = &refresh.Add({{"result", "failure"}});
  watch_events_ = &BuildCounter()
                       .Name("graphsieve_snapshot_watch_events_total")
                       .Help(
                           "Polls of CURRENT started at once by its inotify watch (the periodic "
                           "poll is the fallback)")
                       .Register(*registry_)
                       .Add({});
  load_seconds_ = &BuildGauge()
                       .Name("graphsieve_snapshot_load_seconds")
                       .Help("Open + validate + warm/index time of the last snapshot load")
                       .Register(*registry_)
                       .Add({});
  index_bytes_ =
      &BuildGauge()
           .Name("graphsieve_snapshot_index_bytes")
           .Help("RAM of the serving version's in-memory index (0 with --lookup=rocksdb)")
           .Register(*registry_)
           .Add({});
  auto& negatives =
      BuildCounter()
          .Name("graphsieve_negative_instances_total")
          .Help("Negative instances in labelled GetSamplingRate calls, by keep decision")
          .Register(*registry_);
  negatives_kept_ = &negatives.Add({{"decision", "kept"}});
  negatives_dropped_ = &negatives.Add({{"decision", "dropped"}});
  negative_rate_ = &BuildHistogram()
                        .Name("graphsieve_negative_instance_rate")
                        .Help("Sampling rates given to negative instances in labelled calls")
                        .Register(*registry_)
                        .Add({}, RateBuckets());
  auto gauge = [&](const char* name, const char* help) {
    return &BuildGauge().Name(name).Help(help).Register(*registry_).Add({});
  };
  change_ks_ = gauge("graphsieve_version_change_ks_distance",
                     "KS distance of the serving version's rates from the previous version's");
  change_mean_delta_ = gauge("graphsieve_version_change_mean_rate_delta",
                             "Mean rate change (new - previous) over the pairs in both versions");
  change_moved_ = gauge("graphsieve_version_change_fraction_moved",
                        "Share of pairs whose rate moved more than 0.05 from the previous version");
  expected_kept_ =
      gauge("graphsieve_snapshot_expected_kept_fraction",
            "Mean rate over the log's negative instances (manifest) of the serving version");
}

void ServerMetrics::ObserveRpc(const std::string& method, const std::string& code) {
  requests_->Add({{"method", method}, {"code", code}}).Increment();
}

void ServerMetrics::ObservePinnedRequest(const std::string& result) {
  pinned_->Add({{"result", result}}).Increment();
}

void ServerMetrics::ObserveSamplingRate(const std::string& code, double seconds,
                                        const SourceCounts* counts) {
  latency_->Observe(seconds);
  if (code == "OK") {
    sampling_ok_->Increment();
  } else {
    requests_->Add({{"method", "GetSamplingRate"}, {"code", code}}).Increment();
    errors_->Add({{"code", code}}).Increment();
  }
  if (counts != nullptr) {
    if (counts->exact) pairs_exact_->Increment(static_cast<double>(counts->exact));
    if (counts->inferred) pairs_inferred_->Increment(static_cast<double>(counts->inferred));
    if (counts->by_default) pairs_default_->Increment(static_cast<double>(counts->by_default));
    if (counts->on_helpers) helper_pairs_->Increment(static_cast<double>(counts->on_helpers));
  }
}

void ServerMetrics::ObserveRefresh(bool ok, double load_seconds,
                                   const std::string& serving_version) {
  (ok ? refresh_ok_ : refresh_failed_)->Increment();
  if (load_seconds > 0) load_seconds_->Set(load_seconds);
  serving_->Set(serving_version.empty() ? 0.0 : 1.0);
  absl::MutexLock lock(&mu_);
  if (serving_version == info_version_) return;
  if (info_ != nullptr) info_family_->Remove(info_);
  info_ = nullptr;
  info_version_ = serving_version;
  if (!serving_version.empty()) {
    info_ = &info_family_->Add({{"version", serving_version}});
    info_->Set(1.0);
  }
}

void ServerMetrics::ObserveLabelled(const std::string& version,
                                    const google::protobuf::RepeatedField<bool>& labels,
                                    const google::protobuf::RepeatedField<float>& rates,
                                    const google::protobuf::RepeatedField<bool>& keep) {
  const int n = std::min({labels.size(), rates.size(), keep.size()});
  std::vector<double> bucket_increments(RateBuckets().size() + 1, 0.0);
  std::vector<uint64_t> bins(20, 0);
  uint64_t instances = 0, kept = 0;
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    if (labels.Get(i)) continue;
    const double r = rates.Get(i);
    ++instances;
    kept += keep.Get(i) ? 1 : 0;
    sum += r;
    const int bin = std::clamp(static_cast<int>(std::ceil(r * 20)) - 1, 0, 19);
    ++bins[bin];
    bucket_increments[bin] += 1;  // bucket `bin` has upper bound (bin + 1) / 20
  }
  if (instances == 0) return;
  negatives_kept_->Increment(static_cast<double>(kept));
  negatives_dropped_->Increment(static_cast<double>(instances - kept));
  negative_rate_->ObserveMultiple(bucket_increments, sum);
  absl::MutexLock lock(&negatives_mu_);
  if (negatives_.version != version) negatives_ = NegativeTally{version};
  negatives_.instances += instances;
  negatives_.kept += kept;
  negatives_.rate_sum += sum;
  for (int b = 0; b < 20; ++b) negatives_.bins[b] += bins[b];
}

void ServerMetrics::SetVersionChange(double ks_distance, double mean_rate_delta,
                                     double fraction_moved) {
  change_ks_->Set(ks_distance);
  change_mean_delta_->Set(mean_rate_delta);
  change_moved_->Set(fraction_moved);
}

TrafficSample ServerMetrics::Sample() const {
  TrafficSample s;
  s.requests_ok = sampling_ok_->Value();
  for (const prometheus::MetricFamily& family : errors_->Collect()) {
    for (const prometheus::ClientMetric& m : family.metric) s.requests_failed += m.counter.value;
  }
  s.pairs_exact = pairs_exact_->Value();
  s.pairs_inferred = pairs_inferred_->Value();
  s.pairs_default = pairs_default_->Value();
  const prometheus::ClientMetric h = latency_->Collect();
  s.latency_count = h.histogram.sample_count;
  s.latency_sum_seconds = h.histogram.sample_sum;
  for (const auto& b : h.histogram.bucket) {
    if (std::isfinite(b.upper_bound)) s.latency_upper_bounds.push_back(b.upper_bound);
    s.latency_cumulative.push_back(b.cumulative_count);
  }
  return s;
}

nlohmann::json ServerMetrics::NegativesServedJson() const {
  absl::MutexLock lock(&negatives_mu_);
  const NegativeTally& t = negatives_;
  std::vector<double> edges;
  for (int i = 1; i <= 20; ++i) edges.push_back(i / 20.0);
  return {{"version", t.version},
          {"instances", t.instances},
          {"kept", t.kept},
          {"mean_rate", t.instances > 0 ? nlohmann::json(t.rate_sum / t.instances) : nullptr},
          {"bin_upper_edges", edges},
          {"instance_counts", t.bins}};
}

std::string ServerMetrics::Serialize() const {
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

nlohmann::json ServerMetrics::ToJson() const {
  nlohmann::json j;
  j["requests_ok"] = sampling_ok_->Value();
  double errors = 0;
  nlohmann::json by_code = nlohmann::json::object();
  for (const prometheus::MetricFamily& family : errors_->Collect()) {
    for (const prometheus::ClientMetric& m : family.metric) {
      errors += m.counter.value;
      for (const auto& label : m.label) by_code[label.value] = m.counter.value;
    }
  }
  j["requests_failed"] = errors;
  j["errors_by_code"] = by_code;
  j["pairs"] = {{"exact", pairs_exact_->Value()},
                {"inferred", pairs_inferred_->Value()},
                {"default", pairs_default_->Value()}};
  j["refresh"] = {{"success", refresh_ok_->Value()}, {"failure", refresh_failed_->Value()}};
  j["inflight"] = inflight_->Value();
  const prometheus::ClientMetric h = latency_->Collect();
  nlohmann::json buckets = nlohmann::json::array();
  for (const auto& b : h.histogram.bucket) {
    buckets.push_back({{"le", b.upper_bound}, {"count", b.cumulative_count}});
  }
  j["latency"] = {{"count", h.histogram.sample_count},
                  {"sum_seconds", h.histogram.sample_sum},
                  {"buckets", buckets}};
  return j;
}

}  // namespace graphsieve
