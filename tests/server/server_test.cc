// GetSamplingRate against a real GraphsieveServer on a loopback port, serving
// real snapshots written by the snapshot writer: exact / inferred / default
// rates, keep decisions, every bad-request path, health, admin HTTP.
#include "server/server.h"

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/io/ids.h"
#include "core/model/unseen.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/server/server_test_access.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;
using testing::SyntheticSnapshot;

class ServerTest : public ::testing::Test {
 protected:
  void StartServer(const std::string& root, ServerOptions o = {}, bool hold_tagged_calls = false) {
    o = testing::LoopbackOptions(root, o);
    o.admin_port = 0;
    auto server = hold_tagged_calls ? GraphsieveServerTestAccess::CreateHoldingTaggedCalls(o)
                                    : GraphsieveServer::Create(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    stub_ = testing::Connect(server_->port());
  }

  grpc::Status Call(const v1::GetSamplingRateRequest& req, v1::GetSamplingRateResponse* resp) {
    grpc::ClientContext ctx;
    ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    return stub_->GetSamplingRate(&ctx, req, resp);
  }

  std::unique_ptr<GraphsieveServer> server_;
  std::unique_ptr<v1::SamplingRateService::Stub> stub_;
};

// The same answers whether lookups come from the in-memory index or RocksDB.
class ServerLookupTest : public ServerTest, public ::testing::WithParamInterface<LookupMode> {};

TEST_P(ServerLookupTest, ExactInferredAndDefaultRates) {
  const std::string root = testing::NewTempDir("rates");
  const SyntheticSnapshot snap = SyntheticSnapshot::Make(1);
  auto version = testing::PublishSnapshot(root, snap);
  ASSERT_TRUE(version.ok()) << version.status();
  ServerOptions o;
  o.lookup = GetParam();
  StartServer(root, o);
  ASSERT_TRUE(server_->manager().PollOnce().ok());

  v1::GetSamplingRateRequest req;
  // Every (user, item) among known nodes, plus unknown users/items.
  for (uint64_t u = 1; u <= 12; ++u) {
    for (uint64_t i = 1001; i <= 1015; ++i) {
      req.add_user_ids(u);
      req.add_item_ids(i);
    }
  }
  req.add_user_ids(3);  // known user, unknown item
  req.add_item_ids(99999);
  req.add_user_ids(88888);  // unknown user, known item
  req.add_item_ids(1004);
  req.add_user_ids(77777);  // both unknown
  req.add_item_ids(66666);
  v1::GetSamplingRateResponse resp;
  ASSERT_TRUE(Call(req, &resp).ok());
  ASSERT_EQ(resp.rates_size(), req.user_ids_size());
  ASSERT_EQ(resp.sources_size(), req.user_ids_size());
  EXPECT_EQ(resp.snapshot_version(), *version);
  EXPECT_EQ(resp.keep_size(), 0);  // no labels, no decisions

  const NodeTable& nodes = snap.result.nodes;
  int exact = 0, inferred = 0, by_default = 0;
  for (int k = 0; k < req.user_ids_size(); ++k) {
    const uint64_t u = req.user_ids(k), i = req.item_ids(k);
    const int un = snap.UserNode(u), in = snap.ItemNode(i);
    const float stored = snap.StoredRate(u, i);
    SCOPED_TRACE(absl::StrCat("pair (", u, ", ", i, ")"));
    if (stored >= 0) {
      EXPECT_EQ(resp.sources(k), v1::RATE_SOURCE_EXACT);
      EXPECT_FLOAT_EQ(resp.rates(k), stored);
      ++exact;
    } else if (un >= 0 && in >= 0) {
      EXPECT_EQ(resp.sources(k), v1::RATE_SOURCE_INFERRED);
      const float expected =
          ScoreUnseenPair(NodeView{nodes.records[un], nodes.SketchRow(un)},
                          NodeView{nodes.records[in], nodes.SketchRow(in)}, snap.result.model);
      EXPECT_FLOAT_EQ(resp.rates(k), expected);
      ++inferred;
    } else {
      EXPECT_EQ(resp.sources(k), v1::RATE_SOURCE_DEFAULT);
      // node-mean: the known node's mean rate, else alpha.
      const float expected = un >= 0   ? nodes.records[un].mean_rate
                             : in >= 0 ? nodes.records[in].mean_rate
                                       : static_cast<float>(snap.result.model.alpha);
      EXPECT_FLOAT_EQ(resp.rates(k), expected);
      ++by_default;
    }
  }
  EXPECT_GT(exact, 0);
  EXPECT_GT(inferred, 0);
  EXPECT_EQ(by_default, 3);

  // The pairs counters saw exactly that mix.
  auto metrics = testing::HttpGet(server_->admin_port(), "/metrics");
  ASSERT_TRUE(metrics.ok()) << metrics.status();
  EXPECT_THAT(metrics->second,
              HasSubstr(absl::StrCat("graphsieve_pairs_total{source=\"exact\"} ", exact)));
  EXPECT_THAT(metrics->second,
              HasSubstr(absl::StrCat("graphsieve_pairs_total{source=\"inferred\"} ", inferred)));
  EXPECT_THAT(metrics->second, HasSubstr("graphsieve_pairs_total{source=\"default\"} 3"));
  // The index's RAM is exported; zero without an index.
  const std::string gauge = "\ngraphsieve_snapshot_index_bytes ";
  const size_t at = metrics->second.find(gauge);
  ASSERT_NE(at, std::string::npos) << metrics->second;
  const double index_bytes = std::strtod(metrics->second.c_str() + at + gauge.size(), nullptr);
  if (GetParam() == LookupMode::kMemory) {
    EXPECT_GT(index_bytes, 1000.0);
  } else {
    EXPECT_EQ(index_bytes, 0.0);
  }
}

INSTANTIATE_TEST_SUITE_P(Lookup, ServerLookupTest,
                         ::testing::Values(LookupMode::kMemory, LookupMode::kRocksDb),
                         [](const auto& info) { return std::string(LookupModeName(info.param)); });

TEST_F(ServerTest, DefaultPolicyAlphaAndFixed) {
  const std::string root = testing::NewTempDir("policy");
  const SyntheticSnapshot snap = SyntheticSnapshot::Make(1);
  ASSERT_TRUE(testing::PublishSnapshot(root, snap).ok());
  for (const std::string& policy : {std::string("alpha"), std::string("0.375")}) {
    ServerOptions o;
    auto parsed = DefaultPolicy::Parse(policy);
    ASSERT_TRUE(parsed.ok());
    o.default_policy = *parsed;
    server_.reset();
    StartServer(root, o);
    ASSERT_TRUE(server_->manager().PollOnce().ok());
    v1::GetSamplingRateRequest req;
    req.add_user_ids(3);
    req.add_item_ids(99999);
    v1::GetSamplingRateResponse resp;
    ASSERT_TRUE(Call(req, &resp).ok());
    EXPECT_EQ(resp.sources(0), v1::RATE_SOURCE_DEFAULT);
    EXPECT_FLOAT_EQ(resp.rates(0), policy == "alpha" ? 0.2f : 0.375f) << policy;
  }
  EXPECT_FALSE(DefaultPolicy::Parse("1.5").ok());
  EXPECT_THAT(std::string(DefaultPolicy::Parse("median").status().message()),
              HasSubstr("--default-policy"));
}

TEST_F(ServerTest, KeepDecisionsAndLogOdds) {
  const std::string root = testing::NewTempDir("keep");
  const SyntheticSnapshot snap = SyntheticSnapshot::Make(2);
  ASSERT_TRUE(testing::PublishSnapshot(root, snap).ok());
  StartServer(root);
  ASSERT_TRUE(server_->manager().PollOnce().ok());
  v1::GetSamplingRateRequest req;
  for (int k = 0; k < 400; ++k) {
    req.add_user_ids(1 + k % 12);
    req.add_item_ids(1001 + (k * 7) % 15);
    req.add_labels(k % 4 == 0);
    req.add_instance_keys(0x9e3779b97f4a7c15ull * static_cast<uint64_t>(k + 1));
  }
  v1::GetSamplingRateResponse first, second;
  ASSERT_TRUE(Call(req, &first).ok());
  ASSERT_TRUE(Call(req, &second).ok());
  ASSERT_EQ(first.keep_size(), 400);
  ASSERT_EQ(first.log_odds_offsets_size(), 400);
  int kept_negatives = 0, dropped = 0;
  for (int k = 0; k < 400; ++k) {
    EXPECT_EQ(first.keep(k), second.keep(k)) << "same input, same answer";
    if (req.labels(k)) {
      EXPECT_TRUE(first.keep(k));
      EXPECT_FLOAT_EQ(first.log_odds_offsets(k), std::log(first.rates(k)));
    } else {
      EXPECT_EQ(first.keep(k), KeepNegative(req.instance_keys(k), snap.seed, first.rates(k)));
      EXPECT_FLOAT_EQ(first.log_odds_offsets(k), std::log(first.rates(k)));
      (first.keep(k) ? kept_negatives : dropped)++;
    }
  }
  EXPECT_GT(kept_negatives, 0);
  EXPECT_GT(dropped, 0);
}

struct BadRequestCase {
  std::string name;
  std::function<void(v1::GetSamplingRateRequest*)> fill;
  grpc::StatusCode code;
  std::string message;
};

TEST_F(ServerTest, EveryBadRequestIsRejectedWithTheFieldNamed) {
  const std::string root = testing::NewTempDir("bad");
  ServerOptions o;
  o.max_batch_pairs = 10;
  StartServer(root, o);
  // No snapshot yet: a well-formed request is UNAVAILABLE.
  {
    v1::GetSamplingRateRequest req;
    req.add_user_ids(1);
    req.add_item_ids(1001);
    v1::GetSamplingRateResponse resp;
    grpc::Status st = Call(req, &resp);
    EXPECT_EQ(st.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_THAT(st.error_message(), HasSubstr("no snapshot loaded"));
  }
  ASSERT_TRUE(testing::PublishSnapshot(root, SyntheticSnapshot::Make(1)).ok());
  ASSERT_TRUE(server_->manager().PollOnce().ok());
  auto pairs = [](int n) {
    return [n](v1::GetSamplingRateRequest* r) {
      for (int k = 0; k < n; ++k) {
        r->add_user_ids(1);
        r->add_item_ids(1001);
      }
    };
  };
  const std::vector<BadRequestCase> cases = {
      {"empty", [](v1::GetSamplingRateRequest*) {}, grpc::StatusCode::INVALID_ARGUMENT,
       "user_ids and item_ids are empty"},
      {"item_ids short",
       [](v1::GetSamplingRateRequest* r) {
         r->add_user_ids(1);
         r->add_user_ids(2);
         r->add_item_ids(1001);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "item_ids has 1 entries but user_ids has 2"},
      {"user_ids empty", [](v1::GetSamplingRateRequest* r) { r->add_item_ids(1001); },
       grpc::StatusCode::INVALID_ARGUMENT, "item_ids has 1 entries but user_ids has 0"},
      {"oversize", pairs(11), grpc::StatusCode::INVALID_ARGUMENT,
       "user_ids has 11 pairs, more than --max-batch-pairs=10"},
      {"labels short",
       [&](v1::GetSamplingRateRequest* r) {
         pairs(3)(r);
         r->add_labels(true);
         r->add_instance_keys(1);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "labels has 1 entries but user_ids has 3"},
      {"keys without labels",
       [&](v1::GetSamplingRateRequest* r) {
         pairs(1)(r);
         r->add_instance_keys(1);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "instance_keys given without labels"},
      {"labels without keys",
       [&](v1::GetSamplingRateRequest* r) {
         pairs(2)(r);
         r->add_labels(true);
         r->add_labels(false);
       },
       grpc::StatusCode::INVALID_ARGUMENT, "instance_keys has 0 entries but labels has 2"},
  };
  for (const BadRequestCase& c : cases) {
    v1::GetSamplingRateRequest req;
    c.fill(&req);
    v1::GetSamplingRateResponse resp;
    grpc::Status st = Call(req, &resp);
    EXPECT_EQ(st.error_code(), c.code) << c.name << ": " << st.error_message();
    EXPECT_THAT(st.error_message(), HasSubstr(c.message)) << c.name;
  }
  // The exact maximum is fine.
  v1::GetSamplingRateRequest ok;
  pairs(10)(&ok);
  v1::GetSamplingRateResponse resp;
  EXPECT_TRUE(Call(ok, &resp).ok());
  // Errors are counted by code.
  auto metrics = testing::HttpGet(server_->admin_port(), "/metrics");
  ASSERT_TRUE(metrics.ok());
  EXPECT_THAT(metrics->second,
              HasSubstr("graphsieve_request_errors_total{code=\"INVALID_ARGUMENT\"} 7"));
  EXPECT_THAT(metrics->second,
              HasSubstr("graphsieve_request_errors_total{code=\"UNAVAILABLE\"} 1"));
}

// The deadline expires on the server, between two chunks of a batch: the call
// is held in its handler (GraphsieveServerTestAccess::CreateHoldingTaggedCalls)
// until its deadline has passed, then released; the scorer's check after the
// first chunk must stop it. The server's own verdict is read from its metrics
// (the client's timer would report DEADLINE_EXCEEDED whatever the server did):
// without the between-chunk check the server scores the whole batch and counts
// an OK, or a CANCELLED from the cancellation check.
TEST_F(ServerTest, DeadlineExpiringBetweenChunksStopsTheBatch) {
  const std::string root = testing::NewTempDir("deadline");
  ASSERT_TRUE(testing::PublishSnapshot(root, SyntheticSnapshot::Make(1)).ok());
  ServerOptions o;
  o.chunk_pairs = 1000;
  StartServer(root, o, /*hold_tagged_calls=*/true);
  ASSERT_TRUE(server_->manager().PollOnce().ok());
  v1::GetSamplingRateRequest req;
  for (int k = 0; k < 100000; ++k) {  // 100 chunks
    req.add_user_ids(1 + k % 12);
    req.add_item_ids(1001 + k % 15);
  }
  const auto deadline = std::chrono::system_clock::now() + std::chrono::seconds(5);
  grpc::Status st;
  std::thread client([&] {
    grpc::ClientContext ctx;
    ctx.AddMetadata(kHoldMetadataKey, "1");
    ctx.set_deadline(deadline);
    v1::GetSamplingRateResponse resp;
    st = stub_->GetSamplingRate(&ctx, req, &resp);
  });
  // Wait (bounded: 60 s) until the call is held in the handler ...
  auto inflight = [&] {
    auto metrics = testing::HttpGet(server_->admin_port(), "/metrics");
    return metrics.ok() &&
           metrics->second.find("graphsieve_inflight_requests 1") != std::string::npos;
  };
  bool held = false;
  for (int k = 0; k < 1200 && !(held = inflight()); ++k) absl::SleepFor(absl::Milliseconds(50));
  // ... and its deadline has passed; then release it (the drain releases held calls).
  while (std::chrono::system_clock::now() <= deadline + std::chrono::milliseconds(100)) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  server_->Shutdown();
  client.join();
  ASSERT_TRUE(held) << "the call never reached the handler";
  EXPECT_EQ(st.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << st.error_message();
  const std::string metrics = server_->metrics().Serialize();
  EXPECT_THAT(metrics, HasSubstr("graphsieve_request_errors_total{code=\"DEADLINE_EXCEEDED\"} 1"));
}

// A message larger than the server accepts (room for --max-batch-pairs pairs
// plus 1 MiB of framing) is refused by gRPC before the handler with
// RESOURCE_EXHAUSTED (README, "Errors"); the server stays up.
TEST_F(ServerTest, OversizeMessageIsResourceExhausted) {
  const std::string root = testing::NewTempDir("oversize");
  ASSERT_TRUE(testing::PublishSnapshot(root, SyntheticSnapshot::Make(1)).ok());
  ServerOptions o;
  o.max_batch_pairs = 10;  // limit: 10 * 32 bytes + 1 MiB
  StartServer(root, o);
  ASSERT_TRUE(server_->manager().PollOnce().ok());
  v1::GetSamplingRateRequest req;
  for (int k = 0; k < 100000; ++k) {  // 16 bytes a pair: ~1.6 MB
    req.add_user_ids(1 + k % 12);
    req.add_item_ids(1001 + k % 15);
  }
  ASSERT_GT(req.ByteSizeLong(), size_t{10 * 32 + (1 << 20)});
  v1::GetSamplingRateResponse resp;
  grpc::Status st = Call(req, &resp);
  EXPECT_EQ(st.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << st.error_message();
  // Within the limit but over --max-batch-pairs: the handler's INVALID_ARGUMENT.
  req.mutable_user_ids()->Truncate(11);
  req.mutable_item_ids()->Truncate(11);
  EXPECT_EQ(Call(req, &resp).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(ServerTest, HealthReadinessAndAdminPages) {
  const std::string root = testing::NewTempDir("health");
  StartServer(root);
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", server_->port()),
                                     grpc::InsecureChannelCredentials());
  EXPECT_EQ(testing::HealthCheck(channel, ""), "SERVING");
  EXPECT_EQ(testing::HealthCheck(channel, kServiceName), "NOT_SERVING");
  auto ready = testing::HttpGet(server_->admin_port(), "/readyz");
  ASSERT_TRUE(ready.ok());
  EXPECT_EQ(ready->first, 503);
  EXPECT_EQ(testing::HttpGet(server_->admin_port(), "/healthz")->first, 200);

  ASSERT_TRUE(testing::PublishSnapshot(root, SyntheticSnapshot::Make(1)).ok());
  ASSERT_TRUE(server_->manager().PollOnce().ok());
  EXPECT_EQ(testing::HealthCheck(channel, kServiceName), "SERVING");
  EXPECT_EQ(testing::HttpGet(server_->admin_port(), "/readyz")->first, 200);

  auto status = testing::HttpGet(server_->admin_port(), "/status.json");
  ASSERT_TRUE(status.ok());
  ASSERT_EQ(status->first, 200);
  nlohmann::json j = nlohmann::json::parse(status->second);
  EXPECT_TRUE(j["serving"].get<bool>());
  EXPECT_EQ(j["active"]["version"], server_->manager().Current()->version);
  EXPECT_EQ(j["default_policy"], "node-mean");
  EXPECT_EQ(j["active"]["rate_rule"], "mixture");  // from the manifest's parameters
  EXPECT_EQ(j["active"]["kappa"], 0.1);
  EXPECT_EQ(j["active"]["score_power"], 1.0);
  // The rule in force and its tune, from the manifest's "tune" object (the dashboard's row).
  EXPECT_EQ(j["active"]["tune"]["rule"], "graph,kappa=0.1,eta=0");
  EXPECT_EQ(j["active"]["tune"]["date"], "2026-11-28T21:25:14Z");
  EXPECT_FALSE(j["active"].contains("manifest_json"));
  EXPECT_TRUE(j["metrics"]["pairs"].contains("exact"));

  auto page = testing::HttpGet(server_->admin_port(), "/");
  ASSERT_TRUE(page.ok());
  EXPECT_EQ(page->first, 200);
  EXPECT_THAT(page->second, HasSubstr("status.json"));
  EXPECT_THAT(page->second, HasSubstr("rule in force"));
  EXPECT_THAT(page->second, ::testing::Not(HasSubstr("http://")));  // no external assets
  EXPECT_EQ(testing::HttpGet(server_->admin_port(), "/nope")->first, 404);
  // A page is named by the path as sent: an encoded NUL (or any escape) does
  // not decode into "/" or "/metrics".
  for (const char* odd : {"/%00", "/%00x", "/metrics%00", "/%2F", "/%6Detrics"}) {
    auto reply = testing::HttpGet(server_->admin_port(), odd);
    ASSERT_TRUE(reply.ok()) << odd << ": " << reply.status();
    EXPECT_EQ(reply->first, 404) << odd;
    EXPECT_EQ(reply->second.substr(0, 13), "no such page:") << odd;
  }

  auto metrics = testing::HttpGet(server_->admin_port(), "/metrics");
  for (const char* name :
       {"graphsieve_requests_total", "graphsieve_pairs_total", "graphsieve_helper_pairs_total",
        "graphsieve_request_latency_seconds",
        "graphsieve_snapshot_info{version=", "graphsieve_snapshot_age_seconds",
        "graphsieve_refresh_total{result=\"success\"} 1", "graphsieve_snapshot_load_seconds"}) {
    EXPECT_THAT(metrics->second, HasSubstr(name));
  }

  server_->Shutdown();
  EXPECT_TRUE(server_->draining());
  EXPECT_EQ(testing::HttpGet(server_->admin_port(), "/readyz")->first, 503);
}

TEST(ServerOptionsTest, ValidateNamesTheFlag) {
  ServerOptions o;
  EXPECT_THAT(std::string(o.Validate().message()), HasSubstr("--snapshot-root"));
  o.snapshot_root = "/x";
  EXPECT_TRUE(o.Validate().ok());
  o.port = 70000;
  EXPECT_THAT(std::string(o.Validate().message()), HasSubstr("--port"));
  o.port = 1;
  o.max_batch_pairs = 0;
  EXPECT_THAT(std::string(o.Validate().message()), HasSubstr("--max-batch-pairs"));
  o.max_batch_pairs = 5;
  o.lookup_helpers = -1;
  EXPECT_THAT(std::string(o.Validate().message()), HasSubstr("--lookup-helpers"));
  o.lookup_helpers = 0;
  EXPECT_TRUE(o.Validate().ok());
  o.tls_cert_path = "c.pem";
  EXPECT_THAT(std::string(o.Validate().message()), HasSubstr("--tls-key"));
  o.tls_cert_path.clear();
  o.tls_client_ca_path = "ca.pem";
  EXPECT_THAT(std::string(o.Validate().message()), HasSubstr("--tls-client-ca"));
}

}  // namespace
}  // namespace graphsieve
