// The refresher against real snapshots and a real server: swap under load,
// a corrupt version, pin and rollback, --pin-version / --reject-versions.
#include <atomic>
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "server/server.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using testing::SyntheticSnapshot;

std::unique_ptr<GraphsieveServer> Start(const std::string& root, double poll_seconds,
                                        ServerOptions o = {}) {
  o = testing::LoopbackOptions(root, o);
  o.admin_port = 0;
  o.poll_interval_seconds = poll_seconds;
  auto server = GraphsieveServer::Create(o);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

v1::GetSamplingRateRequest AllStoredPairs(const SyntheticSnapshot& s) {
  v1::GetSamplingRateRequest req;
  for (uint64_t u = 1; u <= static_cast<uint64_t>(s.num_users); ++u) {
    for (uint64_t i = 1001; i <= 1000 + static_cast<uint64_t>(s.num_items); ++i) {
      if (s.StoredRate(u, i) < 0) continue;
      req.add_user_ids(u);
      req.add_item_ids(i);
    }
  }
  return req;
}

std::string Served(v1::SamplingRateService::Stub* stub) {
  v1::GetSamplingRateRequest req;
  req.add_user_ids(1);
  req.add_item_ids(1002);
  v1::GetSamplingRateResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Status st = stub->GetSamplingRate(&ctx, req, &resp);
  return st.ok() ? resp.snapshot_version() : absl::StrCat("error: ", st.error_message());
}

TEST(RefresherTest, SwapUnderLoadDropsNothingAndNeverMixesVersions) {
  const std::string root = testing::NewTempDir("swap");
  std::map<std::string, SyntheticSnapshot> by_version;
  const SyntheticSnapshot g1 = SyntheticSnapshot::Make(1);
  auto v1 = testing::PublishSnapshot(root, g1);
  ASSERT_TRUE(v1.ok()) << v1.status();
  by_version[*v1] = g1;
  const double poll = 0.3;
  auto server = Start(root, poll);
  ASSERT_NE(server, nullptr);
  auto stub = testing::Connect(server->port());
  // Bounded waits for states (60 s), generous for a loaded machine; no timer
  // decides an outcome (docs/RELIABILITY.md, "No flaky tests").
  for (int k = 0; k < 1200 && Served(stub.get()) != *v1; ++k)
    absl::SleepFor(absl::Milliseconds(50));
  ASSERT_EQ(Served(stub.get()), *v1);

  const v1::GetSamplingRateRequest req = AllStoredPairs(g1);  // same pairs in every generation
  std::atomic<bool> stop{false};
  std::atomic<int> ok{0}, failed{0}, mixed{0};
  absl::Mutex mu;
  std::set<std::string> seen;
  std::map<std::string, SyntheticSnapshot> expected;  // filled before a version can be served
  absl::Mutex expected_mu;
  {
    absl::MutexLock l(&expected_mu);
    expected = by_version;
  }
  std::vector<std::thread> clients;
  for (int t = 0; t < 3; ++t) {
    clients.emplace_back([&, t] {
      auto my_stub = testing::Connect(server->port());
      for (int n = 0; n < 20000 && !stop.load(); ++n) {  // bounded
        v1::GetSamplingRateResponse resp;
        grpc::ClientContext ctx;
        ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
        grpc::Status st = my_stub->GetSamplingRate(&ctx, req, &resp);
        if (!st.ok()) {
          failed++;
          continue;
        }
        ok++;
        SyntheticSnapshot s;
        {
          absl::MutexLock l(&expected_mu);
          auto it = expected.find(resp.snapshot_version());
          if (it == expected.end()) {
            mixed++;
            continue;
          }
          s = it->second;
        }
        for (int k = 0; k < req.user_ids_size(); ++k) {
          if (resp.rates(k) != s.StoredRate(req.user_ids(k), req.item_ids(k))) {
            mixed++;
            break;
          }
        }
        absl::MutexLock l(&mu);
        seen.insert(resp.snapshot_version());
      }
    });
  }
  // Until the clients have made `calls` more successful calls (bounded: 60 s).
  auto wait_for_calls = [&](int calls) {
    const int target = ok.load() + calls;
    for (int k = 0; k < 1200 && ok.load() < target && failed.load() == 0; ++k) {
      absl::SleepFor(absl::Milliseconds(50));
    }
    return ok.load() >= target;
  };
  // Publish two new versions while the clients hammer (each version is
  // published only once the clients have made calls on the one before).
  std::vector<double> adoption_seconds;
  for (int gen = 2; gen <= 3; ++gen) {
    ASSERT_TRUE(wait_for_calls(15)) << "the clients made no calls";
    const SyntheticSnapshot g = SyntheticSnapshot::Make(gen);
    // Register the expected rates first: the refresher may adopt at once.
    const std::string predicted_dir_marker = absl::StrCat("gen", gen);
    auto v = testing::PublishSnapshot(root, g, false, /*publish=*/false);
    ASSERT_TRUE(v.ok()) << v.status();
    {
      absl::MutexLock l(&expected_mu);
      expected[*v] = g;
    }
    const absl::Time published = absl::Now();
    ASSERT_TRUE(testing::SetCurrent(root, *v).ok());
    bool served = false;
    for (int k = 0; k < 1200 && !served; ++k) {  // bounded: 60 s
      served = Served(stub.get()) == *v;
      if (!served) absl::SleepFor(absl::Milliseconds(50));
    }
    ASSERT_TRUE(served) << "version " << *v << " not served";
    adoption_seconds.push_back(absl::ToDoubleSeconds(absl::Now() - published));
  }
  // The clients themselves must see the last version (bounded: 60 s).
  const std::string last = Served(stub.get());
  for (int k = 0; k < 1200; ++k) {
    {
      absl::MutexLock l(&mu);
      if (seen.count(last) > 0) break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  stop = true;
  for (auto& c : clients) c.join();
  EXPECT_GT(ok.load(), 0);
  EXPECT_EQ(failed.load(), 0);
  EXPECT_EQ(mixed.load(), 0) << "a response mixed versions or had wrong rates";
  EXPECT_GE(seen.size(), 2u);
  EXPECT_EQ(seen.count(last), 1u) << "no client call was answered by " << last;
  // A figure, not an assertion (timing depends on the machine's load).
  for (double s : adoption_seconds) {
    std::printf("adopted %.2f s after publishing (poll interval %.1f s)\n", s, poll);
  }
}

TEST(RefresherTest, CorruptVersionIsRejectedOnceAndTheOldOneKeepsServing) {
  const std::string root = testing::NewTempDir("corrupt");
  auto good = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  ASSERT_TRUE(good.ok());
  auto server = Start(root, -1);
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(server->manager().PollOnce().ok());
  auto bad = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2), /*corrupt=*/true);
  ASSERT_TRUE(bad.ok()) << bad.status();
  absl::Status st = server->manager().PollOnce();
  EXPECT_FALSE(st.ok());
  EXPECT_EQ(server->manager().Current()->version, *good);
  // Not retried in a loop: the next polls do not load it again.
  EXPECT_TRUE(server->manager().PollOnce().ok());
  EXPECT_TRUE(server->manager().PollOnce().ok());
  auto stub = testing::Connect(server->port());
  EXPECT_EQ(Served(stub.get()), *good);

  grpc::ClientContext ctx;
  v1::GetStatusResponse status;
  ASSERT_TRUE(stub->GetStatus(&ctx, v1::GetStatusRequest(), &status).ok());
  EXPECT_TRUE(status.serving());
  EXPECT_EQ(status.active().version(), *good);
  EXPECT_EQ(status.current_on_disk(), *bad);
  EXPECT_THAT(status.rejected_versions(), Contains(*bad));
  ASSERT_GE(status.refresh_history_size(), 2);
  const v1::RefreshEvent& last = status.refresh_history(status.refresh_history_size() - 1);
  EXPECT_EQ(last.version(), *bad);
  EXPECT_FALSE(last.ok());
  EXPECT_FALSE(last.message().empty());
  auto metrics = testing::HttpGet(server->admin_port(), "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(metrics->second, HasSubstr("graphsieve_refresh_total{result=\"failure\"} 1"));
  EXPECT_THAT(metrics->second, HasSubstr("graphsieve_refresh_total{result=\"success\"} 1"));
  EXPECT_THAT(metrics->second,
              HasSubstr(absl::StrCat("graphsieve_snapshot_info{version=\"", *good)));
  // A good version published after it is adopted.
  auto next = testing::PublishSnapshot(root, SyntheticSnapshot::Make(3));
  ASSERT_TRUE(next.ok());
  EXPECT_TRUE(server->manager().PollOnce().ok());
  EXPECT_EQ(Served(stub.get()), *next);
}

// A CURRENT that names no version: the server keeps serving and says why,
// naming the file, in GetStatus (graphsieve status) and /status.json.
TEST(RefresherTest, AGarbageCurrentIsReportedNamingTheFile) {
  const std::string root = testing::NewTempDir("garbage-current");
  auto good = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  ASSERT_TRUE(good.ok()) << good.status();
  auto server = Start(root, -1);
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(server->manager().PollOnce().ok());
  std::ofstream(root + "/CURRENT", std::ios::trunc) << "not-a-version\n";
  EXPECT_TRUE(server->manager().PollOnce().ok());  // logged once, keeps serving
  auto stub = testing::Connect(server->port());
  EXPECT_EQ(Served(stub.get()), *good);
  grpc::ClientContext ctx;
  v1::GetStatusResponse status;
  ASSERT_TRUE(stub->GetStatus(&ctx, v1::GetStatusRequest(), &status).ok());
  EXPECT_EQ(status.current_on_disk(), "");
  EXPECT_EQ(status.current_error(), root + "/CURRENT: 'not-a-version' is not a version id");
  auto page = testing::HttpGet(server->admin_port(), "/status.json");
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(nlohmann::json::parse(page->second).value("current_error", ""), status.current_error());

  // Nothing published yet is no error.
  ASSERT_EQ(std::remove((root + "/CURRENT").c_str()), 0);
  grpc::ClientContext ctx2;
  ASSERT_TRUE(stub->GetStatus(&ctx2, v1::GetStatusRequest(), &status).ok());
  EXPECT_EQ(status.current_error(), "");
}

TEST(RefresherTest, PinAndRollbackAreNeverUndoneByTheRefresher) {
  const std::string root = testing::NewTempDir("pin");
  auto a = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  auto b = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2));
  ASSERT_TRUE(a.ok() && b.ok());
  auto server = Start(root, -1);
  ASSERT_NE(server, nullptr);
  ASSERT_TRUE(server->manager().PollOnce().ok());
  auto stub = testing::Connect(server->port());
  ASSERT_EQ(Served(stub.get()), *b);

  // PinVersion is accepted on the operator listener only (server/service_ports.h).
  auto op_stub = v1::SamplingRateService::NewStub(
      grpc::CreateChannel(server->operator_address(), grpc::InsecureChannelCredentials()));
  auto pin = [&](const std::string& version, bool reject, v1::PinVersionResponse* resp) {
    grpc::ClientContext ctx;
    v1::PinVersionRequest req;
    req.set_version(version);
    req.set_reject_active(reject);
    return op_stub->PinVersion(&ctx, req, resp);
  };
  // Unknown version: NOT_FOUND, still serving b.
  v1::PinVersionResponse resp;
  grpc::Status st = pin("20990101T000000Z-deadbeef", false, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::NOT_FOUND) << st.error_message();
  EXPECT_THAT(st.error_message(), HasSubstr("20990101T000000Z-deadbeef is not on disk"));
  // An operator's mistake, not a refresh failure (GraphsieveRefreshFailing
  // in deploy/prometheus/graphsieve-alerts.yml counts those).
  EXPECT_EQ(server->manager().State().refresh_failures, 0u);
  auto metrics = testing::HttpGet(server->admin_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(metrics->second, HasSubstr("graphsieve_refresh_total{result=\"failure\"} 0"));
  st = pin("../etc", false, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(st.error_message(), HasSubstr("version"));
  EXPECT_EQ(Served(stub.get()), *b);

  // Roll back from b to a.
  ASSERT_TRUE(pin(*a, /*reject=*/true, &resp).ok());
  EXPECT_EQ(resp.active_version(), *a);
  EXPECT_EQ(resp.pinned_version(), *a);
  EXPECT_EQ(Served(stub.get()), *a);
  EXPECT_TRUE(server->manager().PollOnce().ok());
  EXPECT_EQ(Served(stub.get()), *a) << "pinned: CURRENT is not followed";

  // Unpin: CURRENT still names b, which was rolled back: stay on a.
  ASSERT_TRUE(pin("", false, &resp).ok());
  EXPECT_EQ(resp.pinned_version(), "");
  EXPECT_TRUE(server->manager().PollOnce().ok());
  EXPECT_EQ(Served(stub.get()), *a) << "a rolled-back version is never re-adopted";
  ManagerState state = server->manager().State();
  EXPECT_THAT(state.rejected, Contains(*b));

  // A new version is followed again.
  auto c = testing::PublishSnapshot(root, SyntheticSnapshot::Make(3));
  ASSERT_TRUE(c.ok());
  EXPECT_TRUE(server->manager().PollOnce().ok());
  EXPECT_EQ(Served(stub.get()), *c);

  // Unpin + reject_active with CURRENT == active: nothing else to serve.
  st = pin("", true, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(Served(stub.get()), *c);
}

TEST(RefresherTest, PinVersionAndRejectVersionsFlags) {
  const std::string root = testing::NewTempDir("pinflag");
  auto a = testing::PublishSnapshot(root, SyntheticSnapshot::Make(1));
  auto b = testing::PublishSnapshot(root, SyntheticSnapshot::Make(2));
  ASSERT_TRUE(a.ok() && b.ok());
  {
    ServerOptions o;
    o.pin_version = *a;
    auto server = Start(root, -1, o);
    ASSERT_NE(server, nullptr);
    ASSERT_TRUE(server->manager().PollOnce().ok());
    EXPECT_EQ(server->manager().Current()->version, *a);
    EXPECT_EQ(server->manager().State().pinned, *a);
  }
  {
    ServerOptions o;
    o.reject_versions = {*b};
    auto server = Start(root, -1, o);
    ASSERT_NE(server, nullptr);
    ASSERT_TRUE(server->manager().PollOnce().ok());
    EXPECT_EQ(server->manager().Current(), nullptr) << "CURRENT names a rejected version";
    EXPECT_FALSE(server->ready());
  }
}

}  // namespace
}  // namespace graphsieve
