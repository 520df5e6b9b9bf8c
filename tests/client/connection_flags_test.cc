// The CLI's connection flags (ClientFromFlags): TLS files and flag pairs are
// checked when the client is made, with messages naming the flag and file.
#include <fstream>
#include <string>

#include "absl/flags/flag.h"
#include "client/cli/commands.h"
#include "client/cli/flags.h"
#include "gtest/gtest.h"
#include "tests/temp_dir.h"

namespace graphsieve {
namespace {

TEST(ConnectionFlags, ARootCertThatIsNotPemIsRefusedNamingTheFlagAndFile) {
  const std::string path = testing::ProcessTempDir() + "/not-a-cert.txt";
  std::ofstream(path) << "hello, not a certificate\n";
  absl::SetFlag(&FLAGS_tls_root_cert, path);
  auto client = ClientFromFlags("127.0.0.1:1", "server");
  absl::SetFlag(&FLAGS_tls_root_cert, "");
  ASSERT_FALSE(client.ok());
  EXPECT_EQ(client.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(client.status().message().find("--tls-root-cert"), std::string::npos)
      << client.status();
  EXPECT_NE(client.status().message().find("not-a-cert.txt"), std::string::npos) << client.status();
}

TEST(ConnectionFlags, ServerNameWithoutRootCertIsRefusedNamingBothFlags) {
  absl::SetFlag(&FLAGS_tls_server_name, "graphsieve.test");
  auto client = ClientFromFlags("127.0.0.1:1", "server");
  absl::SetFlag(&FLAGS_tls_server_name, "");
  ASSERT_FALSE(client.ok());
  EXPECT_NE(client.status().message().find("--tls-server-name"), std::string::npos)
      << client.status();
  EXPECT_NE(client.status().message().find("--tls-root-cert"), std::string::npos)
      << client.status();
}

}  // namespace
}  // namespace graphsieve
