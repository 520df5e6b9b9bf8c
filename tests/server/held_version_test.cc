// The held previous version (server/snapshot_manager.h, docs/CLIENTS.md
// "Partitioned deployments") against real snapshots and a real server:
// GetSamplingRateRequest.snapshot_version answered from the active or the
// held version, NOT_FOUND naming both otherwise, the store hold that keeps it
// from retention, released at the next swap or on a rollback, the metrics.
// Every version change is an explicit PollOnce / PinVersion: no timers.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/snapshot/snapshot_store.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;
using testing::SyntheticSnapshot;

std::unique_ptr<GraphsieveServer> Start(const std::string& root, ServerOptions o = {}) {
  o = testing::LoopbackOptions(root, o);
  o.admin_port = 0;
  auto server = GraphsieveServer::Create(o);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

// GetSamplingRate of (1, 1001), a stored pair, asking for `version`.
grpc::Status Ask(v1::SamplingRateService::Stub* stub, const std::string& version,
                 v1::GetSamplingRateResponse* response) {
  v1::GetSamplingRateRequest req;
  req.add_user_ids(1);
  req.add_item_ids(1001);
  req.set_snapshot_version(version);
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  return stub->GetSamplingRate(&ctx, req, response);
}

std::unique_ptr<SnapshotStore> Store(const std::string& root) {
  auto store = SnapshotStore::Create({root, false});
  EXPECT_TRUE(store.ok()) << store.status();
  return *std::move(store);
}

TEST(HeldVersionTest, ThePreviousVersionAnswersPinnedRequestsUntilTheNextSwap) {
  const std::string root = testing::NewTempDir("held");
  const SyntheticSnapshot gen1 = SyntheticSnapshot::Make(1), gen2 = SyntheticSnapshot::Make(2);
  auto a = testing::PublishSnapshot(root, gen1);
  ASSERT_TRUE(a.ok()) << a.status();
  auto server = Start(root);
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(server->manager().PollOnce().ok());
  EXPECT_EQ(server->manager().State().held, "");
  auto b = testing::PublishSnapshot(root, gen2);
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(server->manager().PollOnce().ok());
  EXPECT_EQ(server->manager().Current()->version, *b);
  EXPECT_EQ(server->manager().State().held, *a);

  auto stub = testing::Connect(server->port());
  v1::GetSamplingRateResponse r;
  ASSERT_TRUE(Ask(stub.get(), *a, &r).ok());  // held: a's own rate
  EXPECT_EQ(r.snapshot_version(), *a);
  EXPECT_FLOAT_EQ(r.rates(0), gen1.StoredRate(1, 1001));
  ASSERT_TRUE(Ask(stub.get(), *b, &r).ok());  // active, named
  EXPECT_EQ(r.snapshot_version(), *b);
  EXPECT_FLOAT_EQ(r.rates(0), gen2.StoredRate(1, 1001));
  ASSERT_TRUE(Ask(stub.get(), "", &r).ok());  // no field: the active one
  EXPECT_EQ(r.snapshot_version(), *b);
  const std::string unknown = "20990101T000000Z-deadbeef";
  grpc::Status st = Ask(stub.get(), unknown, &r);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(st.error_message(), HasSubstr("'" + unknown + "' is not held by this server"));
  EXPECT_THAT(st.error_message(), HasSubstr("serves '" + *b + "'"));
  EXPECT_THAT(st.error_message(), HasSubstr("holds '" + *a + "'"));

  // The store hold keeps a from retention (keep 1 would delete it).
  std::unique_ptr<SnapshotStore> store = Store(root);
  EXPECT_TRUE(store->IsHeld(*a, absl::Now()));
  EXPECT_FALSE(store->IsPinned(*a));
  {
    auto lock = store->AcquirePublishLock(5);
    ASSERT_TRUE(lock.ok()) << lock.status();
    auto deleted = store->ApplyRetention(**lock, 1);
    ASSERT_TRUE(deleted.ok()) << deleted.status();
    EXPECT_TRUE(deleted->empty());
  }

  // The next swap releases a (mapping and store hold) and holds b.
  auto c = testing::PublishSnapshot(root, SyntheticSnapshot::Make(3));
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(server->manager().PollOnce().ok());
  EXPECT_EQ(server->manager().State().held, *b);
  st = Ask(stub.get(), *a, &r);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << st.error_message();
  EXPECT_THAT(st.error_message(), HasSubstr("serves '" + *c + "' and still holds '" + *b + "'"));
  EXPECT_FALSE(store->IsHeld(*a, absl::Now()));
  EXPECT_TRUE(store->IsHeld(*b, absl::Now()));
  ASSERT_TRUE(Ask(stub.get(), *b, &r).ok());
  EXPECT_FLOAT_EQ(r.rates(0), gen2.StoredRate(1, 1001));

  // GetStatus and /metrics.
  grpc::ClientContext ctx;
  v1::GetStatusResponse status;
  ASSERT_TRUE(stub->GetStatus(&ctx, v1::GetStatusRequest(), &status).ok());
  EXPECT_EQ(status.held_version(), *b);
  auto metrics = testing::HttpGet(server->admin_port(), "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(metrics->second,
              HasSubstr("graphsieve_version_pinned_requests_total{result=\"held\"} 2"));
  EXPECT_THAT(metrics->second,
              HasSubstr("graphsieve_version_pinned_requests_total{result=\"active\"} 1"));
  EXPECT_THAT(metrics->second,
              HasSubstr("graphsieve_version_pinned_requests_total{result=\"not_held\"} 2"));
}

TEST(HeldVersionTest, ARolledBackVersionIsNotHeld) {
  const std::string root = testing::NewTempDir("held-rollback");
  auto a = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  ASSERT_TRUE(a.ok()) << a.status();
  auto server = Start(root);
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(server->manager().PollOnce().ok());
  auto b = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2));
  ASSERT_TRUE(b.ok()) << b.status();
  ASSERT_TRUE(server->manager().PollOnce().ok());
  ASSERT_EQ(server->manager().State().held, *a);
  // Roll back from b to a: b is not served again, not even by name.
  ASSERT_TRUE(server->manager().Pin(*a, /*reject_active=*/true).ok());
  EXPECT_EQ(server->manager().Current()->version, *a);
  EXPECT_EQ(server->manager().State().held, "");
  EXPECT_FALSE(Store(root)->IsHeld(*b, absl::Now()));
  v1::GetSamplingRateResponse r;
  auto stub = testing::Connect(server->port());
  EXPECT_EQ(Ask(stub.get(), *b, &r).error_code(), grpc::StatusCode::NOT_FOUND);
  // A plain pin (no rollback) holds the version it leaves.
  ASSERT_TRUE(server->manager().Pin(*b, /*reject_active=*/false).ok());
  EXPECT_EQ(server->manager().State().held, *a);
}

TEST(HeldVersionTest, NothingIsHeldWithHoldZeroOrAnIndexBuiltInMemory) {
  const std::string root = testing::NewTempDir("held-off");
  auto a = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  auto b = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2), false, /*publish=*/false);
  ASSERT_TRUE(a.ok() && b.ok());
  ServerOptions zero;
  zero.previous_version_hold_seconds = 0;
  ServerOptions built;
  built.use_index_file = false;  // anonymous memory: holding would double it
  for (const ServerOptions& o : {zero, built}) {
    auto server = Start(root, o);
    ASSERT_NE(server, nullptr);
    ASSERT_TRUE(server->manager().Pin(*a, false).ok());
    ASSERT_TRUE(server->manager().Pin(*b, false).ok());
    EXPECT_EQ(server->manager().Current()->version, *b);
    EXPECT_EQ(server->manager().State().held, "");
    v1::GetSamplingRateResponse r;
    auto stub = testing::Connect(server->port());
    const grpc::Status st = Ask(stub.get(), *a, &r);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_THAT(st.error_message(), HasSubstr("holds no previous version"));
  }
}

// Without a poll thread (interval -1 here; 0 = one poll) a swap by Pin still
// holds the previous version, and its mapping must close when the hold ends
// — it used to stay open until the next swap. Waits for the release itself
// (the last reference dropping), not for a time.
TEST(HeldVersionTest, WithoutAPollThreadTheHoldIsClosedWhenItEnds) {
  const std::string root = testing::NewTempDir("held-no-poll");
  auto a = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  auto b = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2), false, /*publish=*/false);
  ASSERT_TRUE(a.ok() && b.ok());
  ServerOptions o;
  o.previous_version_hold_seconds = 0.2;
  auto server = Start(root, o);
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(server->manager().Pin(*a, false).ok());
  std::weak_ptr<const ServingSnapshot> first = server->manager().Current();
  ASSERT_FALSE(first.expired());
  ASSERT_TRUE(server->manager().Pin(*b, false).ok());
  EXPECT_EQ(server->manager().Current()->version, *b);
  const absl::Time give_up = absl::Now() + absl::Seconds(60);
  while (!first.expired() && absl::Now() < give_up) absl::SleepFor(absl::Milliseconds(10));
  EXPECT_TRUE(first.expired()) << "version " << *a << " still open 60 s after its 0.2 s hold";
  EXPECT_EQ(server->manager().State().held, "");
  EXPECT_FALSE(Store(root)->IsHeld(*a, absl::Now()));
}

TEST(HeldVersionTest, StoreHoldsExpireAndNameTheirHolder) {
  const std::string root = testing::NewTempDir("store-holds");
  auto a = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  auto b = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2));
  ASSERT_TRUE(a.ok() && b.ok());
  std::unique_ptr<SnapshotStore> store = Store(root);
  const absl::Time now = absl::Now();
  EXPECT_EQ(store->Hold(*a, "bad/holder", now + absl::Hours(1)).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(store->Hold("20990101T000000Z-deadbeef", "x", now + absl::Hours(1)).code(),
            absl::StatusCode::kNotFound);
  ASSERT_TRUE(store->Hold(*a, "replica-1", now - absl::Seconds(10)).ok());  // already expired
  EXPECT_FALSE(store->IsHeld(*a, now));
  auto removed = store->RemoveExpiredHolds(now);
  ASSERT_TRUE(removed.ok()) << removed.status();
  EXPECT_EQ(*removed, std::vector<std::string>{*a + "@replica-1"});
  // Two holders: a stays held until both released.
  ASSERT_TRUE(store->Hold(*a, "replica-1", now + absl::Hours(1)).ok());
  ASSERT_TRUE(store->Hold(*a, "replica-2", now + absl::Hours(1)).ok());
  ASSERT_TRUE(store->Release(*a, "replica-1").ok());
  EXPECT_TRUE(store->IsHeld(*a, now));
  ASSERT_TRUE(store->Release(*a, "replica-2").ok());
  EXPECT_FALSE(store->IsHeld(*a, now));
  EXPECT_TRUE(store->Release(*a, "replica-2").ok());  // releasing twice is fine
}

}  // namespace
}  // namespace graphsieve
