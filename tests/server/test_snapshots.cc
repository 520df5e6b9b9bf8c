#include "tests/server/test_snapshots.h"

#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "civetweb.h"
#include "core/snapshot/snapshot_store.h"
#include "core/snapshot/snapshot_writer.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/byte_buffer.h"

namespace graphsieve::testing {

SyntheticSnapshot SyntheticSnapshot::Make(int generation, int num_users, int num_items) {
  SyntheticSnapshot s;
  s.generation = generation;
  s.num_users = num_users;
  s.num_items = num_items;
  s.seed = 7 + static_cast<uint64_t>(generation);
  PairTable& p = s.pairs;
  for (int u = 1; u <= num_users; ++u) p.user_ids.push_back(static_cast<uint64_t>(u));
  for (int i = 1; i <= num_items; ++i) p.item_ids.push_back(1000 + static_cast<uint64_t>(i));
  for (int u = 0; u < num_users; ++u) {
    for (int i = 0; i < num_items; ++i) {
      const uint64_t uid = p.user_ids[u], iid = p.item_ids[i];
      if ((uid + iid) % 3 != 0) continue;
      p.pair_user.push_back(static_cast<uint32_t>(u));
      p.pair_item.push_back(static_cast<uint32_t>(i));
      const bool positive = (uid * 7 + iid) % 5 == 0;
      p.label.push_back(positive ? 1 : 0);
      p.instances.push_back(2);
      p.negatives.push_back(positive ? 1 : 2);
      p.total_instances += 2;
      p.total_negatives += positive ? 1 : 2;
      const float rate = 0.05f + 0.001f * static_cast<float>(generation) +
                         0.01f * static_cast<float>((uid * 31 + iid) % 50);
      s.result.rate.push_back(rate);
      s.result.geff.push_back(0.5f);
      s.result.hardness.push_back(0.5f);
      s.result.score.push_back(rate);
      s.stored_[{uid, iid}] = rate;
      if (positive) ++s.result.positive_pairs;
    }
  }
  NodeTable& t = s.result.nodes;
  t.sketch_dim = s.sketch_dim;
  const int nodes = num_users + num_items;
  for (int n = 0; n < nodes; ++n) {
    const bool is_item = n >= num_users;
    t.ids.push_back(is_item ? p.item_ids[n - num_users] : p.user_ids[n]);
    t.is_item.push_back(is_item ? 1 : 0);
    NodeRecord r;
    r.component = (n % 4 == 3) ? 1 : 0;  // a few nodes in a second component
    r.degree = 3 + static_cast<uint32_t>(n % 4);
    r.sum_uncertainty = 0.2f * static_cast<float>(r.degree);
    r.sum_score = 0.1f * static_cast<float>(r.degree);
    r.mean_rate = 0.1f + 0.01f * static_cast<float>(n % 7) + 0.001f * generation;
    t.records.push_back(r);
    for (int d = 0; d < s.sketch_dim; ++d) {
      t.sketch.push_back(0.3f * std::sin(0.7f * static_cast<float>(n * (d + 1) + generation)));
    }
  }
  UnseenModel& m = s.result.model;
  m.alpha = 0.2;
  m.floor = 0.01;
  m.rho = 0.8;
  m.gamma = 0.5;
  m.geff_min = 0.0;
  m.geff_max = 4.0;
  m.sketch_dim = s.sketch_dim;
  s.result.achieved_negative_mean_rate = 0.2;
  s.result.num_components = 2;
  return s;
}

float SyntheticSnapshot::StoredRate(uint64_t user, uint64_t item) const {
  auto it = stored_.find({user, item});
  return it == stored_.end() ? -1.0f : it->second;
}

int SyntheticSnapshot::UserNode(uint64_t user) const {
  return user >= 1 && user <= static_cast<uint64_t>(num_users) ? static_cast<int>(user - 1) : -1;
}

int SyntheticSnapshot::ItemNode(uint64_t item) const {
  return item >= 1001 && item <= 1000 + static_cast<uint64_t>(num_items)
             ? num_users + static_cast<int>(item - 1001)
             : -1;
}

absl::StatusOr<std::string> PublishSnapshot(const std::string& root, const SyntheticSnapshot& s,
                                            bool corrupt, bool publish) {
  SnapshotStoreOptions so;
  so.root = root;
  so.create_if_missing = true;
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store = SnapshotStore::Create(so);
  if (!store.ok()) return store.status();
  absl::StatusOr<std::unique_ptr<PublishLock>> lock = (*store)->AcquirePublishLock(10);
  if (!lock.ok()) return lock.status();
  const absl::Time now = absl::Now();
  const std::string version = (*store)->NewVersionId(**lock, now, 0x1000u + s.generation);
  snapshot::ManifestInfo info;
  info.version = version;
  info.created_at = absl::FormatTime("%Y-%m-%dT%H:%M:%SZ", now, absl::UTCTimeZone());
  info.input_digest = absl::StrCat("synthetic-", s.generation);
  info.parameters = {{"method", "maec"},  {"resistance", "sketch"}, {"alpha", 0.2},
                     {"floor", 0.01},     {"gamma", 0.5},           {"sketch_dim", s.sketch_dim},
                     {"seed", s.seed},    {"rate_rule", "mixture"}, {"kappa", 0.1},
                     {"score_power", 1.0}};
  // As graphsieve-build records graphsieve-eval tune's flag file (--tune_rule, ...).
  info.tune = {{"rule", "graph,kappa=0.1,eta=0"},
               {"date", "2026-11-28T21:25:14Z"},
               {"report_digest", "xxh3:0123456789abcdef"}};
  SnapshotWriterOptions wo;
  wo.pairs_format = snapshot::TableFormat::kBlockBased;
  wo.threads = 1;
  const std::string dir = (*store)->TempDir(version);
  absl::StatusOr<SnapshotWriteStats> stats = WriteSnapshotDir(dir, s.pairs, s.result, info, wo);
  if (!stats.ok()) return stats.status();
  if (corrupt) {
    // Flip bytes in the middle of the largest table file.
    std::string victim;
    uintmax_t biggest = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir + "/db")) {
      if (e.path().extension() == ".sst" && e.file_size() > biggest) {
        biggest = e.file_size();
        victim = e.path().string();
      }
    }
    if (victim.empty()) return absl::InternalError("no .sst file to corrupt");
    std::fstream f(victim, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(biggest / 2));
    const char junk[16] = {'\x13', '\x37', '\x42', '\x00', '\x7f', '\x55', '\xaa', '\x01',
                           '\x02', '\x03', '\x04', '\x05', '\x06', '\x07', '\x08', '\x09'};
    f.write(junk, sizeof(junk));
  }
  if (!publish) {
    std::filesystem::rename(dir, (*store)->VersionDir(version));
    return version;
  }
  absl::Status st = (*store)->Publish(**lock, version);
  if (!st.ok()) return st;
  return version;
}

absl::Status SetCurrent(const std::string& root, const std::string& version) {
  SnapshotStoreOptions so;
  so.root = root;
  absl::StatusOr<std::unique_ptr<SnapshotStore>> store = SnapshotStore::Create(so);
  if (!store.ok()) return store.status();
  absl::StatusOr<std::unique_ptr<PublishLock>> lock = (*store)->AcquirePublishLock(10);
  if (!lock.ok()) return lock.status();
  return (*store)->SetCurrent(**lock, version);
}

absl::StatusOr<std::pair<int, std::string>> HttpGet(int port, const std::string& path) {
  static const int civetweb_ready = mg_init_library(0);  // civetweb's client, once
  (void)civetweb_ready;
  char error[256] = "";
  mg_connection* conn = mg_connect_client("127.0.0.1", port, /*use_ssl=*/0, error, sizeof(error));
  if (conn == nullptr) {
    return absl::UnavailableError(absl::StrCat("connect to admin port ", port, ": ", error));
  }
  mg_printf(conn, "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n", path.c_str());
  if (mg_get_response(conn, error, sizeof(error), /*timeout ms=*/5000) < 0) {
    mg_close_connection(conn);
    return absl::DataLossError(absl::StrCat("GET ", path, " on port ", port, ": ", error));
  }
  const int code = mg_get_response_info(conn)->status_code;
  std::string body;
  char buf[8192];
  for (int n; (n = mg_read(conn, buf, sizeof(buf))) > 0;) body.append(buf, static_cast<size_t>(n));
  mg_close_connection(conn);
  return std::make_pair(code, std::move(body));
}

std::string HealthCheck(const std::shared_ptr<grpc::Channel>& channel, const std::string& service) {
  grpc::GenericStub stub(channel);
  std::string request;
  request.push_back(0x0a);  // field 1 (service), length-delimited
  request.push_back(static_cast<char>(service.size()));
  request += service;
  grpc::Slice slice(request);
  grpc::ByteBuffer req(&slice, 1), resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  grpc::Status status;
  stub.UnaryCall(&ctx, "/grpc.health.v1.Health/Check", grpc::StubOptions(), &req, &resp,
                 [&](grpc::Status s) {
                   std::lock_guard<std::mutex> l(mu);
                   status = s;
                   done = true;
                   cv.notify_one();
                 });
  std::unique_lock<std::mutex> l(mu);
  cv.wait(l, [&] { return done; });
  if (!status.ok())
    return absl::StrCat("error ", status.error_code(), ": ", status.error_message());
  std::vector<grpc::Slice> slices;
  if (!resp.Dump(&slices).ok()) return "unparsable";
  std::string bytes;
  for (const grpc::Slice& s : slices)
    bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
  // HealthCheckResponse{status = 1 (varint)}; an absent field means UNKNOWN (0).
  const int code = bytes.size() >= 2 && bytes[0] == 0x08 ? bytes[1] : 0;
  switch (code) {
    case 1:
      return "SERVING";
    case 2:
      return "NOT_SERVING";
    case 3:
      return "SERVICE_UNKNOWN";
    default:
      return "UNKNOWN";
  }
}

std::unique_ptr<v1::SamplingRateService::Stub> Connect(int port) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  return v1::SamplingRateService::NewStub(grpc::CreateCustomChannel(
      absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials(), args));
}

}  // namespace graphsieve::testing
