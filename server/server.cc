#include "server/server.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/snapshot/memory_index.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "nlohmann/json.hpp"
#include "server/connection_hold.h"
#include "server/log.h"
#include "server/tsan_sync.h"

namespace graphsieve {
namespace {

absl::StatusOr<std::string> ReadPem(const std::string& path, const char* flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(flag, ": cannot read '", path, "'"));
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  if (!absl::StrContains(text, "-----BEGIN ")) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": '", path, "' is not a PEM file (no -----BEGIN line)"));
  }
  return text;
}

// gRPC only fails the whole listener on a bad key (BuildAndStart returns
// nothing, no reason): the key and the certificate are read and matched here,
// so the error names the flags and files.
absl::Status CheckKeyMatchesCert(const std::string& key_pem, const std::string& cert_pem,
                                 const ServerOptions& options) {
  std::unique_ptr<BIO, decltype(&BIO_free)> cert_bio(
      BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size())), &BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> cert(
      PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr), &X509_free);
  if (cert == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat("--tls-cert: '", options.tls_cert_path,
                                                   "' holds no PEM certificate that can be read"));
  }
  std::unique_ptr<BIO, decltype(&BIO_free)> key_bio(
      BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size())), &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr), &EVP_PKEY_free);
  if (key == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls-key: '", options.tls_key_path,
                     "' holds no unencrypted PEM private key that can be read"));
  }
  const bool match = X509_check_private_key(cert.get(), key.get()) == 1;
  ERR_clear_error();  // the failed reads and checks leave OpenSSL's queue for nothing else
  if (!match) {
    return absl::InvalidArgumentError(absl::StrCat("--tls-key: '", options.tls_key_path,
                                                   "' is not the private key of --tls-cert '",
                                                   options.tls_cert_path, "'"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeCredentials(
    const ServerOptions& options) {
  if (options.tls_cert_path.empty()) return grpc::InsecureServerCredentials();
  absl::StatusOr<std::string> cert = ReadPem(options.tls_cert_path, "--tls-cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadPem(options.tls_key_path, "--tls-key");
  if (!key.ok()) return key.status();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  if (!options.tls_client_ca_path.empty()) {
    absl::StatusOr<std::string> ca = ReadPem(options.tls_client_ca_path, "--tls-client-ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *ca;
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  if (absl::Status st = CheckKeyMatchesCert(*key, *cert, options); !st.ok()) return st;
  ssl.pem_key_cert_pairs.push_back({*key, *cert});
  return grpc::SslServerCredentials(ssl);
}

// This process's name on the store holds of its held version
// (SnapshotStore::Hold): host, pid and partition, so replicas and parts
// sharing a root hold independently.
std::string HolderName(int partition) {
  char host[256] = {0};
  if (::gethostname(host, sizeof(host) - 1) != 0) host[0] = '\0';
  std::string name = absl::StrCat(host[0] ? host : "host", "-", ::getpid(),
                                  partition >= 0 ? absl::StrCat("-p", partition) : "");
  for (char& c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '_' || c == '-';
    if (!ok) c = '_';
  }
  return name.substr(0, 128);
}

// The rate rule's parameters from a manifest (docs/SNAPSHOT.md "On-disk layout"):
// rate_rule, kappa, score_power, exposure_power, score_propagation when the builder wrote
// them (older versions lack some; then they are absent here too).
nlohmann::json RateRuleJson(const std::string& manifest_json) {
  nlohmann::json out = nlohmann::json::object();
  const nlohmann::json m =
      nlohmann::json::parse(manifest_json, nullptr, /*allow_exceptions=*/false);
  if (m.is_discarded() || !m.is_object() || !m.contains("parameters")) return out;
  const nlohmann::json& p = m["parameters"];
  if (!p.is_object()) return out;
  for (const char* key :
       {"rate_rule", "kappa", "score_power", "exposure_power", "score_propagation"}) {
    if (p.contains(key)) out[key] = p[key];
  }
  // Where the rule came from: graphsieve-eval tune's flag file (absent = flags given by hand).
  if (m.contains("tune") && m["tune"].is_object()) out["tune"] = m["tune"];
  return out;
}

// A unix socket that a live process still accepts on (gRPC would unlink it
// and bind a new one, leaving that server unreachable): refused. A socket
// file nobody accepts on (a server that died) is left for gRPC to replace.
// A unix socket address that another process accepts on is refused; a socket
// file nobody accepts on (left by a server that was killed: SIGKILL skips the
// unlink of a clean exit) is removed, logged, and bound afresh.
absl::Status PrepareUnixSocket(const std::string& address) {
  if (!absl::StartsWith(address, "unix:")) return absl::OkStatus();
  const std::string path = address.substr(5);
  sockaddr_un sa = {};
  if (path.size() >= sizeof(sa.sun_path)) return absl::OkStatus();  // gRPC reports it
  sa.sun_family = AF_UNIX;
  std::memcpy(sa.sun_path, path.c_str(), path.size() + 1);
  const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return absl::OkStatus();
  const bool live = ::connect(fd, reinterpret_cast<const sockaddr*>(&sa), sizeof(sa)) == 0;
  const int connect_errno = errno;
  ::close(fd);
  if (!live) {
    struct stat st;
    if (connect_errno == ECONNREFUSED && ::lstat(path.c_str(), &st) == 0 && S_ISSOCK(st.st_mode)) {
      if (::unlink(path.c_str()) == 0) {
        ServerLog(absl::StrCat("removed the stale operator socket ", path,
                               " (no process accepts on it: left by a server that was killed)"));
      }
    }
    return absl::OkStatus();
  }
  return absl::UnavailableError(
      absl::StrCat("--operator-address: another process is listening on ", address,
                   " (another graphsieve-server?); give this one its own --operator-address"));
}

}  // namespace

absl::StatusOr<std::unique_ptr<GraphsieveServer>> GraphsieveServer::Create(
    const ServerOptions& options, SnapshotLoader loader) {
  return CreateWithGate(options, std::move(loader), CallGate());
}

absl::StatusOr<std::unique_ptr<GraphsieveServer>> GraphsieveServer::CreateWithGate(
    const ServerOptions& options, SnapshotLoader loader, CallGate gate) {
  absl::Status valid = options.Validate();
  if (!valid.ok()) return valid;
  std::unique_ptr<GraphsieveServer> server(new GraphsieveServer(options));
  absl::Status st = server->Start(std::move(loader), std::move(gate));
  if (!st.ok()) return st;
  return server;
}

absl::Status GraphsieveServer::Start(SnapshotLoader loader, CallGate gate) {
  metrics_ = std::make_unique<ServerMetrics>();
  traffic_ = std::make_unique<TrafficWindow>([this] { return metrics_->Sample(); },
                                             /*period_seconds=*/1.0, /*history_seconds=*/300.0);
  VersionProfilerOptions po;
  po.on_done = [this](const RateProfile& profile, const VersionComparison* change) {
    if (change != nullptr) {
      metrics_->SetVersionChange(change->ks_distance, change->mean_delta, change->fraction_moved);
    }
  };
  profiler_ = std::make_unique<VersionProfiler>(std::move(po));
  SnapshotManagerOptions mo;
  mo.root = options_.snapshot_root;
  mo.poll_interval_seconds = options_.poll_interval_seconds;
  mo.watch_current = options_.watch_current;
  mo.on_watch_event = [this] { metrics_->ObserveWatchEvent(); };
  mo.hold_previous_seconds = options_.previous_version_hold_seconds;
  mo.holder = HolderName(options_.partition);
  mo.pin_version = options_.pin_version;
  mo.reject_versions = options_.reject_versions;
  mo.history_size = options_.history_size;
  mo.reader.block_cache_bytes = options_.block_cache_bytes;
  mo.reader.verify_checksums = options_.verify_checksums;
  mo.reader.warm = options_.warm;
  mo.reader.lookup = options_.lookup;
  mo.reader.partition = options_.partition;
  mo.reader.use_index_file = options_.use_index_file;
  mo.reader.index_huge_pages = options_.index_huge_pages;
  mo.loader = std::move(loader);
  mo.on_event = [this](const RefreshEventRecord& e,
                       const std::shared_ptr<const ServingSnapshot>& now) { OnRefresh(e, now); };
  absl::StatusOr<std::unique_ptr<SnapshotManager>> manager = SnapshotManager::Create(mo);
  if (!manager.ok()) return manager.status();
  manager_ = *std::move(manager);
  service_ = std::make_unique<SamplingRateServiceImpl>(options_, manager_.get(), metrics_.get(),
                                                       std::move(gate));
  data_service_ = std::make_unique<DataPortService>(service_.get(), metrics_.get());
  operator_service_ = std::make_unique<OperatorPortService>(service_.get());

  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> creds = MakeCredentials(options_);
  if (!creds.ok()) return creds.status();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  const std::string address = absl::StrCat(options_.host, ":", options_.port);
  builder.AddListeningPort(address, *creds, &port_);
  // gRPC sets SO_REUSEPORT by default: a second server on a port in use would
  // bind it too and take part of the traffic. Off, that start fails.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  // Room for max_batch_pairs pairs with every column (25 bytes) plus framing.
  const int64_t max_bytes = int64_t{options_.max_batch_pairs} * 32 + (int64_t{1} << 20);
  builder.SetMaxReceiveMessageSize(static_cast<int>(std::min<int64_t>(max_bytes, INT32_MAX)));
  builder.RegisterService(data_service_.get());  // PinVersion refused there
  // Only the reflection and health services are synchronous; one completion
  // queue and one poller for them. Every extra poller thread joins epoll1's
  // leader/follower hand-off and costs futex wake-ups on each call.
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 1);
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    return absl::UnavailableError(
        absl::StrCat("--port: cannot listen on ", address,
                     options_.tls_cert_path.empty()
                         ? " (in use or not permitted)"
                         : " (in use, not permitted, or gRPC rejected --tls-cert/--tls-key)"));
  }
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  health->SetServingStatus("", true);
  health->SetServingStatus(kServiceName, false);

  if (absl::Status st = StartOperatorListener(); !st.ok()) {
    server_->Shutdown();
    return st;
  }
  if (absl::Status st = StartAdmin(); !st.ok()) {
    server_->Shutdown();
    if (operator_server_ != nullptr) operator_server_->Shutdown();
    return st;
  }
  ServerLog(absl::StrCat(
      "listening on ", options_.host, ":", port_, options_.tls_cert_path.empty() ? "" : " (TLS)",
      "; operator listener (PinVersion) ", operator_address_.empty() ? "off" : operator_address_,
      "; admin HTTP ",
      admin_ ? absl::StrCat("http://", options_.admin_host, ":", admin_->port()) : "off",
      "; snapshots in ", options_.snapshot_root));
  manager_->Start();
  return absl::OkStatus();
}

absl::Status GraphsieveServer::StartOperatorListener() {
  operator_address_ = OperatorAddress(options_.operator_address, port_);
  data_service_->SetOperatorAddress(operator_address_);
  if (operator_address_.empty()) return absl::OkStatus();
  // Plaintext on purpose: only the machine's (pod's) own users reach a unix
  // socket (mode from the umask) or a loopback port.
  if (absl::Status st = PrepareUnixSocket(operator_address_); !st.ok()) return st;
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort(operator_address_, grpc::InsecureServerCredentials(), &port);
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  builder.RegisterService(operator_service_.get());
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::NUM_CQS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MIN_POLLERS, 1);
  builder.SetSyncServerOption(grpc::ServerBuilder::SyncServerOption::MAX_POLLERS, 1);
  operator_server_ = builder.BuildAndStart();
  if (operator_server_ == nullptr || port == 0) {
    return absl::UnavailableError(
        absl::StrCat("--operator-address: cannot listen on ", operator_address_,
                     " (in use, not permitted, or the socket's directory does not exist)"));
  }
  if (!absl::StartsWith(operator_address_, "unix:")) {
    operator_address_ =
        absl::StrCat(operator_address_.substr(0, operator_address_.rfind(':')), ":", port);
    data_service_->SetOperatorAddress(operator_address_);
  }
  return absl::OkStatus();
}

absl::Status GraphsieveServer::StartAdmin() {
  if (options_.admin_port < 0) return absl::OkStatus();
  AdminHttpOptions ao;
  ao.host = options_.admin_host;
  ao.port = options_.admin_port;
  ao.threads = options_.admin_threads;
  ao.metrics = [this] {
    std::shared_ptr<const ServingSnapshot> snap = manager_->Current();
    if (snap != nullptr && snap->created_at != absl::InfinitePast()) {
      metrics_->SetSnapshotAge(absl::ToDoubleSeconds(absl::Now() - snap->created_at));
    }
    if (snap != nullptr) ObserveFreshness(*snap);
    return metrics_->Serialize();
  };
  ao.live = [] { return true; };
  ao.ready = [this] { return ready(); };
  ao.status_json = [this] { return StatusJson(); };
  absl::StatusOr<std::unique_ptr<AdminHttpServer>> admin = AdminHttpServer::Create(ao);
  if (!admin.ok()) return admin.status();
  admin_ = *std::move(admin);
  return absl::OkStatus();
}

GraphsieveServer::~GraphsieveServer() {
  Shutdown();
  admin_.reset();
  // Their threads call metrics_; stop them before members are destroyed.
  profiler_.reset();
  traffic_.reset();
}

int GraphsieveServer::admin_port() const { return admin_ ? admin_->port() : -1; }

bool GraphsieveServer::ready() const { return !draining_.load() && manager_->Current() != nullptr; }

void GraphsieveServer::ObserveFreshness(const ServingSnapshot& snap) {
  const absl::Time newest = NewestCovered(snap);
  const double lag =
      newest == absl::InfinitePast() ? 0.0 : absl::ToDoubleSeconds(absl::Now() - newest);
  metrics_->SetFreshness(lag, snap.reader->manifest().base_version.empty() ? 1 : 2);
}

void GraphsieveServer::OnRefresh(const RefreshEventRecord& event,
                                 const std::shared_ptr<const ServingSnapshot>& serving) {
  metrics_->ObserveRefresh(event.ok, event.load_seconds, serving ? serving->version : "");
  if (serving != nullptr && serving->created_at != absl::InfinitePast()) {
    metrics_->SetSnapshotAge(absl::ToDoubleSeconds(absl::Now() - serving->created_at));
  }
  if (serving != nullptr) ObserveFreshness(*serving);
  const MemoryIndex* index = serving ? ServingIndex(*serving->reader) : nullptr;
  metrics_->SetIndexBytes(index ? static_cast<double>(index->memory_bytes()) : 0.0);
  if (serving != nullptr) {
    metrics_->SetExpectedKeptFraction(serving->reader->manifest().achieved_negative_mean_rate);
  }
  profiler_->OnServing(serving);
  if (serving != nullptr) {  // once per loaded version: say when the DEFAULT policy falls back
    bool first = false;
    {
      absl::MutexLock lock(&fallback_mu_);
      first = serving->loaded_at != fallback_checked_load_;
      fallback_checked_load_ = serving->loaded_at;
    }
    const std::string note =
        first ? DefaultPolicyFallbackNote(options_.default_policy, serving->reader->model()) : "";
    if (!note.empty()) ServerLog(absl::StrCat("version ", serving->version, ": ", note));
  }
  if (server_ != nullptr && !draining_.load()) {
    server_->GetHealthCheckService()->SetServingStatus(kServiceName, serving != nullptr);
  }
}

void GraphsieveServer::Shutdown() {
  absl::MutexLock lock(&shutdown_mu_);
  if (shut_down_) return;
  shut_down_ = true;
  draining_.store(true);
  if (server_ != nullptr) {
    ServerLog(absl::StrCat("draining: readiness off, in-flight calls get ",
                           options_.drain_grace_seconds, " s"));
    server_->GetHealthCheckService()->SetServingStatus(kServiceName, false);
    if (options_.drain_notice_seconds > 0) {
      absl::SleepFor(absl::Seconds(options_.drain_notice_seconds));  // still serving, not ready
    }
    if (service_ != nullptr) service_->DrainStarted();  // calls a CallGate holds go on now
    const auto deadline =
        std::chrono::system_clock::now() +
        std::chrono::microseconds(static_cast<int64_t>(options_.drain_grace_seconds * 1e6));
    // gRPC closes each connection once its last call has finished; the hold
    // keeps the socket until the client has the whole response
    // (server/connection_hold.h). A connection accepted between here and
    // gRPC's shutdown of the listener is not held.
    ConnectionHold held = ConnectionHold::Take({port_});
    if (operator_server_ != nullptr) operator_server_->Shutdown(deadline);
    server_->Shutdown(deadline);
    server_->Wait();
    if (operator_server_ != nullptr) operator_server_->Wait();
    if (service_ != nullptr) TsanAcquire(service_.get());  // every handler has returned
    // gRPC's shutdown returns before the deadline once every connection has
    // closed; it reaches the deadline when a call was still running (it is
    // cancelled then) or a client did not answer the GOAWAY (an idle channel
    // that nothing polls): those connections are closed only now, so the
    // hold below finds their FIN still unacknowledged, which is no lost byte.
    const bool at_deadline = std::chrono::system_clock::now() >= deadline;
    const int held_count = held.held();
    const int unacknowledged = held.Release(absl::FromChrono(deadline));
    if (at_deadline) {
      ServerLog(absl::StrCat(
          "drained at the deadline (--drain-grace-seconds=", options_.drain_grace_seconds,
          "): gRPC's shutdown waited that long for calls still running "
          "(cancelled now) or for clients that had not answered its GOAWAY "
          "(idle channels; closed now)"));
    } else if (unacknowledged > 0) {
      ServerLog(absl::StrCat("drained: ", unacknowledged, " of ", held_count,
                             " connections still had unacknowledged response bytes at the "
                             "drain deadline"));
    }
  }
  if (manager_ != nullptr) manager_->Stop();
  ServerLog("stopped");
}

std::string GraphsieveServer::StatusJson() const {
  v1::GetStatusResponse status;
  FillStatus(manager_->State(), &status);
  const std::string manifest_json = status.active().manifest_json();
  status.mutable_active()->clear_manifest_json();  // large; GetStatus carries it
  std::string text;
  google::protobuf::util::JsonPrintOptions jo;
  jo.preserve_proto_field_names = true;
  jo.always_print_primitive_fields = true;
  if (!google::protobuf::util::MessageToJsonString(status, &text, jo).ok()) text = "{}";
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) j = nlohmann::json::object();
  if (!status.serving()) j.erase("active");
  if (status.serving()) {
    j["active"].erase("manifest_json");  // printed as "" after the clear above
    j["active"].update(RateRuleJson(manifest_json));
  }
  j["draining"] = draining_.load();
  j["default_policy"] = options_.default_policy.ToString();
  j["poll_interval_seconds"] = options_.poll_interval_seconds;
  j["watch_current"] = options_.watch_current;
  j["watching_current"] = manager_->watching_current();
  j["max_batch_pairs"] = options_.max_batch_pairs;
  j["metrics"] = metrics_->ToJson();
  j["operator_address"] = operator_address_;
  j["traffic"] = traffic_->Summarise(/*window_seconds=*/60.0);
  j.update(profiler_->ToJson());  // rate_profile, rate_profile_state, comparison, comparison_limits
  j["negatives_served"] = metrics_->NegativesServedJson();
  return j.dump();
}

}  // namespace graphsieve
