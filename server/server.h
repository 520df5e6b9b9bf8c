// graphsieve-server assembled: the gRPC server (SamplingRateService, health,
// reflection, optional TLS/mTLS), the snapshot refresher, metrics and the
// admin HTTP port. main() and the tests create it the same way.
//
// Lifecycle: Create() binds both ports and starts the refresher; Shutdown()
// drains (readiness off, no new calls, in-flight calls get drain_grace_seconds,
// then are cancelled) and stops everything. The destructor calls Shutdown().
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
#include "server/snapshot_manager.h"

namespace graphsieve {

// The health-check service name whose status is readiness.
inline constexpr char kServiceName[] = "graphsieve.v1.SamplingRateService";

class GraphsieveServer {
 public:
  // `loader` may wrap SnapshotReader::Open (fault injection in tests); empty = Open.
  // Errors: INVALID_ARGUMENT from Validate(), NOT_FOUND/INVALID_ARGUMENT for
  // unreadable TLS files (naming the flag), UNAVAILABLE when a port cannot be bound.
  static absl::StatusOr<std::unique_ptr<GraphsieveServer>> Create(const ServerOptions& options,
                                                                  SnapshotLoader loader = {});
  ~GraphsieveServer();

  int port() const { return port_; }
  int admin_port() const;  // -1 when the admin port is off

  // Graceful drain; idempotent; returns when the gRPC server has shut down.
  void Shutdown();
  bool draining() const { return draining_.load(); }
  // A validated snapshot is loaded and we are not draining.
  bool ready() const;

  SnapshotManager& manager() { return *manager_; }
  ServerMetrics& metrics() { return *metrics_; }
  // The /status.json document.
  std::string StatusJson() const;

 private:
  explicit GraphsieveServer(const ServerOptions& options) : options_(options) {}
  absl::Status Start(SnapshotLoader loader);
  void OnRefresh(const RefreshEventRecord& event,
                 const std::shared_ptr<const ServingSnapshot>& serving);

  // Constant after Create().
  const ServerOptions options_;
  std::unique_ptr<ServerMetrics> metrics_;
  std::unique_ptr<SnapshotManager> manager_;
  std::unique_ptr<SamplingRateServiceImpl> service_;
  std::unique_ptr<grpc::Server> server_;
  std::unique_ptr<AdminHttpServer> admin_;
  int port_ = 0;

  std::atomic<bool> draining_{false};
  absl::Mutex shutdown_mu_;  // serialises Shutdown()
  bool shut_down_ ABSL_GUARDED_BY(shutdown_mu_) = false;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_SERVER_H_
