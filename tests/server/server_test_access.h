// Test access to GraphsieveServer (server/server.h): a server whose
// GetSamplingRate calls tagged with kHoldMetadataKey wait in their handler
// until a drain has begun, so a test holds calls in flight (across a drain,
// past a deadline) without racing timers. In-process tests call
// CreateHoldingTaggedCalls; tests of the real process run
// graphsieve-server-testing (server_testing_main.cc), the shipped main with
// this server.
#ifndef GRAPHSIEVE_TESTS_SERVER_SERVER_TEST_ACCESS_H_
#define GRAPHSIEVE_TESTS_SERVER_SERVER_TEST_ACCESS_H_

#include <memory>
#include <utility>

#include "absl/status/statusor.h"
#include "server/server.h"

namespace graphsieve {

// The client metadata key of a held call.
inline constexpr char kHoldMetadataKey[] = "graphsieve-testing-hold-until-drain";

class GraphsieveServerTestAccess {
 public:
  static absl::StatusOr<std::unique_ptr<GraphsieveServer>> CreateHoldingTaggedCalls(
      const ServerOptions& options, SnapshotLoader loader = {}) {
    return GraphsieveServer::CreateWithGate(
        options, std::move(loader),
        [](const grpc::CallbackServerContext& context, const absl::Notification& drain_started) {
          if (context.client_metadata().count(kHoldMetadataKey) > 0) {
            drain_started.WaitForNotification();
          }
        });
  }
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_TESTS_SERVER_SERVER_TEST_ACCESS_H_
