// fuzz_cli_inputs: what the `graphsieve` CLI parses from its user — the
// log-column flags (core/cli/log_flags.h: --dataset, --user-col/--user-column,
// --item-col, --label-col, --label-rule, --label, --delimiter, --id-mode, alias
// merging) and the pairs/impression files it streams (client/delimited_stream.h:
// header, delimiter detection, quoting, headerless presets, gzip), row by row
// through ParseId and EvaluateLabel as `rates`, `filter` and `canary` do.
//
// Input layout: 12 lines of flag values (empty = the flag's default), one
// option byte (bit 0: gzip the file), then the file's bytes.
// Contracts checked: a returned row has at least as many fields as the header
// has columns; every error carries a message.
#include <cstdint>
#include <string>

#include "absl/flags/flag.h"
#include "client/delimited_stream.h"
#include "core/cli/log_flags.h"
#include "core/io/ids.h"
#include "fuzz/fuzz_util.h"

namespace graphsieve {
namespace {

// Sets every log-column flag, so no value leaks from one input to the next.
void SetFlags(fuzz::Input& in) {
  struct Flag {
    absl::Flag<std::string>* flag;
    const char* def;
  };
  static const Flag kFlags[] = {{&FLAGS_dataset, ""},
                                {&FLAGS_user_col, "user_id"},
                                {&FLAGS_item_col, "item_id"},
                                {&FLAGS_label_col, "label"},
                                {&FLAGS_label_rule, ""},
                                {&FLAGS_pilot_col, ""},
                                {&FLAGS_delimiter, "auto"},
                                {&FLAGS_id_mode, "auto"},
                                {&FLAGS_user_column, "user_id"},
                                {&FLAGS_item_column, "item_id"},
                                {&FLAGS_label, "label"},
                                {&FLAGS_pilot_column, ""}};
  for (const Flag& f : kFlags) {
    const std::string_view v = in.Line();
    absl::SetFlag(f.flag, v.empty() ? std::string(f.def) : std::string(v));
  }
}

void CheckError(const absl::Status& s) {
  fuzz::Check(s.ok() || !s.message().empty(), "an error without a message");
}

}  // namespace
}  // namespace graphsieve

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphsieve;
  fuzz::Input in(data, size);
  SetFlags(in);
  const bool gzip = in.Byte() & 1;
  LogReaderOptions base;
  base.keep_id_names = false;
  absl::StatusOr<LogReaderOptions> options = LogReaderOptionsFromFlags(base, /*read_pilot=*/false);
  CheckError(options.status());
  if (!options.ok()) return 0;
  const std::string path = fuzz::ScratchDir() + "/input.csv";
  fuzz::WriteFileOrDie(path, gzip ? fuzz::Gzip(in.Rest()) : std::string(in.Rest()));
  absl::StatusOr<std::unique_ptr<DelimitedStream>> stream = DelimitedStream::Open(path, *options);
  CheckError(stream.status());
  if (!stream.ok()) return 0;
  DelimitedStream& s = **stream;
  const absl::StatusOr<size_t> user = s.Column(options->user_column, "user-col");
  const absl::StatusOr<size_t> item = s.Column(options->item_column, "item-col");
  CheckError(user.status());
  CheckError(item.status());
  const int label = s.FindColumn(options->label.column);
  for (int rows = 0; rows < 100000; ++rows) {
    absl::StatusOr<bool> next = s.Next();
    CheckError(next.status());
    if (!next.ok() || !*next) break;
    fuzz::Check(s.fields().size() >= s.columns().size(), "a row with fewer fields than columns");
    if (user.ok()) CheckError(ParseId(s.fields()[*user], options->id_mode).status());
    if (item.ok()) CheckError(ParseId(s.fields()[*item], options->id_mode).status());
    if (label >= 0) CheckError(EvaluateLabel(options->label, s.fields()[label]).status());
    (void)s.Where();
  }
  return 0;
}
