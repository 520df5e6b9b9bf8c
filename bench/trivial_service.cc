#include "bench/trivial_service.h"

#include <signal.h>

#include <cstdio>
#include <memory>

#include "grpcpp/server.h"
#include "grpcpp/server_builder.h"

namespace graphsieve::bench {

grpc::ServerUnaryReactor* TrivialSamplingService::GetSamplingRate(
    grpc::CallbackServerContext* context, const v1::GetSamplingRateRequest* request,
    v1::GetSamplingRateResponse* response) {
  const int n = request->user_ids_size();
  response->mutable_rates()->Resize(n, kRate);
  response->mutable_sources()->Resize(n, v1::RATE_SOURCE_EXACT);
  response->set_snapshot_version("trivial");
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  reactor->Finish(grpc::Status::OK);
  return reactor;
}

int RunTrivialService() {
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  // Blocked before gRPC starts its threads, so they inherit the mask and
  // sigwait below is the one to receive the signal.
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  TrivialSamplingService service;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.SetMaxReceiveMessageSize(64 << 20);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (server == nullptr || port == 0) {
    std::fprintf(stderr, "trivial service: cannot listen on 127.0.0.1\n");
    return 1;
  }
  std::printf("port=%d\n", port);
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  server->Shutdown();
  return 0;
}

}  // namespace graphsieve::bench
