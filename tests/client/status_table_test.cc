// graphsieve status's table (client/cli/status_cmd.cc): what the server
// reports about <root>/CURRENT reaches the operator as written, and the rule
// in force with its tune, from the active version's MANIFEST.json
// (docs/DEPLOY.md "The rule in force").
#include <string>

#include "client/cli/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

v1::GetStatusResponse Serving(const std::string& manifest_json) {
  v1::GetStatusResponse s;
  s.set_serving(true);
  s.mutable_active()->set_version("20261128T213345Z-b09a2c38");
  s.mutable_active()->set_manifest_json(manifest_json);
  return s;
}

TEST(StatusTable, ShowsTheTunedRuleWithItsDateAndReportDigest) {
  const std::string table = FormatStatusTable(
      "localhost:1", Serving(R"({"parameters": {"rate_rule": "mixture", "kappa": 1},
                  "tune": {"rule": "graph,kappa=1,eta=1", "date": "2026-11-28T21:25:14Z",
                           "report_digest": "xxh3:0123456789abcdef"}})"));
  EXPECT_NE(table.find("rule in force          graph,kappa=1,eta=1 (tuned 2026-11-28T21:25:14Z, "
                       "report xxh3:0123456789abcdef)"),
            std::string::npos)
      << table;
}

TEST(StatusTable, AVersionBuiltFromHandGivenFlagsIsNotTuned) {
  const std::string table =
      FormatStatusTable("localhost:1", Serving(R"({"parameters": {"rate_rule": "mixture"}})"));
  EXPECT_NE(table.find("rule in force          not tuned (flags given by hand)"), std::string::npos)
      << table;
  EXPECT_NE(
      FormatStatusTable("localhost:1", v1::GetStatusResponse()).find("rule in force          -"),
      std::string::npos);
}

TEST(StatusTable, AnUnreadableCurrentShowsTheErrorNotADash) {
  v1::GetStatusResponse s;
  s.set_serving(true);
  s.mutable_active()->set_version("20261128T000000Z-00000001");
  s.set_current_error("/srv/snap/CURRENT: 'not-a-version' is not a version id");
  const std::string table = FormatStatusTable("127.0.0.1:50051", s);
  EXPECT_THAT(table, HasSubstr("CURRENT on disk        UNREADABLE: /srv/snap/CURRENT: "
                               "'not-a-version' is not a version id\n"));

  s.clear_current_error();
  s.set_current_on_disk("20261128T000000Z-00000001");
  EXPECT_THAT(FormatStatusTable("127.0.0.1:50051", s),
              HasSubstr("CURRENT on disk        20261128T000000Z-00000001\n"));
  s.clear_current_on_disk();
  EXPECT_THAT(FormatStatusTable("127.0.0.1:50051", s), HasSubstr("CURRENT on disk        -\n"));
  EXPECT_THAT(FormatStatusTable("127.0.0.1:50051", s), Not(HasSubstr("UNREADABLE")));
}

}  // namespace
}  // namespace graphsieve
