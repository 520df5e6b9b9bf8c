#include "server/connection_hold.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <linux/sockios.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>

#include "absl/time/clock.h"

namespace graphsieve {
namespace {

// The local port of a connected TCP socket, or -1 (not a socket, not TCP,
// not connected: a listener or anything else).
int ConnectedLocalPort(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) return -1;
  sockaddr_storage local{}, peer{};
  socklen_t local_len = sizeof(local), peer_len = sizeof(peer);
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &local_len) != 0) return -1;
  if (getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) != 0) return -1;
  int type = 0;
  socklen_t type_len = sizeof(type);
  if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &type_len) != 0 || type != SOCK_STREAM) return -1;
  if (local.ss_family == AF_INET) {
    return ntohs(reinterpret_cast<const sockaddr_in*>(&local)->sin_port);
  }
  if (local.ss_family == AF_INET6) {
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&local)->sin6_port);
  }
  return -1;
}

// Bytes sent on `fd` that the peer has not acknowledged yet and still can
// (0 on error). A connection the peer reset is closed: its send queue was
// purged, but SIOCOUTQ still counts the bytes sent and never acknowledged, so
// without the state check the hold would wait for them until the deadline
// (every drain with an idle client whose frames arrived after gRPC's
// shutdown paid the full --drain-grace-seconds).
int Unacknowledged(int fd) {
  tcp_info info{};
  socklen_t len = sizeof(info);
  if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &info, &len) == 0 && info.tcpi_state == TCP_CLOSE) {
    return 0;
  }
  int queued = 0;
  if (ioctl(fd, SIOCOUTQ, &queued) != 0) return 0;
  return queued;
}

}  // namespace

ConnectionHold ConnectionHold::Take(absl::Span<const int> ports) {
  ConnectionHold hold;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return hold;  // no /proc: nothing held, gRPC's close as before
  std::vector<int> fds;
  while (const dirent* entry = readdir(dir)) {
    char* end = nullptr;
    const long fd = std::strtol(entry->d_name, &end, 10);
    if (end != entry->d_name && *end == '\0' && fd != dirfd(dir))
      fds.push_back(static_cast<int>(fd));
  }
  closedir(dir);
  for (int fd : fds) {
    // Duplicate first, then look at the duplicate: the number `fd` may be
    // closed and reused by another thread meanwhile; the duplicate is stable.
    const int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dup < 0) continue;
    const int port = ConnectedLocalPort(dup);
    if (port > 0 && std::find(ports.begin(), ports.end(), port) != ports.end()) {
      hold.fds_.push_back(dup);
    } else {
      close(dup);
    }
  }
  return hold;
}

int ConnectionHold::Release(absl::Time deadline) {
  int pending = 0;
  for (;;) {
    pending = 0;
    for (int fd : fds_) pending += Unacknowledged(fd) > 0 ? 1 : 0;
    if (pending == 0 || absl::Now() >= deadline) break;
    absl::SleepFor(absl::Milliseconds(5));  // the peer reads at its own pace
  }
  for (int fd : fds_) close(fd);
  fds_.clear();
  return pending;
}

}  // namespace graphsieve
