// The protocol's ceiling for graphsieve-bench-server: a callback service on
// graphsieve.v1.SamplingRateService that answers GetSamplingRate with one
// constant rate per pair (source EXACT) and looks nothing up. What it costs
// per call is what any server on this proto, gRPC version and machine pays
// for transport, parsing and serialising; graphsieve-server's throughput is
// reported as a share of it (docs/SERVER.md "Request path and the protocol's ceiling").
//
// Thread-safety: handlers run concurrently on gRPC's callback threads; the
// service holds no state.
#ifndef GRAPHSIEVE_BENCH_TRIVIAL_SERVICE_H_
#define GRAPHSIEVE_BENCH_TRIVIAL_SERVICE_H_

#include "graphsieve/v1/sampling.grpc.pb.h"

namespace graphsieve::bench {

class TrivialSamplingService final : public v1::SamplingRateService::CallbackService {
 public:
  // The rate every pair gets.
  static constexpr float kRate = 0.5f;

  grpc::ServerUnaryReactor* GetSamplingRate(grpc::CallbackServerContext* context,
                                            const v1::GetSamplingRateRequest* request,
                                            v1::GetSamplingRateResponse* response) override;
};

// Serves the trivial service on 127.0.0.1 at an ephemeral port, prints
// "port=N" and a newline to standard output, and returns after SIGTERM or
// SIGINT (0), or 1 when the server cannot start.
int RunTrivialService();

}  // namespace graphsieve::bench

#endif  // GRAPHSIEVE_BENCH_TRIVIAL_SERVICE_H_
