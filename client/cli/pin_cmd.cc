// graphsieve pin: pin a kept snapshot version on a server (PinVersion), or unpin.
// PinVersion is accepted only on the server's operator listener (docs/SERVER.md
// "Operator actions"); without --server this is the default listener of a
// server on port 50051, the unix socket server/options.h OperatorAddress names.
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "client/cli/commands.h"
#include "client/cli/flags.h"

namespace graphsieve {
namespace {

constexpr char kDefaultOperatorAddress[] = "unix:/tmp/graphsieve-operator-50051.sock";

}  // namespace

int RunPin() {
  const std::string version = absl::GetFlag(FLAGS_pin_version);
  const bool unpin = absl::GetFlag(FLAGS_unpin);
  if (version.empty() == !unpin) {
    return Fail("pin", absl::InvalidArgumentError(
                           unpin ? "--version V and --unpin exclude each other; give one"
                                 : "give --version V (pin that version) or --unpin"));
  }
  std::string target = absl::GetFlag(FLAGS_server);
  if (target.empty()) target = kDefaultOperatorAddress;
  absl::StatusOr<std::unique_ptr<SamplingRateClient>> client = ClientFromFlags(target, "server");
  if (!client.ok()) return Fail("pin", client.status());
  absl::StatusOr<v1::PinVersionResponse> response =
      (*client)->PinVersion(version, absl::GetFlag(FLAGS_reject_active));
  if (!response.ok()) return Fail("pin", response.status());
  const std::string& pinned = response->pinned_version();
  std::cout << absl::StrFormat(
      "%-22s %s\n%-22s %s\n", "active version",
      response->active_version().empty() ? "-" : response->active_version(), "pinned version",
      pinned.empty() ? "no (following CURRENT)" : pinned);
  return kExitOk;
}

}  // namespace graphsieve
