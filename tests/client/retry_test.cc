// SamplingRateClient's retries and deadlines against a fake SamplingRateService on a real
// loopback socket: a draining server answers CANCELLED (docs/SERVER.md), which
// reads retry like UNAVAILABLE and PinVersion does not.
#include <memory>
#include <string>
#include <vector>

#include <limits>

#include "absl/flags/flag.h"
#include "absl/synchronization/mutex.h"
#include "client/cli/commands.h"
#include "client/cli/flags.h"
#include "client/sampling_rate_client.h"
#include "graphsieve/v1/sampling.grpc.pb.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

// Answers the first `cancel_first` calls of each RPC with CANCELLED (as a
// draining gRPC 1.51 server does), then rate 0.5 for every pair.
class FakeService final : public v1::SamplingRateService::Service {
 public:
  explicit FakeService(int cancel_first) : cancel_first_(cancel_first) {}

  grpc::Status GetSamplingRate(grpc::ServerContext*, const v1::GetSamplingRateRequest* request,
                               v1::GetSamplingRateResponse* response) override {
    if (Cancel()) return grpc::Status(grpc::StatusCode::CANCELLED, "CANCELLED");
    for (int i = 0; i < request->user_ids_size(); ++i) {
      response->add_rates(0.5f);
      response->add_sources(v1::RATE_SOURCE_EXACT);
    }
    response->set_snapshot_version("v1");
    return grpc::Status::OK;
  }
  grpc::Status PinVersion(grpc::ServerContext*, const v1::PinVersionRequest*,
                          v1::PinVersionResponse*) override {
    if (Cancel()) return grpc::Status(grpc::StatusCode::CANCELLED, "CANCELLED");
    return grpc::Status::OK;
  }

  int calls() {
    absl::MutexLock lock(&mu_);
    return calls_;
  }

 private:
  bool Cancel() {
    absl::MutexLock lock(&mu_);
    return ++calls_ <= cancel_first_;
  }

  const int cancel_first_;
  absl::Mutex mu_;
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

struct FakeServer {
  explicit FakeServer(int cancel_first) : service(cancel_first) {
    grpc::ServerBuilder builder;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&service);
    server = builder.BuildAndStart();
  }
  ~FakeServer() { server->Shutdown(); }
  std::string target() const { return "127.0.0.1:" + std::to_string(port); }

  FakeService service;
  int port = 0;
  std::unique_ptr<grpc::Server> server;
};

std::unique_ptr<SamplingRateClient> Client(const std::string& target, int max_attempts) {
  SamplingRateClientOptions options;
  options.target = target;
  options.max_attempts = max_attempts;
  options.initial_backoff_seconds = 0;
  options.max_backoff_seconds = 0;
  auto client = SamplingRateClient::Create(options);
  EXPECT_TRUE(client.ok()) << client.status();
  return *std::move(client);
}

TEST(Retries, ServerCancelledIsRetriedForRates) {
  FakeServer server(/*cancel_first=*/1);
  ASSERT_NE(server.port, 0);
  auto client = Client(server.target(), 3);
  const std::vector<uint64_t> users = {1, 2}, items = {3, 4};
  absl::StatusOr<RateBatch> batch = client->GetRates(users, items);
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_EQ(batch->rates, (std::vector<float>{0.5f, 0.5f}));
  EXPECT_EQ(batch->retries, 1);
  EXPECT_EQ(server.service.calls(), 2);
}

TEST(Retries, CancelledAfterTheLastAttemptSaysTheServerMayHaveBeenDraining) {
  FakeServer server(/*cancel_first=*/100);
  auto client = Client(server.target(), 2);
  const std::vector<uint64_t> users = {1}, items = {3};
  absl::StatusOr<RateBatch> batch = client->GetRates(users, items);
  ASSERT_FALSE(batch.ok());
  EXPECT_EQ(batch.status().code(), absl::StatusCode::kCancelled);
  EXPECT_NE(batch.status().message().find("draining"), std::string::npos) << batch.status();
  EXPECT_EQ(server.service.calls(), 2);
}

TEST(Retries, PinVersionDoesNotRetryCancelled) {
  FakeServer server(/*cancel_first=*/1);
  auto client = Client(server.target(), 3);
  auto pinned = client->PinVersion("v1", /*reject_active=*/false);
  ASSERT_FALSE(pinned.ok());
  EXPECT_EQ(pinned.status().code(), absl::StatusCode::kCancelled);
  EXPECT_EQ(server.service.calls(), 1);
}

// A huge or infinite per-attempt deadline is clamped (kMaxDeadlineSeconds),
// not an int64 overflow that expires at once with DEADLINE_EXCEEDED.
TEST(Deadline, HugeAndInfiniteDeadlinesAreClampedInTheLibrary) {
  FakeServer server(/*cancel_first=*/0);
  for (double seconds : {1e300, std::numeric_limits<double>::infinity()}) {
    SamplingRateClientOptions options;
    options.target = server.target();
    options.deadline_seconds = seconds;
    auto client = SamplingRateClient::Create(options);
    ASSERT_TRUE(client.ok()) << client.status();
    const std::vector<uint64_t> users = {1}, items = {3};
    absl::StatusOr<RateBatch> batch = (*client)->GetRates(users, items);
    EXPECT_TRUE(batch.ok()) << seconds << ": " << batch.status();
  }
}

TEST(Deadline, TheCliRefusesNonFiniteOrAbsurdDeadlinesNamingTheFlag) {
  for (double seconds : {std::numeric_limits<double>::infinity(), 1e300, 86401.0,
                         std::numeric_limits<double>::quiet_NaN(), 0.0}) {
    absl::SetFlag(&FLAGS_deadline_seconds, seconds);
    auto client = ClientFromFlags("127.0.0.1:1", "server");
    ASSERT_FALSE(client.ok()) << seconds;
    EXPECT_NE(client.status().message().find("--deadline-seconds"), std::string::npos)
        << client.status();
  }
  absl::SetFlag(&FLAGS_deadline_seconds, 86400.0);
  EXPECT_TRUE(ClientFromFlags("127.0.0.1:1", "server").ok());
  absl::SetFlag(&FLAGS_deadline_seconds, 10.0);
}

}  // namespace
}  // namespace graphsieve
