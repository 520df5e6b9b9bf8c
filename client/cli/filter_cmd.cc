// graphsieve filter: streams an impression log through the server and writes
// the kept rows with an added `rate` column; reports the kept fraction of
// negatives against the served mean rate (its expectation).
#include <charconv>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands.h"
#include "client/cli/flags.h"
#include "client/delimited_stream.h"
#include "client/ingestion_filter.h"
#include "nlohmann/json.hpp"

namespace graphsieve {
namespace {

struct Batch {
  std::vector<std::string> lines;
  std::vector<uint64_t> users, items, keys;
  std::vector<uint8_t> labels;
  void Clear() {
    lines.clear();
    users.clear();
    items.clear();
    keys.clear();
    labels.clear();
  }
};

struct FilterTotals {
  uint64_t rows = 0, positives = 0, negatives = 0, kept_negatives = 0, written = 0;
  uint64_t exact = 0, inferred = 0, by_default = 0;
  double sum_rate = 0, sum_var = 0;  // over negatives: Σ r, Σ r(1 - r)
  std::vector<std::string> versions;
};

absl::Status FlushBatch(const IngestionFilter& filter, char delimiter, Batch* b, std::ostream* out,
                        FilterTotals* t) {
  if (b->users.empty()) return absl::OkStatus();
  absl::StatusOr<FilterDecisions> d = filter.Decide(b->users, b->items, b->labels, b->keys);
  if (!d.ok()) return d.status();
  for (size_t i = 0; i < b->users.size(); ++i) {
    const float r = d->rates[i];
    t->exact += d->sources[i] == v1::RATE_SOURCE_EXACT;
    t->inferred += d->sources[i] == v1::RATE_SOURCE_INFERRED;
    t->by_default += d->sources[i] == v1::RATE_SOURCE_DEFAULT;
    if (b->labels[i]) {
      ++t->positives;
    } else {
      ++t->negatives;
      t->sum_rate += r;
      t->sum_var += static_cast<double>(r) * (1.0 - r);
      t->kept_negatives += d->keep[i];
    }
    if (d->keep[i]) {
      *out << b->lines[i] << delimiter << FloatText(r) << '\n';
      ++t->written;
    }
  }
  t->rows += b->users.size();
  for (const std::string& v : d->snapshot_versions) {
    if (std::find(t->versions.begin(), t->versions.end(), v) == t->versions.end()) {
      t->versions.push_back(v);
    }
  }
  b->Clear();
  if (!*out) return absl::UnavailableError("--output: write failed");
  return absl::OkStatus();
}

void PrintSummary(const FilterTotals& t, const std::string& input, bool json) {
  const double n = std::max<double>(1.0, static_cast<double>(t.negatives));
  const double kept = t.kept_negatives / n, expected = t.sum_rate / n;
  const double bound = 4.0 * std::sqrt(t.sum_var) / n;
  if (json) {
    nlohmann::json j = {
        {"input", input},
        {"rows", t.rows},
        {"positives", t.positives},
        {"negatives", t.negatives},
        {"kept_negatives", t.kept_negatives},
        {"rows_written", t.written},
        {"kept_fraction_of_negatives", kept},
        {"served_mean_rate_of_negatives", expected},
        {"four_sigma_bound", bound},
        {"within_bound", std::fabs(kept - expected) <= bound},
        {"sources", {{"exact", t.exact}, {"inferred", t.inferred}, {"default", t.by_default}}},
        {"snapshot_versions", t.versions}};
    std::cerr << j.dump(2) << '\n';
    return;
  }
  std::cerr << absl::StrFormat(
      "graphsieve filter: %d rows (%d positive, %d negative) from %s; snapshot %s\n"
      "  sources: EXACT %d, INFERRED %d, DEFAULT %d\n"
      "  kept %d of %d negatives: kept fraction %.6f; served mean rate %.6f (its expectation);\n"
      "  |difference| %.6f, 4-sigma bound %.6f (%s)\n"
      "  rows written: %d (every positive, the kept negatives)\n",
      t.rows, t.positives, t.negatives, input,
      t.versions.empty() ? "(none)" : absl::StrJoin(t.versions, ", "), t.exact, t.inferred,
      t.by_default, t.kept_negatives, t.negatives, kept, expected, std::fabs(kept - expected),
      bound, std::fabs(kept - expected) <= bound ? "within" : "OUTSIDE", t.written);
}

}  // namespace

int RunFilter() {
  const std::string input = absl::GetFlag(FLAGS_input);
  if (input.empty()) return Fail("filter", absl::InvalidArgumentError("--input LOG is required"));
  absl::StatusOr<std::unique_ptr<SamplingRateClient>> client =
      ClientFromFlags(absl::GetFlag(FLAGS_server), "server");
  if (!client.ok()) return Fail("filter", client.status());
  IngestionFilterOptions filter_options;
  const std::string decide = absl::GetFlag(FLAGS_decide);
  if (decide == "local") {
    filter_options.mode = IngestionFilterOptions::Mode::kLocal;
  } else if (decide != "server") {
    return Fail("filter", absl::InvalidArgumentError(absl::StrCat(
                              "--decide must be 'server' or 'local', got '", decide, "'")));
  }
  absl::StatusOr<std::unique_ptr<IngestionFilter>> filter =
      IngestionFilter::Create(client->get(), filter_options);
  if (!filter.ok()) return Fail("filter", filter.status());
  const int64_t batch_rows = absl::GetFlag(FLAGS_batch_rows);
  if (batch_rows < 1) {
    return Fail("filter", absl::InvalidArgumentError(
                              absl::StrCat("--batch-rows must be >= 1, got ", batch_rows)));
  }
  absl::StatusOr<LogReaderOptions> log_options = LogOptionsFromFlags();
  if (!log_options.ok()) return Fail("filter", log_options.status());
  absl::StatusOr<std::unique_ptr<DelimitedStream>> in = DelimitedStream::Open(input, *log_options);
  if (!in.ok()) return Fail("filter", in.status());
  DelimitedStream& log = **in;
  absl::StatusOr<size_t> user_col =
      log.Column(log_options->user_column, "--user-col (or --user-column)");
  if (!user_col.ok()) return Fail("filter", user_col.status());
  absl::StatusOr<size_t> item_col =
      log.Column(log_options->item_column, "--item-col (or --item-column)");
  if (!item_col.ok()) return Fail("filter", item_col.status());
  absl::StatusOr<size_t> label_col =
      log.Column(log_options->label.column,
                 log_options->label.op == LabelRule::Op::kBinary ? "--label-col" : "--label-rule");
  if (!label_col.ok()) return Fail("filter", label_col.status());
  int key_col = -1;
  const std::string key_column = absl::GetFlag(FLAGS_instance_key_column);
  if (!key_column.empty()) {
    absl::StatusOr<size_t> k = log.Column(key_column, "--instance-key-column");
    if (!k.ok()) return Fail("filter", k.status());
    key_col = static_cast<int>(*k);
  }
  CommandOutput output;
  if (absl::Status s = output.Open(absl::GetFlag(FLAGS_output), input); !s.ok()) {
    return Fail("filter", s);
  }
  std::ostream* out = &output.stream();
  const char delim = log.delimiter();
  if (log.has_header())
    *out << absl::StrJoin(log.columns(), std::string(1, delim)) << delim << "rate\n";

  Batch batch;
  FilterTotals totals;
  auto column_error = [&](const std::string& column, const absl::Status& s) {
    return Fail("filter", absl::InvalidArgumentError(
                              absl::StrCat(log.Where(), "column '", column, "': ", s.message())));
  };
  while (true) {
    absl::StatusOr<bool> more = log.Next();
    if (!more.ok()) return Fail("filter", more.status());
    if (!*more) break;
    const auto& f = log.fields();
    absl::StatusOr<uint64_t> user = ParseId(f[*user_col], log_options->id_mode);
    if (!user.ok()) return column_error(log_options->user_column, user.status());
    absl::StatusOr<uint64_t> item = ParseId(f[*item_col], log_options->id_mode);
    if (!item.ok()) return column_error(log_options->item_column, item.status());
    absl::StatusOr<bool> label = EvaluateLabel(log_options->label, f[*label_col]);
    if (!label.ok())
      return Fail("filter",
                  absl::InvalidArgumentError(absl::StrCat(log.Where(), label.status().message())));
    uint64_t key = 0;
    if (key_col >= 0) {
      absl::StatusOr<uint64_t> k = ParseId(f[key_col], IdMode::kAuto);
      if (!k.ok()) return column_error(key_column, k.status());
      key = *k;
    } else {
      const std::string_view line = log.line();
      key = HashStringId(
          absl::StrCat(log.line_number(), "\t", absl::string_view(line.data(), line.size())));
    }
    batch.lines.emplace_back(log.line());
    batch.users.push_back(*user);
    batch.items.push_back(*item);
    batch.labels.push_back(*label ? 1 : 0);
    batch.keys.push_back(key);
    if (batch.users.size() >= static_cast<size_t>(batch_rows)) {
      if (absl::Status s = FlushBatch(**filter, delim, &batch, out, &totals); !s.ok()) {
        return Fail("filter", s);
      }
    }
  }
  if (absl::Status s = FlushBatch(**filter, delim, &batch, out, &totals); !s.ok()) {
    return Fail("filter", s);
  }
  if (absl::Status s = output.Finish(); !s.ok()) return Fail("filter", s);
  PrintSummary(totals, log.path(), absl::GetFlag(FLAGS_json));
  return kExitOk;
}

}  // namespace graphsieve
