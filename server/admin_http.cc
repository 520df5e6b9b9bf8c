#include "server/admin_http.h"

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
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

// One TCP connection to host:port, closed at once: it wakes a listener
// blocked in poll(). A wildcard host is reached over the loopback of its family.
void Knock(const std::string& host, int port) {
  std::string target = host;
  if (target.empty() || target == "0.0.0.0") target = "127.0.0.1";
  if (target == "::" || target == "[::]") target = "::1";
  if (target.size() > 2 && target.front() == '[' && target.back() == ']') {
    target = target.substr(1, target.size() - 2);
  }
  addrinfo hints;
  std::memset(&hints, 0, sizeof(hints));
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (getaddrinfo(target.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return;
  for (addrinfo* a = found; a != nullptr; a = a->ai_next) {
    const int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    const bool connected = connect(fd, a->ai_addr, a->ai_addrlen) == 0;
    close(fd);
    if (connected) break;
  }
  freeaddrinfo(found);
}

}  // namespace

int AdminHttpServer::Handle(mg_connection* conn, void* self_ptr) {
  const auto* self = static_cast<const AdminHttpServer*>(self_ptr);
  const mg_request_info* info = mg_get_request_info(conn);
  // The path as sent ("decode_url" is off below): pages are matched on their
  // plain names, so "/%00" is no page (decoded it would read as "/").
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
  // A connection that sends no request holds a worker until the request
  // timeout: 2 s, not civetweb's 30 s, so idle connections cannot stall the
  // probes and scrapes behind them for long.
  const char* config[] = {"listening_ports",
                          ports.c_str(),
                          "num_threads",
                          threads.c_str(),
                          "enable_keep_alive",
                          "no",
                          "request_timeout_ms",
                          "2000",
                          "decode_url",
                          "no",
                          nullptr};
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

// civetweb 1.15's listening thread polls its sockets in quanta of 2 s and
// checks the stop flag only between them, so mg_stop alone waits up to 2 s
// (every drain and every test server paid it). While mg_stop waits, a
// connection to our own port every 5 ms ends the poll; one accepted before
// the flag is set is served as a request that sends nothing and closed. If
// the port cannot be reached (a host this machine cannot connect to),
// mg_stop ends at the quantum as before.
AdminHttpServer::~AdminHttpServer() {
  if (ctx_ == nullptr) return;
  absl::Notification stopped;
  std::thread stopper([this, &stopped] {
    mg_stop(ctx_);
    stopped.Notify();
  });
  while (!stopped.WaitForNotificationWithTimeout(absl::Milliseconds(5))) {
    Knock(options_.host, port_);
  }
  stopper.join();
}

}  // namespace graphsieve
