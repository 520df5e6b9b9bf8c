// A server whose connection handshake is slow (here: a TCP relay in the test
// that holds a new connection's bytes for 1 s before passing them on, as an
// overloaded server's accept path does) must not make a call fail: the client
// gives each connection attempt gRPC's default minimum connect timeout (20 s).
// Regression test for the fault campaign's finding (docs/RELIABILITY.md,
// "swaps"): GRPC_ARG_MIN_RECONNECT_BACKOFF_MS = 100 ms is also the connect
// timeout, and calls failed UNAVAILABLE ("connection attempt timed out before
// receiving SETTINGS frame") with max_attempts = 1.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "client/sampling_rate_client.h"
#include "gtest/gtest.h"
#include "tests/client/cluster.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

// Accepts connections on 127.0.0.1:<port()>, and for each: connects to the
// server, holds both directions for `hold`, then relays bytes until a side closes.
class SlowRelay {
 public:
  SlowRelay(int server_port, std::chrono::milliseconds hold)
      : server_port_(server_port), hold_(hold) {
    listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(bind(listen_fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)), 0);
    EXPECT_EQ(listen(listen_fd_, 16), 0);
    socklen_t len = sizeof(a);
    getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&a), &len);
    port_ = ntohs(a.sin_port);
    acceptor_ = std::thread([this] { AcceptLoop(); });
  }
  ~SlowRelay() {
    stop_ = true;
    shutdown(listen_fd_, SHUT_RDWR);
    close(listen_fd_);
    acceptor_.join();
    for (auto& t : relays_) t.join();
  }
  int port() const { return port_; }
  int connections() const { return connections_.load(); }

 private:
  void AcceptLoop() {
    while (!stop_) {
      const int client = accept(listen_fd_, nullptr, nullptr);
      if (client < 0) return;
      ++connections_;
      relays_.emplace_back([this, client] { Relay(client); });
    }
  }
  void Relay(int client) {
    const int server = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = htons(static_cast<uint16_t>(server_port_));
    if (connect(server, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0) {
      std::this_thread::sleep_for(hold_);  // the slow handshake
      pollfd fds[2] = {{client, POLLIN, 0}, {server, POLLIN, 0}};
      char buf[16384];
      while (!stop_) {
        if (poll(fds, 2, 200) < 0) break;
        bool closed = false;
        for (int k = 0; k < 2 && !closed; ++k) {
          if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
          const ssize_t n = read(fds[k].fd, buf, sizeof(buf));
          closed = n <= 0 || write(fds[1 - k].fd, buf, static_cast<size_t>(n)) != n;
        }
        if (closed) break;
      }
    }
    close(server);
    close(client);
  }

  const int server_port_;
  const std::chrono::milliseconds hold_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<int> connections_{0};
  std::thread acceptor_;
  std::vector<std::thread> relays_;  // only the acceptor thread appends
};

TEST(SlowHandshake, OneAttemptSucceedsWhenTheConnectionIsSlowToOpen) {
  const std::string dir = testing::NewTempDir("slow-handshake");
  auto log = testing::GenerateLog(dir, 20, 30, 500, 3);
  ASSERT_TRUE(log.ok()) << log.status();
  ASSERT_TRUE(testing::BuildSnapshot(*log, dir + "/root", 0.2).ok());
  testing::ServerProcess server;
  ASSERT_TRUE(server.Start(dir + "/root", 0).ok());
  SlowRelay relay(server.port(), std::chrono::milliseconds(1000));

  SamplingRateClientOptions options;
  options.target = "127.0.0.1:" + std::to_string(relay.port());
  options.max_attempts = 1;  // no retry may hide a cut-off handshake
  options.deadline_seconds = 15;
  auto client = SamplingRateClient::Create(options);
  ASSERT_TRUE(client.ok()) << client.status();
  const std::vector<uint64_t> users = {1}, items = {2};
  auto rates = (*client)->GetRates(users, items);
  ASSERT_TRUE(rates.ok()) << rates.status();
  EXPECT_EQ(rates->size(), 1u);
  EXPECT_EQ(relay.connections(), 1) << "one connection attempt, not cut off and retried";
}

}  // namespace
}  // namespace graphsieve
