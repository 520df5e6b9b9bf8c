// The admin HTTP port (civetweb): /metrics (Prometheus text), /healthz,
// /readyz, /status.json and "/" = the self-contained dashboard (no external
// assets; it polls /status.json). Read-only: nothing on this port changes what
// the server answers (operator actions are gRPC calls on the operator
// listener, docs/SERVER.md "Operator actions"). It binds 127.0.0.1 unless
// told otherwise. Plain HTTP only: Debian 12's civetweb 1.15 resolves
// SSL_get_peer_certificate from libssl at run time, a symbol OpenSSL 3 no
// longer exports, and crashes on the first HTTPS request (docs/SERVER.md "TLS").
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
  std::string host = "127.0.0.1";
  int port = 8080;  // 0 picks a free port
  int threads = 2;
  std::function<std::string()> metrics;      // Prometheus text
  std::function<bool()> live;                // /healthz 200 vs 503
  std::function<bool()> ready;               // /readyz 200 vs 503
  std::function<std::string()> status_json;  // /status.json body
};

class AdminHttpServer {
 public:
  // Errors: UNAVAILABLE naming host:port, with civetweb's reason, when it cannot listen.
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
