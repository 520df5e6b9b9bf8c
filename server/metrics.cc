#include "server/metrics.h"

#include "prometheus/text_serializer.h"

namespace graphsieve {
namespace {

const prometheus::Histogram::BucketBoundaries& LatencyBuckets() {
  static const auto* const kBuckets = new prometheus::Histogram::BucketBoundaries{
      0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0};
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
  info_family_ = &BuildGauge()
                      .Name("graphsieve_snapshot_info")
                      .Help("1 for the snapshot version being served")
                      .Register(*registry_);
  age_ = &BuildGauge()
              .Name("graphsieve_snapshot_age_seconds")
              .Help("Seconds since the serving snapshot was created (its manifest's created_at)")
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
  load_seconds_ = &BuildGauge()
                       .Name("graphsieve_snapshot_load_seconds")
                       .Help("Open + validate + warm/index time of the last snapshot load")
                       .Register(*registry_)
                       .Add({});
  index_bytes_ = &BuildGauge()
                      .Name("graphsieve_snapshot_index_bytes")
                      .Help("RAM of the serving version's in-memory index (0 with --lookup=rocksdb)")
                      .Register(*registry_)
                      .Add({});
}

void ServerMetrics::ObserveRpc(const std::string& method, const std::string& code) {
  requests_->Add({{"method", method}, {"code", code}}).Increment();
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
