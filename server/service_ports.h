// What each gRPC listener answers (docs/SERVER.md "Operator actions"):
//   - the data port: GetSamplingRate and GetStatus; PinVersion is refused with
//     PERMISSION_DENIED, because it changes what every caller gets;
//   - the operator listener (a unix socket or loopback port, reached only from
//     the machine or pod itself, e.g. through kubectl exec): all three.
// Both delegate to one SamplingRateServiceImpl; a gRPC service object can be
// registered with one server only, hence two thin wrappers.
//
// Thread-safety: as SamplingRateServiceImpl (constant pointers only).
#ifndef GRAPHSIEVE_SERVER_SERVICE_PORTS_H_
#define GRAPHSIEVE_SERVER_SERVICE_PORTS_H_

#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "graphsieve/v1/sampling.grpc.pb.h"
#include "server/metrics.h"
#include "server/rate_service.h"

namespace graphsieve {

class DataPortService final : public v1::SamplingRateService::CallbackService {
 public:
  // REQUIRES: impl and metrics outlive the service.
  DataPortService(SamplingRateServiceImpl* impl, ServerMetrics* metrics)
      : impl_(impl), metrics_(metrics) {
    SetOperatorAddress("see --operator-address");
  }
  // Named in the refusal ("" = no operator listener). Set once the operator
  // listener is bound (its default address depends on the data port's).
  void SetOperatorAddress(const std::string& address);

  grpc::ServerUnaryReactor* GetSamplingRate(grpc::CallbackServerContext* context,
                                            const v1::GetSamplingRateRequest* request,
                                            v1::GetSamplingRateResponse* response) override;
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* context,
                                      const v1::GetStatusRequest* request,
                                      v1::GetStatusResponse* response) override;
  // Always PERMISSION_DENIED, counted in graphsieve_requests_total.
  grpc::ServerUnaryReactor* PinVersion(grpc::CallbackServerContext* context,
                                       const v1::PinVersionRequest* request,
                                       v1::PinVersionResponse* response) override;

 private:
  SamplingRateServiceImpl* const impl_;
  ServerMetrics* const metrics_;
  absl::Mutex mu_;
  std::string refusal_ ABSL_GUARDED_BY(mu_);
};

class OperatorPortService final : public v1::SamplingRateService::CallbackService {
 public:
  // REQUIRES: impl outlives the service.
  explicit OperatorPortService(SamplingRateServiceImpl* impl) : impl_(impl) {}

  grpc::ServerUnaryReactor* GetSamplingRate(grpc::CallbackServerContext* context,
                                            const v1::GetSamplingRateRequest* request,
                                            v1::GetSamplingRateResponse* response) override {
    return impl_->GetSamplingRate(context, request, response);
  }
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* context,
                                      const v1::GetStatusRequest* request,
                                      v1::GetStatusResponse* response) override {
    return impl_->GetStatus(context, request, response);
  }
  grpc::ServerUnaryReactor* PinVersion(grpc::CallbackServerContext* context,
                                       const v1::PinVersionRequest* request,
                                       v1::PinVersionResponse* response) override {
    return impl_->PinVersion(context, request, response);
  }

 private:
  SamplingRateServiceImpl* const impl_;
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_SERVICE_PORTS_H_
