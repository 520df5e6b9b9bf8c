#include "server/admin_http.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "civetweb.h"

namespace graphsieve {
namespace {

int Reply(mg_connection* conn, int code, const char* reason, const char* content_type,
          const std::string& body) {
  mg_printf(conn,
            "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
            "Cache-Control: no-store\r\nConnection: close\r\n\r\n",
            code, reason, content_type, body.size());
  mg_write(conn, body.data(), body.size());
  return code;
}

}  // namespace

int AdminHttpServer::Handle(mg_connection* conn, void* self_ptr) {
  const auto* self = static_cast<const AdminHttpServer*>(self_ptr);
  const mg_request_info* info = mg_get_request_info(conn);
  const std::string uri = info->local_uri != nullptr ? info->local_uri : "";
  if (std::strcmp(info->request_method, "GET") != 0 &&
      std::strcmp(info->request_method, "HEAD") != 0) {
    return Reply(conn, 405, "Method Not Allowed", "text/plain", "only GET\n");
  }
  if (uri == "/metrics") {
    return Reply(conn, 200, "OK", "text/plain; version=0.0.4", self->options_.metrics());
  }
  if (uri == "/healthz") {
    return self->options_.live() ? Reply(conn, 200, "OK", "text/plain", "ok\n")
                                 : Reply(conn, 503, "Service Unavailable", "text/plain", "down\n");
  }
  if (uri == "/readyz") {
    return self->options_.ready() ? Reply(conn, 200, "OK", "text/plain", "ready\n")
                                  : Reply(conn, 503, "Service Unavailable", "text/plain",
                                          "not ready: no snapshot loaded yet, or draining\n");
  }
  if (uri == "/status.json") {
    return Reply(conn, 200, "OK", "application/json", self->options_.status_json());
  }
  if (uri == "/" || uri == "/index.html") {
    return Reply(conn, 200, "OK", "text/html; charset=utf-8", DashboardHtml());
  }
  return Reply(
      conn, 404, "Not Found", "text/plain",
      absl::StrCat("no such page: ", uri, " (try /, /metrics, /healthz, /readyz, /status.json)\n"));
}

absl::StatusOr<std::unique_ptr<AdminHttpServer>> AdminHttpServer::Create(AdminHttpOptions options) {
  std::unique_ptr<AdminHttpServer> server(new AdminHttpServer(std::move(options)));
  const AdminHttpOptions& o = server->options_;
  mg_init_library(0);
  const std::string ports = absl::StrCat(o.host, ":", o.port);
  const std::string threads = absl::StrCat(o.threads);
  const char* config[] = {"listening_ports",   ports.c_str(), "num_threads", threads.c_str(),
                          "enable_keep_alive", "no",          nullptr};
  mg_callbacks callbacks;
  std::memset(&callbacks, 0, sizeof(callbacks));
  mg_init_data init;
  std::memset(&init, 0, sizeof(init));
  init.callbacks = &callbacks;
  init.configuration_options = config;
  char error_text[256] = "";
  unsigned error_code = 0;
  mg_error_data error = {&error_code, error_text, sizeof(error_text)};
  server->ctx_ = mg_start2(&init, &error);
  if (server->ctx_ == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("--admin-port: cannot listen on ", ports, ": ",
                     error_text[0] != 0 ? error_text : "in use or not permitted"));
  }
  mg_set_request_handler(server->ctx_, "/", &AdminHttpServer::Handle, server.get());
  mg_server_port listening[4];
  const int n = mg_get_server_ports(server->ctx_, 4, listening);
  if (n < 1) return absl::InternalError("civetweb started but reports no listening port");
  server->port_ = listening[0].port;
  return server;
}

AdminHttpServer::~AdminHttpServer() {
  if (ctx_ != nullptr) mg_stop(ctx_);
}

}  // namespace graphsieve
