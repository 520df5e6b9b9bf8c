// fuzz_log_reader: the impression-log reader through its public API
// (core/io/log_reader.h): CSV/TSV/pipe delimiters, quoting, headerless files,
// gzip (valid streams of fuzzed text and fuzzed raw bytes), MIND behaviors,
// label rules, id modes, bad-row skipping, tiny read buffers.
//
// Input layout: byte 0 dataset preset, byte 1 option bits, byte 2
// max_bad_rows, then one line of label-rule text, then the file's bytes.
// Contracts checked (each aborts when broken):
//   - on success the columns have equal lengths, labels are 0/1;
//   - reading the same file again appends exactly the same rows;
//   - on error the ImpressionLog's columns and counters are unchanged.
#include <cstdint>
#include <string>

#include "core/io/log_reader.h"
#include "fuzz/fuzz_util.h"

namespace graphsieve {
namespace {

struct Sizes {
  size_t users, items, labels, pilots;
  uint64_t bytes, rows, skipped;
  bool operator==(const Sizes& o) const {
    return users == o.users && items == o.items && labels == o.labels && pilots == o.pilots &&
           bytes == o.bytes && rows == o.rows && skipped == o.skipped;
  }
};

Sizes SizesOf(const ImpressionLog& log) {
  return {log.user_ids.size(), log.item_ids.size(), log.labels.size(),   log.pilot_scores.size(),
          log.bytes_read,      log.rows_read,       log.bad_rows_skipped};
}

void CheckColumns(const ImpressionLog& log, bool pilot) {
  fuzz::Check(log.user_ids.size() == log.item_ids.size(), "user/item column lengths differ");
  fuzz::Check(log.labels.size() == log.user_ids.size(), "label column length differs");
  fuzz::Check(pilot ? log.pilot_scores.size() == log.user_ids.size() : log.pilot_scores.empty(),
              "pilot column length differs");
  for (uint8_t l : log.labels) fuzz::Check(l <= 1, "label is not 0/1");
}

LogReaderOptions OptionsFrom(fuzz::Input& in, bool* gzip, bool* pilot) {
  static constexpr const char* kPresets[] = {"graphsieve", "movielens", "kuairec", "mind"};
  LogReaderOptions options;
  const uint8_t preset = in.Byte();
  if (preset % 5 < 4) (void)ApplyDatasetPreset(kPresets[preset % 5], &options);
  const uint8_t bits = in.Byte();
  options.id_mode = static_cast<IdMode>((bits & 3) % 3);
  *gzip = bits & 4;
  options.decompress_in_background = bits & 8;
  options.keep_id_names = bits & 16;
  *pilot = bits & 32;
  if (*pilot) options.pilot_column = "pilot_score";
  static constexpr char kDelimiters[] = {'\0', ',', '\t', '|'};
  if (options.format == LogFormat::kDelimited && options.column_names.empty()) {
    options.delimiter = kDelimiters[bits >> 6];
  }
  options.max_bad_rows = in.Byte() % 4;
  const std::string_view rule_text = in.Line();
  if (!rule_text.empty()) {
    absl::StatusOr<LabelRule> rule = LabelRule::Parse(rule_text);
    if (rule.ok()) {
      // ToString() must parse back to the same rule.
      absl::StatusOr<LabelRule> again = LabelRule::Parse(rule->ToString());
      fuzz::Check(again.ok() && again->column == rule->column && again->op == rule->op &&
                      again->threshold == rule->threshold,
                  "LabelRule::ToString does not parse back to the same rule");
      options.label = *rule;
    }
  }
  // Small buffers so that lines straddle refills and the buffer has to grow.
  options.read_buffer_bytes = 4096;
  options.max_line_bytes = 16384;
  return options;
}

}  // namespace
}  // namespace graphsieve

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphsieve;
  fuzz::Input in(data, size);
  bool gzip = false, pilot = false;
  const LogReaderOptions options = OptionsFrom(in, &gzip, &pilot);
  if (!options.Validate().ok()) return 0;
  const std::string path = fuzz::ScratchDir() + "/log";
  fuzz::WriteFileOrDie(path, gzip ? fuzz::Gzip(in.Rest()) : std::string(in.Rest()));

  ImpressionLog log;
  const absl::Status first = ReadImpressionLog(path, options, &log);
  const Sizes after_first = SizesOf(log);
  if (!first.ok()) {
    fuzz::Check(after_first == Sizes{}, "a failed read left rows or counters in the log");
    fuzz::Check(!first.message().empty(), "an error without a message");
    return 0;
  }
  CheckColumns(log, pilot);
  const absl::Status second = ReadImpressionLog(path, options, &log);
  fuzz::Check(second.ok(), "the same file read once fine and then failed");
  CheckColumns(log, pilot);
  fuzz::Check(log.size() == 2 * after_first.users && log.rows_read == 2 * after_first.rows,
              "reading the same file twice did not append the same rows");
  for (size_t i = 0; i < after_first.users; ++i) {
    const size_t j = i + after_first.users;
    fuzz::Check(log.user_ids[i] == log.user_ids[j] && log.item_ids[i] == log.item_ids[j] &&
                    log.labels[i] == log.labels[j],
                "the same file read twice gave different rows");
  }
  return 0;
}
