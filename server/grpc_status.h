// The one place where absl::Status becomes grpc::Status (docs/DESIGN.md §6).
// Thread-safety: pure functions.
#ifndef GRAPHSIEVE_SERVER_GRPC_STATUS_H_
#define GRAPHSIEVE_SERVER_GRPC_STATUS_H_

#include <string>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace graphsieve {

// Same code (abseil and gRPC share the canonical numbering), same message.
grpc::Status ToGrpcStatus(const absl::Status& status);

// "OK", "INVALID_ARGUMENT", ... for metrics labels.
std::string GrpcCodeName(grpc::StatusCode code);

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_GRPC_STATUS_H_
