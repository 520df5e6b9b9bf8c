// graphsieve.v1.SamplingRateService on the gRPC callback API. Each handler
// validates, pins one snapshot, calls the scorer, finishes; errors leave
// through ToGrpcStatus().
//
// Thread-safety: handlers run concurrently on gRPC's callback threads; the
// service holds only constant pointers and thread-safe collaborators.
#ifndef GRAPHSIEVE_SERVER_RATE_SERVICE_H_
#define GRAPHSIEVE_SERVER_RATE_SERVICE_H_

#include <functional>
#include <string>

#include "absl/status/status.h"
#include "absl/synchronization/notification.h"
#include "core/serving/batch_scorer.h"
#include "core/serving/block_pool.h"
#include "core/serving/rate_source.h"
#include "graphsieve/v1/sampling.grpc.pb.h"
#include "server/metrics.h"
#include "server/options.h"
#include "server/rate_source_mapping.h"  // ToProtoRateSource, the border mapping
#include "server/snapshot_manager.h"

namespace graphsieve {

// Checks the request's shape. INVALID_ARGUMENT naming the field.
absl::Status ValidateSamplingRequest(const v1::GetSamplingRateRequest& request,
                                     int max_batch_pairs);

// Fills a GetStatusResponse from the manager's state.
void FillStatus(const ManagerState& state, v1::GetStatusResponse* response);

// Runs at the start of a GetSamplingRate handler, before the answer, with
// the call's context and the service's "a drain has begun" notification: a
// test seam (GraphsieveServerTestAccess, tests/server/server_test_access.h)
// that holds a call in flight. The shipped server installs none.
using CallGate = std::function<void(const grpc::CallbackServerContext& context,
                                    const absl::Notification& drain_started)>;

class SamplingRateServiceImpl final : public v1::SamplingRateService::CallbackService {
 public:
  // REQUIRES: manager and metrics outlive the service. `gate` may be empty.
  SamplingRateServiceImpl(const ServerOptions& options, SnapshotManager* manager,
                          ServerMetrics* metrics, CallGate gate = {});

  grpc::ServerUnaryReactor* GetSamplingRate(grpc::CallbackServerContext* context,
                                            const v1::GetSamplingRateRequest* request,
                                            v1::GetSamplingRateResponse* response) override;
  grpc::ServerUnaryReactor* GetStatus(grpc::CallbackServerContext* context,
                                      const v1::GetStatusRequest* request,
                                      v1::GetStatusResponse* response) override;
  // Loads happen on the calling callback thread (an operator action, rare).
  grpc::ServerUnaryReactor* PinVersion(grpc::CallbackServerContext* context,
                                       const v1::PinVersionRequest* request,
                                       v1::PinVersionResponse* response) override;

  // Called once when a drain begins: releases the calls a CallGate holds
  // until then (a no-op otherwise).
  void DrainStarted() { drain_started_.Notify(); }

 private:
  absl::Status Answer(grpc::CallbackServerContext* context,
                      const v1::GetSamplingRateRequest& request,
                      v1::GetSamplingRateResponse* response, SourceCounts* counts) const;

  // Constant after construction.
  const int max_batch_pairs_;
  BlockPool pool_;  // thread-safe; before scorer_, which points at it
  const BatchScorer scorer_;
  SnapshotManager* const manager_;
  ServerMetrics* const metrics_;
  const CallGate gate_;               // empty in the shipped server
  absl::Notification drain_started_;  // thread-safe
};

}  // namespace graphsieve

#endif  // GRAPHSIEVE_SERVER_RATE_SERVICE_H_
