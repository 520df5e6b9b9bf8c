// ConnectionHold (server/connection_hold.h) on plain loopback TCP sockets:
// the server side closes with response bytes still queued and a client frame
// unread, as gRPC does after a drain's GOAWAY. Without the hold Linux resets
// the connection and the queued tail is lost; with it every byte arrives.
#include "server/connection_hold.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <thread>

#include "absl/time/clock.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

struct Pair {
  int server = -1;  // the accepted socket
  int client = -1;
  int port = 0;
};

// A connected loopback pair; the client's receive buffer is small, so that
// most of what the server writes stays queued in the server's kernel.
Pair Connect() {
  Pair p;
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  EXPECT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof(addr);
  EXPECT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  p.port = ntohs(addr.sin_port);
  p.client = socket(AF_INET, SOCK_STREAM, 0);
  const int small = 4096;
  EXPECT_EQ(setsockopt(p.client, SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
  EXPECT_EQ(connect(p.client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  p.server = accept(listener, nullptr, nullptr);
  EXPECT_GE(p.server, 0);
  close(listener);
  return p;
}

// The server writes a "response" until its send queue is full, and the
// client sends a few bytes that the server never reads (a WINDOW_UPDATE, a
// PING ack). Returns the number of response bytes written.
size_t QueueResponseAndUnreadClientBytes(const Pair& p) {
  const char frame[9] = {};
  EXPECT_EQ(write(p.client, frame, sizeof(frame)), static_cast<ssize_t>(sizeof(frame)));
  pollfd in{p.server, POLLIN, 0};
  EXPECT_EQ(poll(&in, 1, 60000), 1);  // the client's bytes have arrived (unread)
  fcntl(p.server, F_SETFL, fcntl(p.server, F_GETFL) | O_NONBLOCK);
  std::string chunk(16384, 'r');
  size_t written = 0;
  for (;;) {
    const ssize_t n = write(p.server, chunk.data(), chunk.size());
    if (n <= 0) break;  // EAGAIN: the send queue is full
    written += static_cast<size_t>(n);
  }
  return written;
}

// Reads until EOF or an error; returns the bytes read and the errno (0: EOF).
std::pair<size_t, int> ReadAll(int fd) {
  char buf[4096];
  size_t total = 0;
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof(buf));
    if (n == 0) return {total, 0};
    if (n < 0) return {total, errno};
    total += static_cast<size_t>(n);
  }
}

// The control: gRPC's shutdown + close with a client frame unread resets the
// connection, and the client loses the queued tail.
TEST(ConnectionHoldTest, WithoutTheHoldTheQueuedTailIsLost) {
  Pair p = Connect();
  const size_t written = QueueResponseAndUnreadClientBytes(p);
  ASSERT_GT(written, 16384u);
  shutdown(p.server, SHUT_RDWR);
  close(p.server);
  const auto [got, err] = ReadAll(p.client);
  EXPECT_EQ(err, ECONNRESET);
  EXPECT_LT(got, written);
  close(p.client);
}

TEST(ConnectionHoldTest, WithTheHoldEveryByteArrives) {
  Pair p = Connect();
  const size_t written = QueueResponseAndUnreadClientBytes(p);
  ASSERT_GT(written, 16384u);
  ConnectionHold hold = ConnectionHold::Take({p.port});
  EXPECT_EQ(hold.held(), 1);  // the accepted socket, not the client's
  shutdown(p.server, SHUT_RDWR);
  close(p.server);
  std::pair<size_t, int> result;
  std::thread client([&] { result = ReadAll(p.client); });
  EXPECT_EQ(hold.Release(absl::Now() + absl::Seconds(60)), 0);
  client.join();
  EXPECT_EQ(result.second, 0) << std::strerror(result.second);
  EXPECT_EQ(result.first, written);
  close(p.client);
}

TEST(ConnectionHoldTest, AnUnreadPeerIsReleasedAtTheDeadline) {
  Pair p = Connect();
  ASSERT_GT(QueueResponseAndUnreadClientBytes(p), 16384u);
  ConnectionHold hold = ConnectionHold::Take({p.port});
  ASSERT_EQ(hold.held(), 1);
  shutdown(p.server, SHUT_RDWR);
  close(p.server);
  EXPECT_EQ(hold.Release(absl::Now()), 1);  // the client never reads
  EXPECT_EQ(hold.held(), 0);
  close(p.client);
}

// A connection the peer has reset is not held: bytes written after the
// client closed its socket draw a RST and are never acknowledged, and the
// closed socket still counts them in SIOCOUTQ. Release must see the closed
// state and return at once with nothing pending, not wait out the deadline.
TEST(ConnectionHoldTest, AConnectionResetByThePeerIsNotHeld) {
  Pair p = Connect();
  ConnectionHold hold = ConnectionHold::Take({p.port});  // at the drain: established
  ASSERT_EQ(hold.held(), 1);
  close(p.client);
  // The client is gone: this write is answered by a RST, never acknowledged.
  const char bytes[100] = {};
  ASSERT_EQ(send(p.server, bytes, sizeof(bytes), MSG_NOSIGNAL), 100);
  // Wait (a state, bounded: 10 s) until the server's socket has seen the RST.
  tcp_info info{};
  for (int k = 0; k < 1000; ++k) {
    socklen_t len = sizeof(info);
    ASSERT_EQ(getsockopt(p.server, IPPROTO_TCP, TCP_INFO, &info, &len), 0);
    if (info.tcpi_state == TCP_CLOSE) break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_EQ(info.tcpi_state, TCP_CLOSE) << "the client's RST never arrived";
  int queued = 0;
  ASSERT_EQ(ioctl(p.server, SIOCOUTQ, &queued), 0);
  EXPECT_GT(queued, 0) << "the stale count this test is about is not there on this kernel";
  shutdown(p.server, SHUT_RDWR);
  close(p.server);
  // A far deadline: returning 1 here would mean it was waited out.
  EXPECT_EQ(hold.Release(absl::Now() + absl::Seconds(30)), 0);
}

}  // namespace
}  // namespace graphsieve
