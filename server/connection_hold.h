// Holds the server's accepted TCP connections open across gRPC's own close
// during a drain, until the peer has acknowledged every byte sent on them, so
// the end of a large response still reaches its client.
//
// Why: after a drain's GOAWAY, gRPC closes a connection as soon as its last
// call has finished, i.e. once the last bytes were handed to the kernel, not
// once they reached the client. If frames the client sent meanwhile (the
// WINDOW_UPDATE and PING acks that a large response makes it send) are still
// unread in the socket, Linux answers close() with a RST and discards the
// bytes still queued for sending: the client loses the tail of the response
// and its call fails with "Connection reset by peer" although the server
// finished it. A duplicate descriptor keeps the socket alive after gRPC's
// close (gRPC's shutdown(SHUT_RDWR) still queues the FIN behind the data); it
// is closed once the send queue is empty (SIOCOUTQ: every byte and the FIN
// acknowledged) or the deadline passes.
//
// Linux only (it reads /proc/self/fd). Thread-safety: not thread-safe; one
// owner (GraphsieveServer::Shutdown).
#ifndef GRAPHSIEVE_SERVER_CONNECTION_HOLD_H_
#define GRAPHSIEVE_SERVER_CONNECTION_HOLD_H_

#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "absl/types/span.h"

namespace graphsieve {

class ConnectionHold {
 public:
  // Duplicates every TCP socket of this process that is connected on one of
  // the local `ports` (the accepted connections of the listeners on them).
  static ConnectionHold Take(absl::Span<const int> ports);

  ConnectionHold(ConnectionHold&& other) noexcept : fds_(std::move(other.fds_)) {
    other.fds_.clear();
  }
  ConnectionHold& operator=(ConnectionHold&&) = delete;
  ConnectionHold(const ConnectionHold&) = delete;
  ConnectionHold& operator=(const ConnectionHold&) = delete;
  ~ConnectionHold() { Release(absl::Now()); }

  // Waits until every held socket's send queue is empty or `deadline` passes,
  // then closes the duplicates. Returns how many still had unacknowledged
  // bytes at the deadline. Idempotent.
  int Release(absl::Time deadline);

  int held() const { return static_cast<int>(fds_.size()); }

 private:
  ConnectionHold() = default;
  std::vector<int> fds_;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_CONNECTION_HOLD_H_
