// graphsieve status's table (client/cli/status_cmd.cc): what the server
// reports about <root>/CURRENT reaches the operator as written.
#include <string>

#include "client/cli/commands.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace graphsieve {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

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
