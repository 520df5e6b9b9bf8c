// Prometheus metrics of graphsieve-server (prometheus-cpp registry, served as
// text on the admin port's /metrics). Names (all prefixed graphsieve_):
//   requests_total{method,code}           finished RPCs by method and gRPC code
//   request_errors_total{code}            GetSamplingRate calls that did not return OK
//   pairs_total{source}                   pairs answered, source = exact|inferred|default
//   helper_pairs_total                    of those, pairs scored on a --lookup-helpers thread
//   request_latency_seconds               GetSamplingRate latency histogram
//   inflight_requests                     GetSamplingRate calls being handled
//   version_pinned_requests_total{result} GetSamplingRate calls naming a snapshot_version,
//                                         result = active|held|not_held|unavailable
//   snapshot_info{version}                1 for the version serving
//   snapshot_age_seconds                  now - the serving version's created_at
//   freshness_lag_seconds                 now - the newest impression it covers (a delta's
//                                         covers_through, a full version's created_at)
//   snapshot_layers                       2 for a delta served over its base, 1 otherwise
//   snapshot_serving                      1 when a validated snapshot is loaded
//   refresh_total{result}                 refresh events, result = success|failure
//   snapshot_watch_events_total           polls started at once by the inotify watch of
//                                         CURRENT (--watch-current)
//   snapshot_load_seconds                 load (open + validate + warm/index) time of the last load
//   snapshot_index_bytes                  RAM of the serving version's in-memory index
//                                         (0 with --lookup=rocksdb)
//   negative_instances_total{decision}    negative instances in labelled GetSamplingRate
//                                         calls, decision = kept|dropped
//   negative_instance_rate                histogram of the rates those negatives got
//   version_change_ks_distance            the serving version against the one before it
//   version_change_mean_rate_delta        (server/rate_profile.h), set once computed
//   version_change_fraction_moved
//   snapshot_expected_kept_fraction       the manifest's mean rate over the log's negatives
//
// Thread-safety: all methods are thread-safe.
#ifndef GRAPHSIEVE_SERVER_METRICS_H_
#define GRAPHSIEVE_SERVER_METRICS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "core/serving/batch_scorer.h"
#include "google/protobuf/repeated_field.h"
#include "nlohmann/json.hpp"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "server/traffic_window.h"

namespace graphsieve {

class ServerMetrics {
 public:
  ServerMetrics();

  // One finished RPC. `code` is the gRPC status code name ("OK", "INVALID_ARGUMENT").
  void ObserveRpc(const std::string& method, const std::string& code);
  // One finished GetSamplingRate call (any outcome) and its pairs when OK.
  void ObserveSamplingRate(const std::string& code, double seconds, const SourceCounts* counts);
  void AddInflight(double delta) { inflight_->Increment(delta); }
  // One GetSamplingRate call that named a snapshot_version: answered from the
  // active version ("active"), the held previous one ("held"), or refused
  // ("not_held", "unavailable").
  void ObservePinnedRequest(const std::string& result);
  // After a refresh event: counts it and updates version info / load time.
  void ObserveRefresh(bool ok, double load_seconds, const std::string& serving_version);
  // A poll started by the watch of CURRENT (a published version seen at once).
  void ObserveWatchEvent() { watch_events_->Increment(); }
  void SetSnapshotAge(double seconds) { age_->Set(seconds); }
  void SetFreshness(double lag_seconds, int layers) {
    lag_->Set(lag_seconds);
    layers_->Set(layers);
  }
  void SetIndexBytes(double bytes) { index_bytes_->Set(bytes); }
  // The negative instances of one answered labelled batch (label false) with
  // their rates and keep decisions, served from `version`. A new version
  // restarts the per-version tally shown by NegativesServedJson().
  void ObserveLabelled(const std::string& version,
                       const google::protobuf::RepeatedField<bool>& labels,
                       const google::protobuf::RepeatedField<float>& rates,
                       const google::protobuf::RepeatedField<bool>& keep);
  // The serving version against its predecessor, and the serving manifest's
  // expected kept fraction (server/rate_profile.h).
  void SetVersionChange(double ks_distance, double mean_rate_delta, double fraction_moved);
  void SetExpectedKeptFraction(double fraction) { expected_kept_->Set(fraction); }

  // Cumulative counters now (the dashboard's traffic window samples them).
  TrafficSample Sample() const;
  // Negatives served by the current version: {version, instances, kept, mean_rate,
  // bin_upper_edges, instance_counts} (20 bins of 0.05).
  nlohmann::json NegativesServedJson() const;

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
  prometheus::Counter* helper_pairs_;
  prometheus::Histogram* latency_;
  prometheus::Gauge* inflight_;
  prometheus::Family<prometheus::Counter>* pinned_;
  prometheus::Family<prometheus::Gauge>* info_family_;
  prometheus::Gauge* age_;
  prometheus::Gauge* lag_;
  prometheus::Gauge* layers_;
  prometheus::Gauge* serving_;
  prometheus::Counter* refresh_ok_;
  prometheus::Counter* refresh_failed_;
  prometheus::Counter* watch_events_;
  prometheus::Gauge* load_seconds_;
  prometheus::Gauge* index_bytes_;
  prometheus::Counter* negatives_kept_;
  prometheus::Counter* negatives_dropped_;
  prometheus::Histogram* negative_rate_;
  prometheus::Gauge* change_ks_;
  prometheus::Gauge* change_mean_delta_;
  prometheus::Gauge* change_moved_;
  prometheus::Gauge* expected_kept_;

  mutable absl::Mutex mu_;
  prometheus::Gauge* info_ ABSL_GUARDED_BY(mu_) = nullptr;  // snapshot_info of the serving version
  std::string info_version_ ABSL_GUARDED_BY(mu_);

  // Negatives served by one version (reset when the version changes).
  struct NegativeTally {
    std::string version;
    uint64_t instances = 0, kept = 0;
    double rate_sum = 0;
    std::vector<uint64_t> bins = std::vector<uint64_t>(20, 0);
  };
  mutable absl::Mutex negatives_mu_;
  NegativeTally negatives_ ABSL_GUARDED_BY(negatives_mu_);
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_METRICS_H_
