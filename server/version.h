// The server's own release string (GetStatus.server_version, /status.json);
// the version comes from CMake's project(VERSION) (cmake/version.h.in).
#ifndef GRAPHSIEVE_SERVER_VERSION_H_
#define GRAPHSIEVE_SERVER_VERSION_H_

#include "graphsieve/version.h"

namespace graphsieve {
inline constexpr char kServerVersion[] = "graphsieve-server " GRAPHSIEVE_VERSION;
}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_VERSION_H_
