// graphsieve status: what a server serves, as a table or JSON.
#include <iostream>
#include <string>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands.h"
#include "client/cli/flags.h"
#include "google/protobuf/util/json_util.h"
#include "nlohmann/json.hpp"

namespace graphsieve {
namespace {

std::string OrNone(const std::string& s) { return s.empty() ? "-" : s; }

void Row(std::string* out, const char* key, const std::string& value) {
  absl::StrAppendFormat(out, "%-22s %s\n", key, value);
}

// How the version's scores became rates, from its MANIFEST.json parameters
// (docs/METHOD.md "Rate rules"); versions from before the rule was recorded
// used the floor rule.
std::string RateRule(const v1::SnapshotSummary& a) {
  const nlohmann::json m =
      nlohmann::json::parse(a.manifest_json(), nullptr, /*allow_exceptions=*/false);
  const nlohmann::json* p = m.is_object() && m.contains("parameters") ? &m["parameters"] : nullptr;
  const bool known = p != nullptr && p->is_object();
  const std::string rule = known && p->contains("rate_rule") && (*p)["rate_rule"].is_string()
                               ? (*p)["rate_rule"].get<std::string>()
                               : "floor";
  if (rule == "mixture" && known && p->contains("kappa") && (*p)["kappa"].is_number()) {
    return absl::StrFormat("mixture (kappa %.6g)", (*p)["kappa"].get<double>());
  }
  if (rule == "floor") return absl::StrFormat("floor (floor %.6g)", a.floor());
  return rule;
}

// Where the version's rule came from (its manifest's "tune" object, written
// when graphsieve-build read graphsieve-eval tune's flag file): "maec-prop-mix... (tuned
// 2026-11-28T21:25:14Z, report xxh3:...)", or that the flags were given by hand.
std::string TuneLine(const v1::SnapshotSummary& a) {
  const nlohmann::json m =
      nlohmann::json::parse(a.manifest_json(), nullptr, /*allow_exceptions=*/false);
  if (!m.is_object() || !m.contains("tune") || !m["tune"].is_object()) {
    return "not tuned (flags given by hand)";
  }
  const nlohmann::json& t = m["tune"];
  auto field = [&t](const char* key) {
    return t.contains(key) && t[key].is_string() ? t[key].get<std::string>() : std::string("-");
  };
  return absl::StrCat(field("rule"), " (tuned ", field("date"), ", report ", field("report_digest"),
                      ")");
}

}  // namespace

std::string FormatStatusTable(const std::string& target, const v1::GetStatusResponse& s) {
  std::string out;
  const v1::SnapshotSummary& a = s.active();
  Row(&out, "server",
      absl::StrCat(target, s.server_version().empty() ? "" : "  (", s.server_version(),
                   s.server_version().empty() ? "" : ")"));
  Row(&out, "serving", s.serving() ? "yes" : "NO (no validated snapshot loaded)");
  Row(&out, "active version", OrNone(a.version()));
  Row(&out, "created at", OrNone(a.created_at()));
  Row(&out, "snapshot age", absl::StrFormat("%.1f s", s.snapshot_age_seconds()));
  Row(&out, "method",
      absl::StrCat(OrNone(a.method()), " (resistance ", OrNone(a.resistance()), ", node rows ",
                   a.sketch_dim(), " floats)"));
  Row(&out, "alpha / gamma", absl::StrFormat("%.6g / %.6g", a.alpha(), a.gamma()));
  Row(&out, "rate rule", a.version().empty() ? "-" : RateRule(a));
  Row(&out, "rule in force", a.version().empty() ? "-" : TuneLine(a));
  Row(&out, "achieved neg. mean", absl::StrFormat("%.6f", a.achieved_negative_mean_rate()));
  Row(&out, "instances / pairs",
      absl::StrCat(a.instances(), " / ", a.pairs(), " (", a.positive_pairs(), " positive)"));
  Row(&out, "users / items",
      absl::StrCat(a.users(), " / ", a.items(), " (", a.components(), " components)"));
  Row(&out, "keep seed", absl::StrCat(a.seed()));
  Row(&out, "input digest", OrNone(a.input_digest()));
  Row(&out, "CURRENT on disk",
      s.current_error().empty() ? OrNone(s.current_on_disk())
                                : absl::StrCat("UNREADABLE: ", s.current_error()));
  Row(&out, "versions on disk", OrNone(absl::StrJoin(s.versions_on_disk(), ", ")));
  Row(&out, "pinned", s.pinned_version().empty() ? "no (following CURRENT)" : s.pinned_version());
  Row(&out, "rejected", OrNone(absl::StrJoin(s.rejected_versions(), ", ")));
  Row(&out, "held (previous)", OrNone(s.held_version()));
  absl::StrAppendFormat(&out, "refresh history (%d, newest last):\n", s.refresh_history_size());
  if (s.refresh_history_size() > 0) {
    absl::StrAppendFormat(&out, "  %-26s %-28s %-4s %8s  %s\n", "at", "version", "ok", "load s",
                          "message");
  }
  for (const v1::RefreshEvent& e : s.refresh_history()) {
    absl::StrAppendFormat(&out, "  %-26s %-28s %-4s %8.3f  %s\n", e.at(), e.version(),
                          e.ok() ? "yes" : "NO", e.load_seconds(), e.message());
  }
  return out;
}

int RunStatus() {
  const std::string target = absl::GetFlag(FLAGS_server);
  absl::StatusOr<std::unique_ptr<SamplingRateClient>> client = ClientFromFlags(target, "server");
  if (!client.ok()) return Fail("status", client.status());
  absl::StatusOr<v1::GetStatusResponse> status = (*client)->GetStatus();
  if (!status.ok()) return Fail("status", status.status());
  if (absl::GetFlag(FLAGS_json)) {
    std::string json;
    google::protobuf::util::JsonPrintOptions options;
    options.add_whitespace = true;
    options.preserve_proto_field_names = true;
    options.always_print_primitive_fields = true;
    if (auto s = google::protobuf::util::MessageToJsonString(*status, &json, options); !s.ok()) {
      return Fail("status", absl::InternalError(absl::StrCat("JSON: ", s.ToString())));
    }
    std::cout << json << '\n';
  } else {
    std::cout << FormatStatusTable(target, *status);
  }
  return kExitOk;
}

}  // namespace graphsieve
