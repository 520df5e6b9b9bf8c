// graphsieve status's table: the rule in force and its tune, from the active
// version's MANIFEST.json (docs/DEPLOY.md "The rule in force").
#include <string>

#include "client/cli/commands.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

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

}  // namespace
}  // namespace graphsieve
