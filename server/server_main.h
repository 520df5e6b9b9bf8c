// graphsieve-server's main, as a function: flags → ServerOptions → a server
// from `create`, serving until SIGTERM/SIGINT drain it. main.cc passes
// GraphsieveServer::Create; a test-only build of the same main passes a
// factory with a test seam (tests/server/CMakeLists.txt).
#ifndef GRAPHSIEVE_SERVER_SERVER_MAIN_H_
#define GRAPHSIEVE_SERVER_SERVER_MAIN_H_

#include <functional>
#include <memory>

#include "absl/status/statusor.h"
#include "server/options.h"
#include "server/server.h"

namespace graphsieve {

using ServerFactory =
    std::function<absl::StatusOr<std::unique_ptr<GraphsieveServer>>(const ServerOptions&)>;

// The process's exit code: 0 after a drain, 1 when the server cannot start,
// 2 for bad flags.
int ServerMain(int argc, char** argv, const ServerFactory& create);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_SERVER_MAIN_H_
