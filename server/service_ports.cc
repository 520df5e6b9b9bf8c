#include "server/service_ports.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace graphsieve {

void DataPortService::SetOperatorAddress(const std::string& address) {
  absl::MutexLock lock(&mu_);
  refusal_ = absl::StrCat(
      "PinVersion changes what every caller gets and is not accepted on the data port; call it "
      "on the operator listener (graphsieve-server --operator-address, here ",
      address.empty() ? "off" : address, "), e.g. graphsieve pin --server ",
      address.empty() ? "<operator address>" : address, " on the server's machine or pod");
}

grpc::ServerUnaryReactor* DataPortService::GetSamplingRate(
    grpc::CallbackServerContext* context, const v1::GetSamplingRateRequest* request,
    v1::GetSamplingRateResponse* response) {
  return impl_->GetSamplingRate(context, request, response);
}

grpc::ServerUnaryReactor* DataPortService::GetStatus(grpc::CallbackServerContext* context,
                                                     const v1::GetStatusRequest* request,
                                                     v1::GetStatusResponse* response) {
  return impl_->GetStatus(context, request, response);
}

grpc::ServerUnaryReactor* DataPortService::PinVersion(grpc::CallbackServerContext* context,
                                                      const v1::PinVersionRequest* request,
                                                      v1::PinVersionResponse* response) {
  metrics_->ObserveRpc("PinVersion", "PERMISSION_DENIED");
  std::string refusal;
  {
    absl::MutexLock lock(&mu_);
    refusal = refusal_;
  }
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, refusal));
  return reactor;
}

}  // namespace graphsieve
