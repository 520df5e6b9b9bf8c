#include "server/options.h"

#include <cmath>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "core/model/node_default.h"

namespace graphsieve {
namespace {

// "" | "off" | "unix:/absolute/path" | loopback host ":" port.
absl::Status CheckOperatorAddress(absl::string_view a) {
  if (a.empty() || a == "off") return absl::OkStatus();
  if (absl::ConsumePrefix(&a, "unix:")) {
    if (absl::StartsWith(a, "/") && a.size() > 1) return absl::OkStatus();
    return absl::InvalidArgumentError(
        absl::StrCat("--operator-address: unix socket path '", a, "' must be absolute"));
  }
  const size_t colon = a.rfind(':');
  int port = -1;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(a.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--operator-address: '", a, "' is not unix:/PATH, HOST:PORT or 'off'"));
  }
  const absl::string_view host = a.substr(0, colon);
  if (host == "localhost" || host == "[::1]" || absl::StartsWith(host, "127.")) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "--operator-address: '", a, "' is not a loopback address; PinVersion changes what every ",
      "caller gets, so its listener stays on 127.0.0.1/[::1] or a unix socket (reach it with ",
      "kubectl exec or port-forward)"));
}

}  // namespace

std::string OperatorAddress(const std::string& flag, int grpc_port) {
  if (flag == "off") return "";
  if (!flag.empty()) return flag;
  return absl::StrCat("unix:/tmp/graphsieve-operator-", grpc_port, ".sock");
}

absl::Status ServerOptions::Validate() const {
  if (snapshot_root.empty()) {
    return absl::InvalidArgumentError("--snapshot-root is required");
  }
  if (port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat("--port must be in [0, 65535], got ", port));
  }
  if (admin_port < -1 || admin_port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrCat("--admin-port must be -1 (off) or in [0, 65535], got ", admin_port));
  }
  if (admin_port > 0 && admin_port == port) {
    return absl::InvalidArgumentError(
        absl::StrCat("--admin-port and --port are both ", port, "; they must differ"));
  }
  if (!std::isfinite(poll_interval_seconds)) {
    return absl::InvalidArgumentError("--poll-interval-seconds must be a finite number");
  }
  if (!std::isfinite(previous_version_hold_seconds) || previous_version_hold_seconds < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--previous-version-hold-seconds must be a finite number >= 0, got ",
                     previous_version_hold_seconds));
  }
  if (max_batch_pairs < 1 || max_batch_pairs > 10000000) {
    return absl::InvalidArgumentError(
        absl::StrCat("--max-batch-pairs must be in [1, 10000000], got ", max_batch_pairs));
  }
  if (lookup_helpers < 0 || lookup_helpers > 64) {
    return absl::InvalidArgumentError(
        absl::StrCat("--lookup-helpers must be in [0, 64], got ", lookup_helpers));
  }
  if (chunk_pairs < 1) {
    return absl::InvalidArgumentError(absl::StrCat("chunk_pairs must be >= 1, got ", chunk_pairs));
  }
  if (default_policy.kind == DefaultPolicy::Kind::kFixed &&
      !(default_policy.fixed_rate > 0.0 && default_policy.fixed_rate <= 1.0)) {
    return absl::InvalidArgumentError("--default-policy: fixed rate must be in (0, 1]");
  }
  // At most a day: a SIGTERM must end the process, and the grace becomes a
  // deadline in microseconds (int64).
  if (!(drain_grace_seconds >= 0.0 && drain_grace_seconds <= 86400.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--drain-grace-seconds must be in [0, 86400], got ", drain_grace_seconds));
  }
  if (!(drain_notice_seconds >= 0.0 && drain_notice_seconds <= 86400.0)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--drain-notice-seconds must be in [0, 86400], got ", drain_notice_seconds));
  }
  if (tls_cert_path.empty() != tls_key_path.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key must be given together");
  }
  if (!tls_client_ca_path.empty() && tls_cert_path.empty()) {
    return absl::InvalidArgumentError(
        "--tls-client-ca needs --tls-cert and --tls-key (mTLS is on top of TLS)");
  }
  if (absl::Status st = CheckOperatorAddress(operator_address); !st.ok()) return st;
  if (history_size < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--history-size must be >= 1, got ", history_size));
  }
  if (admin_threads < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--admin-threads must be >= 1, got ", admin_threads));
  }
  for (const std::string& v : reject_versions) {
    if (!pin_version.empty() && v == pin_version) {
      return absl::InvalidArgumentError(
          absl::StrCat("--pin-version ", v, " is also listed in --reject-versions"));
    }
  }
  return absl::OkStatus();
}

std::string DefaultPolicyFallbackNote(const DefaultPolicy& policy, const UnseenModel& model) {
  if (policy.kind != DefaultPolicy::Kind::kPositiveRate) return "";
  const bool users = HasNodeDefault(model, /*is_item=*/false);
  const bool items = HasNodeDefault(model, /*is_item=*/true);
  if (users && items) return "";
  const char* sides = !users && !items ? "users and items" : !users ? "users" : "items";
  return absl::StrCat("--default-policy=positive-rate: the snapshot has no positive-rate fit for ",
                      sides,
                      " (written before snapshot format 3, a uniform snapshot, or no positive on "
                      "that side); DEFAULT answers for a known one of them use node-mean");
}

}  // namespace graphsieve
