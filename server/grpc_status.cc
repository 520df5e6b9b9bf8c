#include "server/grpc_status.h"

namespace graphsieve {

grpc::Status ToGrpcStatus(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), std::string(status.message()));
}

std::string GrpcCodeName(grpc::StatusCode code) {
  if (code == grpc::StatusCode::OK) return "OK";
  return absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
}

}  // namespace graphsieve
