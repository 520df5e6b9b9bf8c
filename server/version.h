// The server's own release string (GetStatus.server_version, /status.json).
#ifndef GRAPHSIEVE_SERVER_VERSION_H_
#define GRAPHSIEVE_SERVER_VERSION_H_

namespace graphsieve {
inline constexpr char kServerVersion[] = "graphsieve-server 0.1.0";
}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_VERSION_H_
