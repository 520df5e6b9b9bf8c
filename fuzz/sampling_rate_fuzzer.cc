// fuzz_sampling_rate: the GetSamplingRate handler through the service layer —
// a real GraphsieveServer (server/server.h) on loopback serving a real
// synthetic snapshot (tests/server/test_snapshots.h), called over gRPC with
// requests built from the input: batch shapes (item, label and instance-key
// counts that match or not), known, unknown and extreme ids, labels, instance
// keys, oversize batches (the server runs with --max-batch-pairs 64), and raw
// bytes parsed as a request (unknown fields, packed/unpacked encodings).
//
// Contracts checked: a well-formed batch is answered OK with one rate in
// (0, 1] and one source per pair, the stored rate (source EXACT) for stored
// pairs, keep decisions and log-odds offsets (log rate) when labelled, positives
// kept; any other shape is INVALID_ARGUMENT with a message. (Bytes the
// server cannot deserialize are answered by gRPC itself: UNIMPLEMENTED.)
#include <fuzzer/FuzzedDataProvider.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>

#include "fuzz/fuzz_util.h"
#include "grpcpp/client_context.h"
#include "server/server.h"
#include "tests/server/test_snapshots.h"

namespace graphsieve {
namespace {

constexpr int kMaxBatchPairs = 64;

struct World {
  testing::SyntheticSnapshot snapshot = testing::SyntheticSnapshot::Make(1);
  std::unique_ptr<GraphsieveServer> server;
  std::unique_ptr<v1::SamplingRateService::Stub> stub;
};

World& TheWorld() {
  static World* w = [] {
    auto* world = new World;
    const std::string root = fuzz::ScratchDir() + "/root";
    fuzz::Check(testing::PublishSnapshot(root, world->snapshot).ok(), "publishing the snapshot");
    ServerOptions o = testing::LoopbackOptions(root);
    o.max_batch_pairs = kMaxBatchPairs;
    auto server = GraphsieveServer::Create(o);
    fuzz::Check(server.ok(), "starting the server");
    world->server = *std::move(server);
    fuzz::Check(world->server->manager().PollOnce().ok(), "loading the snapshot");
    world->stub = testing::Connect(world->server->port());
    return world;
  }();
  return *w;
}

uint64_t Id(FuzzedDataProvider& p, bool item) {
  switch (p.ConsumeIntegralInRange(0, 5)) {
    case 0:
      return 0;
    case 1:
      return std::numeric_limits<uint64_t>::max();
    case 2:
      return p.ConsumeIntegral<uint64_t>();
    default:
      return item ? 1001 + p.ConsumeIntegralInRange(0, 15) : 1 + p.ConsumeIntegralInRange(0, 12);
  }
}

// *unparsable: raw bytes that do not parse; the partial message (with their
// unknown fields) is sent anyway.
v1::GetSamplingRateRequest MakeRequest(FuzzedDataProvider& p, bool* unparsable) {
  v1::GetSamplingRateRequest req;
  *unparsable = false;
  if (p.ConsumeIntegralInRange(0, 15) == 0) {  // raw bytes as the request
    const std::string bytes = p.ConsumeRemainingBytesAsString();
    *unparsable = !req.ParseFromString(bytes);
    return req;
  }
  const bool oversize = p.ConsumeIntegralInRange(0, 31) == 0;
  const int n = oversize ? kMaxBatchPairs + 1 + p.ConsumeIntegralInRange(0, 3)
                         : p.ConsumeIntegralInRange(0, 40);
  auto skew = [&](int count) {  // usually the right count, sometimes one off
    const int d = p.ConsumeIntegralInRange(0, 9);
    return d == 0 ? count + 1 : (d == 1 && count > 0 ? count - 1 : count);
  };
  const int items = skew(n);
  const bool labelled = p.ConsumeBool();
  const int labels = labelled ? skew(n) : (p.ConsumeIntegralInRange(0, 19) == 0 ? 1 : 0);
  const int keys = skew(labels);
  for (int k = 0; k < n; ++k) req.add_user_ids(Id(p, false));
  for (int k = 0; k < items; ++k) req.add_item_ids(Id(p, true));
  for (int k = 0; k < labels; ++k) req.add_labels(p.ConsumeBool());
  for (int k = 0; k < keys; ++k) req.add_instance_keys(p.ConsumeIntegral<uint64_t>());
  return req;
}

bool WellFormed(const v1::GetSamplingRateRequest& r) {
  const int n = r.user_ids_size();
  return n >= 1 && n <= kMaxBatchPairs && r.item_ids_size() == n &&
         (r.labels_size() == 0 || r.labels_size() == n) &&
         r.instance_keys_size() == r.labels_size();
}

void CheckResponse(const World& w, const v1::GetSamplingRateRequest& req,
                   const v1::GetSamplingRateResponse& resp) {
  const int n = req.user_ids_size();
  fuzz::Check(resp.rates_size() == n && resp.sources_size() == n, "one rate and source per pair");
  fuzz::Check(!resp.snapshot_version().empty(), "no snapshot version");
  for (int k = 0; k < n; ++k) {
    const float rate = resp.rates(k);
    fuzz::Check(std::isfinite(rate) && rate > 0 && rate <= 1, "a rate outside (0, 1]");
    const int source = resp.sources(k);
    fuzz::Check(source >= v1::RATE_SOURCE_EXACT && source <= v1::RATE_SOURCE_DEFAULT,
                "an unknown rate source");
    const float stored = w.snapshot.StoredRate(req.user_ids(k), req.item_ids(k));
    if (stored >= 0) {
      fuzz::Check(source == v1::RATE_SOURCE_EXACT && rate == stored,
                  "a stored pair not answered with its stored rate");
    }
  }
  const bool labelled = req.labels_size() > 0;
  fuzz::Check(
      resp.keep_size() == (labelled ? n : 0) && resp.log_odds_offsets_size() == (labelled ? n : 0),
      "keep decisions only, and all, for labelled batches");
  for (int k = 0; k < resp.keep_size(); ++k) {
    if (req.labels(k)) fuzz::Check(resp.keep(k), "a positive was not kept");
    fuzz::Check(std::fabs(resp.log_odds_offsets(k) - std::log(resp.rates(k))) < 1e-5f,
                "log-odds offset is not log(rate)");
  }
}

}  // namespace
}  // namespace graphsieve

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphsieve;
  World& w = TheWorld();
  FuzzedDataProvider p(data, size);
  bool unparsable = false;
  const v1::GetSamplingRateRequest req = MakeRequest(p, &unparsable);
  v1::GetSamplingRateResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(30));
  const grpc::Status st = w.stub->GetSamplingRate(&ctx, req, &resp);
  const std::string shape = "users " + std::to_string(req.user_ids_size()) + ", items " +
                            std::to_string(req.item_ids_size()) + ", labels " +
                            std::to_string(req.labels_size()) + ", keys " +
                            std::to_string(req.instance_keys_size()) + ": code " +
                            std::to_string(st.error_code()) + " '" + st.error_message() + "'";
  if (unparsable) {
    // The server may not be able to parse it either; gRPC 1.51 then answers
    // UNIMPLEMENTED with no message before any handler runs.
    if (!st.ok()) return 0;
  }
  if (WellFormed(req)) {
    fuzz::Check(st.ok(), ("a well-formed batch failed: " + shape).c_str());
    CheckResponse(w, req, resp);
  } else {
    fuzz::Check(
        st.error_code() == grpc::StatusCode::INVALID_ARGUMENT && !st.error_message().empty(),
        ("a malformed batch was not INVALID_ARGUMENT: " + shape).c_str());
  }
  return 0;
}
