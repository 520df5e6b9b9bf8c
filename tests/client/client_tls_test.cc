// The client side of TLS: a real graphsieve-server started with --tls-cert and
// --tls-key (a self-signed certificate made by openssl in the test), reached by
// SamplingRateClient and the `graphsieve` CLI trusting that certificate.
// Plaintext clients and clients trusting another certificate are refused.
#include <cstdint>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "client/sampling_rate_client.h"
#include "gtest/gtest.h"
#include "tests/client/cluster.h"
#include "tests/missing_dependency.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

constexpr double kAlpha = 0.2;

// One small snapshot and one TLS server for every test of the suite.
class ClientTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (testing::OpensslBinary().empty()) return;  // each test skips
    dir_ = new std::string(testing::NewTempDir("client-tls"));
    ASSERT_TRUE(testing::MakeSelfSignedCert(*dir_, "server").ok());
    ASSERT_TRUE(testing::MakeSelfSignedCert(*dir_, "other").ok());
    auto log = testing::GenerateLog(*dir_, 60, 90, 3000, 7);
    ASSERT_TRUE(log.ok()) << log.status();
    const std::string root = *dir_ + "/root";
    const absl::Status built = testing::BuildSnapshot(*log, root, kAlpha);
    ASSERT_TRUE(built.ok()) << built;
    auto server = std::make_unique<testing::ServerProcess>();
    const absl::Status started = server->Start(
        root, 0, {"--tls_cert=" + Cert("server"), "--tls_key=" + *dir_ + "/server.key"});
    ASSERT_TRUE(started.ok()) << started;
    server_ = server.release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
    delete dir_;
    dir_ = nullptr;
  }
  void SetUp() override {
    if (testing::OpensslBinary().empty()) {
      GRAPHSIEVE_SKIP_OR_FAIL(
          "the openssl command-line tool (not on PATH): the test makes its certificates with it");
    }
    ASSERT_NE(server_, nullptr) << "suite set-up failed";
  }

  static std::string Cert(const std::string& name) { return *dir_ + "/" + name + ".pem"; }

  // One attempt: a refused handshake must fail at once, not after retries.
  static absl::StatusOr<RateBatch> RatesWith(const std::string& root_cert) {
    SamplingRateClientOptions options;
    options.target = server_->target();
    options.tls_root_cert_path = root_cert;
    options.max_attempts = 1;
    options.deadline_seconds = 5;
    auto client = SamplingRateClient::Create(options);
    if (!client.ok()) return client.status();
    return (*client)->GetRates(kUsers, kItems);
  }

  // Known ids of the generated log, and an unknown user last.
  static constexpr uint64_t kUsers[] = {0, 1, 2, 987654321};
  static constexpr uint64_t kItems[] = {0, 1, 2, 3};

  // `graphsieve <command> --server <the TLS server> <flags>`, bounded.
  static testing::RunResult Cli(std::vector<std::string> args) {
    args.insert(args.begin() + 1, {"--server", server_->target()});
    args.insert(args.begin(), testing::CliBinary());
    return testing::RunProgram(args, 60);
  }

  static std::string* dir_;
  static testing::ServerProcess* server_;
};

std::string* ClientTls::dir_ = nullptr;
testing::ServerProcess* ClientTls::server_ = nullptr;

TEST_F(ClientTls, LibraryTrustingTheServerCertificateGetsRates) {
  const absl::StatusOr<RateBatch> batch = RatesWith(Cert("server"));
  ASSERT_TRUE(batch.ok()) << batch.status();
  ASSERT_EQ(batch->size(), std::size(kUsers));
  for (size_t i = 0; i < batch->size(); ++i) {
    EXPECT_GT(batch->rates[i], 0.0f) << i;
    EXPECT_LE(batch->rates[i], 1.0f) << i;
  }
  EXPECT_EQ(batch->sources.back(), v1::RATE_SOURCE_DEFAULT);  // the unknown user
  ASSERT_EQ(batch->snapshot_versions.size(), 1u);
  EXPECT_FALSE(batch->snapshot_versions[0].empty());
}

TEST_F(ClientTls, PlaintextAndUntrustedClientsAreRefused) {
  const absl::StatusOr<RateBatch> plaintext = RatesWith("");
  EXPECT_FALSE(plaintext.ok());
  EXPECT_NE(plaintext.status().message().find(server_->target()), std::string::npos)
      << plaintext.status();
  // TLS, but trusting a different self-signed certificate: verification fails.
  const absl::StatusOr<RateBatch> untrusted = RatesWith(Cert("other"));
  EXPECT_FALSE(untrusted.ok());
}

TEST_F(ClientTls, CliWithTlsFlagsReachesTheServer) {
  const absl::StatusOr<RateBatch> batch = RatesWith(Cert("server"));
  ASSERT_TRUE(batch.ok()) << batch.status();
  const std::string version = batch->snapshot_versions[0];
  const std::string tls = "--tls-root-cert=" + Cert("server");
  // The certificate names localhost and 127.0.0.1; --tls-server-name checks
  // "localhost" although the target is an IP address.
  testing::RunResult r = Cli({"status", tls, "--tls-server-name=localhost"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("serving                yes"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(version), std::string::npos) << r.out;
  const std::string pairs = *dir_ + "/pairs.csv";
  std::ofstream(pairs) << "user_id,item_id\n0,0\n1,1\n";
  r = Cli({"rates", tls, "--input", pairs});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.rfind("user_id,item_id,rate,source\n0,0,", 0), 0u) << r.out;
  EXPECT_NE(r.err.find(version), std::string::npos) << r.err;
  // Without the TLS flag the CLI speaks plaintext and fails (exit 2, naming the target).
  r = Cli({"status", "--max-attempts=1", "--deadline-seconds=5"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find(server_->target()), std::string::npos) << r.err;
  // A name the certificate does not carry fails verification.
  r = Cli({"status", tls, "--tls-server-name=elsewhere.example", "--max-attempts=1",
           "--deadline-seconds=5"});
  EXPECT_EQ(r.exit_code, 2) << r.out;
}

}  // namespace
}  // namespace graphsieve
