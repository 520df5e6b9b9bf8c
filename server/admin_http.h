// The admin HTTP port (civetweb): /metrics (Prometheus text), /healthz,
// /readyz, /status.json and "/" = the self-contained dashboard (no external
// assets; it polls /status.json).
//
// Thread-safety: handlers run on civetweb's worker threads and only call the
// std::functions given at construction, which must be thread-safe.
#ifndef GRAPHSIEVE_SERVER_ADMIN_HTTP_H_
#define GRAPHSIEVE_SERVER_ADMIN_HTTP_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

struct mg_context;
struct mg_connection;

namespace graphsieve {

struct AdminHttpOptions {
  std::string host = "0.0.0.0";
  int port = 8080;  // 0 picks a free port
  int threads = 2;
  std::function<std::string()> metrics;      // Prometheus text
  std::function<bool()> live;                // /healthz 200 vs 503
  std::function<bool()> ready;               // /readyz 200 vs 503
  std::function<std::string()> status_json;  // /status.json body
};

class AdminHttpServer {
 public:
  // Errors: UNAVAILABLE naming host:port when it cannot listen.
  static absl::StatusOr<std::unique_ptr<AdminHttpServer>> Create(AdminHttpOptions options);
  ~AdminHttpServer();  // stops civetweb; waits for its worker threads

  int port() const { return port_; }

 private:
  explicit AdminHttpServer(AdminHttpOptions options) : options_(std::move(options)) {}
  static int Handle(mg_connection* conn, void* self);

  // Constant after Create().
  const AdminHttpOptions options_;
  mg_context* ctx_ = nullptr;
  int port_ = 0;
};

// The dashboard page (HTML + inline JS/CSS).
const char* DashboardHtml();

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_ADMIN_HTTP_H_
