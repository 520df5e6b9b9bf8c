// The real graphsieve-server binary drains on SIGTERM with calls in flight;
// TLS and mTLS with self-signed certificates made by openssl in the test.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "server/server.h"
#include "tests/missing_dependency.h"
#include "tests/server/server_test_access.h"
#include "tests/server/test_snapshots.h"
#include "tests/temp_dir.h"

extern char** environ;

namespace graphsieve {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

#ifdef GRAPHSIEVE_SERVER_BINARY
// Starts the binary with stdout on a pipe; returns pid and the gRPC port.
// A child not reaped when the test returns (a failed ASSERT) is killed and
// reaped then, so no server outlives its test or its snapshot directory.
struct Child {
  pid_t pid = -1;
  int port = 0;
  int admin_port = 0;

  Child() = default;
  Child(Child&& o) noexcept
      : pid(std::exchange(o.pid, -1)), port(o.port), admin_port(o.admin_port) {}
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  ~Child() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
  }
};

// `stderr_path`: the child's standard error goes to that file (else ours).
Child Spawn(const std::vector<std::string>& args, const std::string& stderr_path = "") {
  int out[2];
  EXPECT_EQ(pipe(out), 0);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  posix_spawn_file_actions_addclose(&actions, out[0]);
  if (!stderr_path.empty()) {
    posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                     0644);
  }
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  Child child;
  const int spawned =
      posix_spawn(&child.pid, args[0].c_str(), &actions, nullptr, argv.data(), environ);
  EXPECT_EQ(spawned, 0);
  if (spawned != 0) child.pid = -1;  // *pid is unspecified when posix_spawn fails
  posix_spawn_file_actions_destroy(&actions);
  close(out[1]);
  // First stdout line: "graphsieve-server listening port=P admin_port=Q" (bounded read).
  std::string line;
  char c;
  while (line.size() < 512 && read(out[0], &c, 1) == 1 && c != '\n') line.push_back(c);
  close(out[0]);
  for (absl::string_view part : absl::StrSplit(line, ' ')) {
    if (absl::ConsumePrefix(&part, "port=")) {
      EXPECT_TRUE(absl::SimpleAtoi(part, &child.port));
    }
    if (absl::ConsumePrefix(&part, "admin_port=")) {
      EXPECT_TRUE(absl::SimpleAtoi(part, &child.admin_port));
    }
  }
  EXPECT_GT(child.port, 0) << "first line: " << line;
  return child;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Waits up to `seconds` for the child; returns its exit status or -1.
int WaitExit(pid_t pid, double seconds) {
  const absl::Time until = absl::Now() + absl::Seconds(seconds);
  while (absl::Now() < until) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : -2;
    absl::SleepFor(absl::Milliseconds(20));
  }
  kill(pid, SIGKILL);
  waitpid(pid, nullptr, 0);
  return -1;
}

// The server's in-flight gauge (graphsieve_inflight_requests) from /metrics, or -1.
int Inflight(int admin_port) {
  auto metrics = testing::HttpGet(admin_port, "/metrics");
  if (!metrics.ok() || metrics->first != 200) return -1;
  for (absl::string_view line : absl::StrSplit(metrics->second, '\n')) {
    if (absl::ConsumePrefix(&line, "graphsieve_inflight_requests ")) {
      double v = 0;
      return absl::SimpleAtod(line, &v) ? static_cast<int>(v) : -1;
    }
  }
  return -1;
}

// Deterministic: graphsieve-server-testing (the shipped main with the seam of
// server_test_access.h) keeps a tagged call in its handler until SIGTERM
// starts the drain. The test sends SIGTERM only once the server's in-flight
// gauge shows it in the handler — no timer decides whether a call
// was in flight when the signal arrived (docs/RELIABILITY.md, "No flaky tests").
TEST(DrainTest, SigtermLetsInFlightCallsFinishAndExitsZero) {
  const std::string root = testing::NewTempDir("drain");
  ASSERT_TRUE(testing::PublishSnapshot(root, testing::SyntheticSnapshot::Make(1)).ok());
  Child child = Spawn({GRAPHSIEVE_SERVER_TESTING_BINARY, "--snapshot-root", root, "--host",
                       "127.0.0.1", "--port", "0", "--admin-port", "0", "--admin-host", "127.0.0.1",
                       "--poll-interval-seconds", "0", "--drain-grace-seconds", "20"});
  ASSERT_GT(child.port, 0);
  ASSERT_GT(child.admin_port, 0);
  auto probe = testing::Connect(child.port);
  bool ready = false;
  for (int k = 0; k < 200 && !ready; ++k) {  // bounded: 10 s (untagged calls are not held)
    v1::GetSamplingRateRequest req;
    req.add_user_ids(1);
    req.add_item_ids(1002);
    v1::GetSamplingRateResponse resp;
    grpc::ClientContext ctx;
    ready = probe->GetSamplingRate(&ctx, req, &resp).ok();
    if (!ready) absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_TRUE(ready);

  v1::GetSamplingRateRequest big;
  for (int k = 0; k < 100000; ++k) {
    big.add_user_ids(1 + k % 12);
    big.add_item_ids(1001 + (k * 7) % 15);
  }
  // One held call: a held call blocks one of gRPC's callback threads, of which
  // a 2-core machine has few (3 held calls never all reached the handler).
  constexpr int kHeld = 1;
  std::vector<grpc::Status> statuses(kHeld);
  std::vector<int> sizes(kHeld, -1);
  std::vector<std::thread> clients;
  for (int t = 0; t < kHeld; ++t) {
    clients.emplace_back([&, t] {
      auto stub = testing::Connect(child.port);
      v1::GetSamplingRateResponse resp;
      grpc::ClientContext ctx;
      ctx.AddMetadata(kHoldMetadataKey, "1");
      ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
      statuses[t] = stub->GetSamplingRate(&ctx, big, &resp);
      sizes[t] = resp.rates_size();
    });
  }
  // Wait (bounded: 60 s) until all held calls are inside the handler.
  int inflight = 0;
  for (int k = 0; k < 1200 && inflight < kHeld; ++k) {
    inflight = Inflight(child.admin_port);
    if (inflight < kHeld) absl::SleepFor(absl::Milliseconds(50));
  }
  if (inflight < kHeld) {
    kill(child.pid, SIGKILL);  // unblocks the clients
    for (auto& c : clients) c.join();
    waitpid(std::exchange(child.pid, -1), nullptr, 0);
    FAIL() << "the held calls never reached the handler (in flight: " << inflight << ")";
  }

  ASSERT_EQ(kill(child.pid, SIGTERM), 0);
  const int code = WaitExit(std::exchange(child.pid, -1), 60);
  for (auto& c : clients) c.join();
  EXPECT_EQ(code, 0);
  for (int t = 0; t < kHeld; ++t) {
    EXPECT_TRUE(statuses[t].ok()) << "call " << t
                                  << " in flight across SIGTERM: " << statuses[t].error_code()
                                  << " " << statuses[t].error_message();
    EXPECT_EQ(sizes[t], 100000);
  }
  // The drained server is gone: a new call is refused.
  v1::GetSamplingRateResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  EXPECT_EQ(testing::Connect(child.port)->GetSamplingRate(&ctx, big, &resp).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

// A client that opened an HTTP/2 connection and then reads nothing (an idle
// channel that nothing polls) never answers the drain's GOAWAY, so gRPC's
// shutdown waits for it until --drain-grace-seconds. The server must say so,
// not report the connection's FIN, still unacknowledged when it is closed at
// the deadline, as lost response bytes. Deterministic: the raw client has
// read the server's SETTINGS (the connection is gRPC's) before SIGTERM, and
// never reads again.
TEST(DrainTest, AnIdleConnectionHoldsTheDrainToItsDeadlineAndTheLogSaysSo) {
  const std::string root = testing::NewTempDir("drain-idle");
  ASSERT_TRUE(testing::PublishSnapshot(root, testing::SyntheticSnapshot::Make(1)).ok());
  const std::string log = testing::NewTempDir("drain-idle-log") + "/server.err";
  Child child = Spawn(
      {GRAPHSIEVE_SERVER_BINARY, "--snapshot-root", root, "--host", "127.0.0.1", "--port", "0",
       "--admin-port", "0", "--poll-interval-seconds", "0", "--drain-grace-seconds", "1"},
      log);
  ASSERT_GT(child.port, 0);

  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(child.port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  // The client preface and an empty SETTINGS frame (RFC 9113 §3.4, §6.5).
  const std::string preface =
      std::string("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n") + std::string("\0\0\0\4\0\0\0\0\0", 9);
  ASSERT_EQ(write(fd, preface.data(), preface.size()), static_cast<ssize_t>(preface.size()));
  // The server's first frame (its SETTINGS) arrives: bounded, 10 s.
  pollfd in{fd, POLLIN, 0};
  ASSERT_EQ(poll(&in, 1, 10000), 1) << "the server never answered the HTTP/2 preface";
  char frame[9];
  ASSERT_GT(read(fd, frame, sizeof(frame)), 0);

  ASSERT_EQ(kill(child.pid, SIGTERM), 0);
  EXPECT_EQ(WaitExit(std::exchange(child.pid, -1), 60), 0);
  close(fd);
  std::ifstream in_log(log);
  std::stringstream text;
  text << in_log.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("drained at the deadline (--drain-grace-seconds=1)"));
  EXPECT_THAT(text.str(), Not(HasSubstr("unacknowledged response bytes")));
  EXPECT_THAT(text.str(), HasSubstr("stopped"));
}

TEST(DrainTest, BadFlagsExitNonZeroWithTheFlagNamed) {
  const std::string root = testing::NewTempDir("flags");
  const std::string out = root + "/err.txt";
  const std::string cmd = absl::StrCat(GRAPHSIEVE_SERVER_BINARY, " --snapshot-root ", root,
                                       " --default-policy 7 2> ", out);
  const int status = std::system(cmd.c_str());
  EXPECT_EQ(WEXITSTATUS(status), 2);
  std::ifstream in(out);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("--default-policy"));

  const std::string cmd2 =
      absl::StrCat(GRAPHSIEVE_SERVER_BINARY, " --snapshot-root ", root, " --lookup=disk 2> ", out);
  EXPECT_EQ(WEXITSTATUS(std::system(cmd2.c_str())), 2);
  std::ifstream in2(out);
  std::stringstream text2;
  text2 << in2.rdbuf();
  EXPECT_THAT(text2.str(),
              HasSubstr("--lookup: lookup mode 'disk' is not one of: memory, rocksdb"));
}

// A second server on a port or an operator socket the first holds must fail
// to start, naming it, not share it: gRPC's default SO_REUSEPORT would bind
// the port twice (the kernel splits the calls between two servers), and a
// unix socket would be unlinked and replaced under the first server.
TEST(DrainTest, ASecondServerCannotTakeAPortOrAnOperatorSocketInUse) {
  const std::string root = testing::NewTempDir("second");
  ASSERT_TRUE(testing::PublishSnapshot(root, testing::SyntheticSnapshot::Make(1)).ok());
  const std::string socket = "unix:" + root + "/op.sock";
  Child first = Spawn({GRAPHSIEVE_SERVER_BINARY, "--snapshot-root", root, "--host", "127.0.0.1",
                       "--port", "0", "--admin-port", "-1", "--operator-address", socket});
  ASSERT_GT(first.port, 0);
  const std::string out = root + "/err.txt";
  const std::string port_taken = absl::StrCat(
      "timeout -k 5 60 ", GRAPHSIEVE_SERVER_BINARY, " --snapshot-root ", root,
      " --host 127.0.0.1 --port ", first.port, " --admin-port -1 --operator-address off 2> ", out);
  int status = std::system(port_taken.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_THAT(ReadAll(out),
              HasSubstr(absl::StrCat("--port: cannot listen on 127.0.0.1:", first.port)));

  const std::string socket_taken = absl::StrCat(
      "timeout -k 5 60 ", GRAPHSIEVE_SERVER_BINARY, " --snapshot-root ", root,
      " --host 127.0.0.1 --port 0 --admin-port -1 --operator-address ", socket, " 2> ", out);
  status = std::system(socket_taken.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 1);
  EXPECT_THAT(ReadAll(out),
              HasSubstr("--operator-address: another process is listening on " + socket));
  EXPECT_TRUE(std::filesystem::exists(root + "/op.sock")) << "the first server's socket stays";

  // Once the first has stopped, its stale socket file is no obstacle.
  ASSERT_EQ(kill(first.pid, SIGTERM), 0);
  ASSERT_EQ(WaitExit(std::exchange(first.pid, -1), 60), 0);
  Child next = Spawn({GRAPHSIEVE_SERVER_BINARY, "--snapshot-root", root, "--host", "127.0.0.1",
                      "--port", "0", "--admin-port", "-1", "--operator-address", socket});
  EXPECT_GT(next.port, 0);
}

// A server killed with SIGKILL cannot unlink its operator socket; the next
// start on the same address removes the stale file (nobody accepts on it),
// says so, and binds it again.
TEST(DrainTest, TheSocketLeftByAKilledServerIsRemovedAndRebound) {
  const std::string root = testing::NewTempDir("stale-socket");
  ASSERT_TRUE(testing::PublishSnapshot(root, testing::SyntheticSnapshot::Make(1)).ok());
  const std::string path = root + "/op.sock", socket = "unix:" + path;
  const std::vector<std::string> args = {GRAPHSIEVE_SERVER_BINARY,
                                         "--snapshot-root",
                                         root,
                                         "--host",
                                         "127.0.0.1",
                                         "--port",
                                         "0",
                                         "--admin-port",
                                         "-1",
                                         "--operator-address",
                                         socket};
  Child killed = Spawn(args, root + "/first.err");
  ASSERT_GT(killed.port, 0);
  ASSERT_EQ(kill(killed.pid, SIGKILL), 0);
  ASSERT_EQ(waitpid(std::exchange(killed.pid, -1), nullptr, 0) > 0, true);
  ASSERT_TRUE(std::filesystem::is_socket(path)) << "SIGKILL leaves the socket file";

  Child next = Spawn(args, root + "/next.err");
  ASSERT_GT(next.port, 0);
  EXPECT_THAT(ReadAll(root + "/next.err"),
              HasSubstr("removed the stale operator socket " + path + " (no process accepts"));
  // The new socket is this server's: GetStatus answers on it.
  auto stub = v1::SamplingRateService::NewStub(
      grpc::CreateChannel(socket, grpc::InsecureChannelCredentials()));
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  v1::GetStatusResponse status;
  grpc::Status st = stub->GetStatus(&ctx, v1::GetStatusRequest(), &status);
  EXPECT_TRUE(st.ok()) << st.error_message();
}

TEST(DrainTest, ASnapshotRootThatIsNoDirectoryExitsTwoNamingIt) {
  const std::string dir = testing::NewTempDir("no-root");
  const std::string out = dir + "/err.txt";
  std::ofstream(dir + "/file") << "x";
  for (const std::string& root : {dir + "/missing", dir + "/file"}) {
    const std::string cmd =
        absl::StrCat("timeout -k 5 60 ", GRAPHSIEVE_SERVER_BINARY, " --snapshot-root ", root,
                     " --port 0 --admin-port -1 2> ", out);
    const int status = std::system(cmd.c_str());
    ASSERT_TRUE(WIFEXITED(status)) << root;
    EXPECT_EQ(WEXITSTATUS(status), 2) << root;
    EXPECT_THAT(ReadAll(out), HasSubstr("--snapshot-root '" + root + "'")) << root;
  }
}

// Every numeric flag's bad values: NaN, infinities, out of range, not a number.
// Each must stop the server before it listens, with a message naming the flag
// (exit 2 from our validation, 1 from Abseil's flag parser).
TEST(DrainTest, EveryNumericFlagRejectsItsBadValues) {
  const std::string root = testing::NewTempDir("numeric-flags");
  const std::string out = root + "/err.txt";
  struct Case {
    const char* flag;   // as given on the command line
    const char* named;  // how the error message names it
    std::vector<const char*> bad;
  };
  const std::vector<Case> cases = {
      {"port", "port", {"nan", "inf", "-1", "65536", "99999999999", "abc", "1.5"}},
      {"admin_port", "admin", {"nan", "-inf", "-5", "65536", "abc"}},
      {"poll_interval_seconds", "poll-interval-seconds", {"nan", "inf", "-inf", "abc"}},
      {"previous_version_hold_seconds",
       "previous-version-hold-seconds",
       {"nan", "inf", "-inf", "-1", "abc"}},
      {"max_batch_pairs", "max-batch-pairs", {"nan", "inf", "0", "-5", "10000001", "abc"}},
      {"drain_grace_seconds",
       "drain-grace-seconds",
       {"nan", "inf", "-inf", "-1", "86401", "1e300", "abc"}},
      {"drain_notice_seconds",
       "drain-notice-seconds",
       {"nan", "inf", "-inf", "-1", "86401", "1e300", "abc"}},
      {"block_cache_mb", "block-cache-mb", {"nan", "inf", "-1", "1073741825", "abc"}},
      {"partition", "partition", {"nan", "inf", "-2", "99999999999", "abc"}},
      {"history_size", "history-size", {"nan", "inf", "0", "-5", "99999999999", "abc"}},
      {"admin_threads", "admin-threads", {"nan", "inf", "0", "-5", "99999999999", "abc"}},
  };
  for (const Case& c : cases) {
    for (const char* value : c.bad) {
      const std::string flag = absl::StrCat("--", c.flag, "=", value);
      const std::string cmd =
          absl::StrCat("timeout -k 5 60 ", GRAPHSIEVE_SERVER_BINARY, " --snapshot_root=", root,
                       " --port=0 --admin_port=-1 ", flag, " 2> ", out);
      const int status = std::system(cmd.c_str());
      ASSERT_TRUE(WIFEXITED(status)) << flag << ": the server did not exit (signal)";
      const int code = WEXITSTATUS(status);
      EXPECT_TRUE(code == 1 || code == 2) << flag << ": exit " << code;
      std::ifstream in(out);
      std::stringstream text;
      text << in.rdbuf();
      // Our validation writes --drain-grace-seconds, Abseil's parser 'drain_grace_seconds'.
      const std::string underscored = absl::StrReplaceAll(c.named, {{"-", "_"}});
      EXPECT_TRUE(absl::StrContains(text.str(), c.named) ||
                  absl::StrContains(text.str(), underscored))
          << flag << ": " << text.str();
      EXPECT_THAT(text.str(), Not(HasSubstr("listening"))) << flag;
    }
  }
}
#endif  // GRAPHSIEVE_SERVER_BINARY

// Self-signed certificate for CN=localhost (EC P-256: fast to make).
bool MakeCert(const std::string& dir, const std::string& name) {
  const std::string cmd = absl::StrCat(
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
      "-subj /CN=localhost -addext subjectAltName=DNS:localhost,IP:127.0.0.1 -keyout ",
      dir, "/", name, ".key -out ", dir, "/", name, ".pem 2>/dev/null");
  return std::system(cmd.c_str()) == 0;
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

grpc::Status CallOver(const std::shared_ptr<grpc::ChannelCredentials>& creds, int port) {
  grpc::ChannelArguments args;
  args.SetSslTargetNameOverride("localhost");
  auto stub = v1::SamplingRateService::NewStub(
      grpc::CreateCustomChannel(absl::StrCat("127.0.0.1:", port), creds, args));
  v1::GetSamplingRateRequest req;
  req.add_user_ids(1);
  req.add_item_ids(1002);
  v1::GetSamplingRateResponse resp;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  return stub->GetSamplingRate(&ctx, req, &resp);
}

TEST(TlsTest, TlsAndMutualTls) {
  if (std::system("openssl version >/dev/null 2>&1") != 0) {
    GRAPHSIEVE_SKIP_OR_FAIL(
        "the openssl command-line tool (not on PATH): the test makes its certificates with it");
  }
  const std::string dir = testing::NewTempDir("tls");
  ASSERT_TRUE(MakeCert(dir, "server"));
  ASSERT_TRUE(MakeCert(dir, "client"));
  ASSERT_TRUE(testing::PublishSnapshot(dir, testing::SyntheticSnapshot::Make(1)).ok());
  ServerOptions o = testing::LoopbackOptions(dir);
  o.tls_cert_path = dir + "/server.pem";
  o.tls_key_path = dir + "/server.key";
  {
    auto server = GraphsieveServer::Create(o);
    ASSERT_TRUE(server.ok()) << server.status();
    ASSERT_TRUE((*server)->manager().PollOnce().ok());
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = Slurp(dir + "/server.pem");
    EXPECT_TRUE(CallOver(grpc::SslCredentials(ssl), (*server)->port()).ok());
    EXPECT_FALSE(CallOver(grpc::InsecureChannelCredentials(), (*server)->port()).ok());
  }
  o.tls_client_ca_path = dir + "/client.pem";
  {
    auto server = GraphsieveServer::Create(o);
    ASSERT_TRUE(server.ok()) << server.status();
    ASSERT_TRUE((*server)->manager().PollOnce().ok());
    grpc::SslCredentialsOptions no_cert;
    no_cert.pem_root_certs = Slurp(dir + "/server.pem");
    EXPECT_FALSE(CallOver(grpc::SslCredentials(no_cert), (*server)->port()).ok());
    grpc::SslCredentialsOptions with_cert = no_cert;
    with_cert.pem_private_key = Slurp(dir + "/client.key");
    with_cert.pem_cert_chain = Slurp(dir + "/client.pem");
    grpc::Status st = CallOver(grpc::SslCredentials(with_cert), (*server)->port());
    EXPECT_TRUE(st.ok()) << st.error_message();
  }
  o.tls_key_path = dir + "/missing.key";
  auto bad = GraphsieveServer::Create(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()), HasSubstr("--tls-key"));
  // Another certificate's key: named against the two flags, not --port.
  o.tls_key_path = dir + "/client.key";
  bad = GraphsieveServer::Create(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), absl::StrCat("--tls-key: '", dir,
                                                 "/client.key' is not the private key of "
                                                 "--tls-cert '",
                                                 dir, "/server.pem'"));
  // A PEM file that holds no key (a certificate).
  o.tls_key_path = dir + "/client.pem";
  bad = GraphsieveServer::Create(o);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("--tls-key: '" + dir + "/client.pem' holds no"));
}

}  // namespace
}  // namespace graphsieve
