// Prometheus metrics of graphsieve-server (prometheus-cpp registry, served as
// text on the admin port's /metrics). Names (all prefixed graphsieve_):
//   requests_total{method,code}           finished RPCs by method and gRPC code
//   request_errors_total{code}            GetSamplingRate calls that did not return OK
//   pairs_total{source}                   pairs answered, source = exact|inferred|default
//   request_latency_seconds               GetSamplingRate latency histogram
//   inflight_requests                     GetSamplingRate calls being handled
//   snapshot_info{version}                1 for the version serving
//   snapshot_age_seconds                  now - the serving version's created_at
//   snapshot_serving                      1 when a validated snapshot is loaded
//   refresh_total{result}                 refresh events, result = success|failure
//   snapshot_load_seconds                 load (open + validate + warm/index) time of the last load
//   snapshot_index_bytes                  RAM of the serving version's in-memory index
//                                         (0 with --lookup=rocksdb)
//
// Thread-safety: all methods are thread-safe.
#ifndef GRAPHSIEVE_SERVER_METRICS_H_
#define GRAPHSIEVE_SERVER_METRICS_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "core/serving/batch_scorer.h"

namespace graphsieve {

class ServerMetrics {
 public:
  ServerMetrics();

  // One finished RPC. `code` is the gRPC status code name ("OK", "INVALID_ARGUMENT").
  void ObserveRpc(const std::string& method, const std::string& code);
  // One finished GetSamplingRate call (any outcome) and its pairs when OK.
  void ObserveSamplingRate(const std::string& code, double seconds, const SourceCounts* counts);
  void AddInflight(double delta) { inflight_->Increment(delta); }
  // After a refresh event: counts it and updates version info / load time.
  void ObserveRefresh(bool ok, double load_seconds, const std::string& serving_version);
  void SetSnapshotAge(double seconds) { age_->Set(seconds); }
  void SetIndexBytes(double bytes) { index_bytes_->Set(bytes); }

  // Prometheus text exposition format.
  std::string Serialize() const;
  // Counters for the dashboard (/status.json "metrics").
  nlohmann::json ToJson() const;

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  // Families and children live in registry_; the pointers are constant after construction.
  prometheus::Family<prometheus::Counter>* requests_;
  prometheus::Family<prometheus::Counter>* errors_;
  prometheus::Counter* sampling_ok_;
  prometheus::Counter* pairs_exact_;
  prometheus::Counter* pairs_inferred_;
  prometheus::Counter* pairs_default_;
  prometheus::Histogram* latency_;
  prometheus::Gauge* inflight_;
  prometheus::Family<prometheus::Gauge>* info_family_;
  prometheus::Gauge* age_;
  prometheus::Gauge* serving_;
  prometheus::Counter* refresh_ok_;
  prometheus::Counter* refresh_failed_;
  prometheus::Gauge* load_seconds_;
  prometheus::Gauge* index_bytes_;

  mutable absl::Mutex mu_;
  prometheus::Gauge* info_ ABSL_GUARDED_BY(mu_) = nullptr;  // snapshot_info of the serving version
  std::string info_version_ ABSL_GUARDED_BY(mu_);
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_METRICS_H_
