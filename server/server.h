// graphsieve-server assembled: the gRPC server (SamplingRateService, health,
// reflection, optional TLS/mTLS), the operator listener (the only place
// PinVersion is accepted, server/service_ports.h), the snapshot refresher,
// metrics, the dashboard's traffic window and version profiler, and the admin
// HTTP port. main() and the tests create it the same way.
//
// Lifecycle: Create() binds the ports and starts the refresher; Shutdown()
// drains (readiness off, no new calls, in-flight calls get drain_grace_seconds,
// then are cancelled; the responses' last bytes reach their clients within the
// same grace, server/connection_hold.h) and stops everything. The destructor calls Shutdown().
//
// Thread-safety: all public methods are thread-safe.
#ifndef GRAPHSIEVE_SERVER_SERVER_H_
#define GRAPHSIEVE_SERVER_SERVER_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "grpcpp/server.h"
#include "server/admin_http.h"
#include "server/metrics.h"
#include "server/options.h"
#include "server/rate_service.h"
#include "server/service_ports.h"
#include "server/snapshot_manager.h"
#include "server/traffic_window.h"
#include "server/version_profiler.h"

namespace graphsieve {

// The health-check service name whose status is readiness.
inline constexpr char kServiceName[] = "graphsieve.v1.SamplingRateService";

class GraphsieveServer {
 public:
  // `loader` may wrap VersionOpener::Open (fault injection in tests); empty = Open.
  // Errors: INVALID_ARGUMENT from Validate(), NOT_FOUND/INVALID_ARGUMENT for
  // unreadable TLS files (naming the flag), UNAVAILABLE when a port cannot be bound.
  static absl::StatusOr<std::unique_ptr<GraphsieveServer>> Create(const ServerOptions& options,
                                                                  SnapshotLoader loader = {});
  ~GraphsieveServer();

  int port() const { return port_; }
  int admin_port() const;  // -1 when the admin port is off
  // Where PinVersion is accepted ("unix:/tmp/...", "127.0.0.1:P"); "" when off.
  const std::string& operator_address() const { return operator_address_; }

  // Graceful drain; idempotent; returns when the gRPC server has shut down.
  void Shutdown();
  bool draining() const { return draining_.load(); }
  // A validated snapshot is loaded and we are not draining.
  bool ready() const;

  SnapshotManager& manager() { return *manager_; }
  ServerMetrics& metrics() { return *metrics_; }
  VersionProfiler& profiler() { return *profiler_; }
  // The /status.json document.
  std::string StatusJson() const;

 private:
  // Create with a CallGate (rate_service.h): tests/server/server_test_access.h.
  friend class GraphsieveServerTestAccess;
  static absl::StatusOr<std::unique_ptr<GraphsieveServer>> CreateWithGate(
      const ServerOptions& options, SnapshotLoader loader, CallGate gate);
  explicit GraphsieveServer(const ServerOptions& options) : options_(options) {}
  absl::Status Start(SnapshotLoader loader, CallGate gate);
  absl::Status StartOperatorListener();
  absl::Status StartAdmin();
  // The freshness lag and layer count of `snap` into the metrics.
  void ObserveFreshness(const ServingSnapshot& snap);
  void OnRefresh(const RefreshEventRecord& event,
                 const std::shared_ptr<const ServingSnapshot>& serving);

  // Constant after Create().
  const ServerOptions options_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<SnapshotManager> manager_;
  std::unique_ptr<VersionProfiler> profiler_;
  std::unique_ptr<TrafficWindow> traffic_;
  std::unique_ptr<SamplingRateServiceImpl> service_;
  std::unique_ptr<DataPortService> data_service_;
  std::unique_ptr<OperatorPortService> operator_service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<grpc::Server> operator_server_;
  std::unique_ptr<AdminHttpServer> admin_;
  int port_ = 0;
  std::string operator_address_;

  std::atomic<bool> draining_{false};
  absl::Mutex fallback_mu_;  // the load whose DEFAULT policy fallback was checked
  absl::Time fallback_checked_load_ ABSL_GUARDED_BY(fallback_mu_) = absl::InfinitePast();
  absl::Mutex shutdown_mu_;  // serialises Shutdown()
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_SERVER_H_
