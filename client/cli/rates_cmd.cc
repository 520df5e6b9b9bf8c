// graphsieve rates: pairs in, CSV user_id,item_id,rate,source out.
#include <charconv>
#include <iostream>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "client/cli/commands.h"
#include "client/cli/flags.h"
#include "client/delimited_stream.h"

namespace graphsieve {
namespace {

struct Pending {
  std::vector<std::string> user_text, item_text;
  std::vector<uint64_t> users, items;
  void Clear() {
    user_text.clear();
    item_text.clear();
    users.clear();
    items.clear();
  }
};

struct Totals {
  uint64_t pairs = 0, exact = 0, inferred = 0, by_default = 0;
  std::vector<std::string> versions;
};

absl::Status Flush(const SamplingRateClient& client, bool with_version, Pending* p,
                   std::ostream* out, Totals* totals) {
  if (p->users.empty()) return absl::OkStatus();
  absl::StatusOr<RateBatch> batch = client.GetRates(p->users, p->items);
  if (!batch.ok()) return batch.status();
  const std::string version = absl::StrJoin(batch->snapshot_versions, "+");
  for (size_t i = 0; i < batch->size(); ++i) {
    *out << p->user_text[i] << ',' << p->item_text[i] << ',' << FloatText(batch->rates[i]) << ','
         << SourceName(batch->sources[i]);
    if (with_version) *out << ',' << version;
    *out << '\n';
    totals->exact += batch->sources[i] == v1::RATE_SOURCE_EXACT;
    totals->inferred += batch->sources[i] == v1::RATE_SOURCE_INFERRED;
    totals->by_default += batch->sources[i] == v1::RATE_SOURCE_DEFAULT;
  }
  totals->pairs += batch->size();
  for (const std::string& v : batch->snapshot_versions) {
    if (std::find(totals->versions.begin(), totals->versions.end(), v) == totals->versions.end()) {
      totals->versions.push_back(v);
    }
  }
  p->Clear();
  if (!*out) return absl::UnavailableError("--output: write failed");
  return absl::OkStatus();
}

// Quotes a CSV field when it needs it.
std::string CsvField(std::string_view text) {
  if (text.find_first_of(",\"\n") == std::string_view::npos) return std::string(text);
  std::string out = "\"";
  for (char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

}  // namespace

int RunRates() {
  absl::StatusOr<std::unique_ptr<SamplingRateClient>> client =
      ClientFromFlags(absl::GetFlag(FLAGS_server), "server");
  if (!client.ok()) return Fail("rates", client.status());
  absl::StatusOr<LogReaderOptions> log_options = LogOptionsFromFlags();
  if (!log_options.ok()) return Fail("rates", log_options.status());
  absl::StatusOr<std::string> input = PairsInputFromFlags(/*default_is_stdin=*/true);
  if (!input.ok()) return Fail("rates", input.status());
  absl::StatusOr<std::unique_ptr<DelimitedStream>> in = DelimitedStream::Open(*input, *log_options);
  if (!in.ok()) return Fail("rates", in.status());
  absl::StatusOr<size_t> user_col =
      (*in)->Column(log_options->user_column, "--user-col (or --user-column)");
  if (!user_col.ok()) return Fail("rates", user_col.status());
  absl::StatusOr<size_t> item_col =
      (*in)->Column(log_options->item_column, "--item-col (or --item-column)");
  if (!item_col.ok()) return Fail("rates", item_col.status());
  CommandOutput output;
  if (absl::Status s = output.Open(absl::GetFlag(FLAGS_output), *input); !s.ok()) {
    return Fail("rates", s);
  }
  std::ostream* out = &output.stream();
  const bool with_version = absl::GetFlag(FLAGS_with_version);
  *out << "user_id,item_id,rate,source" << (with_version ? ",snapshot_version" : "") << '\n';

  const size_t flush_rows = std::max<size_t>(1, (*client)->options().max_batch_pairs);
  Pending pending;
  Totals totals;
  while (true) {
    absl::StatusOr<bool> more = (*in)->Next();
    if (!more.ok()) return Fail("rates", more.status());
    if (!*more) break;
    const auto& f = (*in)->fields();
    absl::StatusOr<uint64_t> user = ParseId(f[*user_col], log_options->id_mode);
    if (!user.ok()) {
      return Fail("rates", absl::InvalidArgumentError(
                               absl::StrCat((*in)->Where(), "column '", log_options->user_column,
                                            "': ", user.status().message())));
    }
    absl::StatusOr<uint64_t> item = ParseId(f[*item_col], log_options->id_mode);
    if (!item.ok()) {
      return Fail("rates", absl::InvalidArgumentError(
                               absl::StrCat((*in)->Where(), "column '", log_options->item_column,
                                            "': ", item.status().message())));
    }
    pending.users.push_back(*user);
    pending.items.push_back(*item);
    pending.user_text.push_back(CsvField(f[*user_col]));
    pending.item_text.push_back(CsvField(f[*item_col]));
    if (pending.users.size() >= flush_rows) {
      if (absl::Status s = Flush(**client, with_version, &pending, out, &totals); !s.ok()) {
        return Fail("rates", s);
      }
    }
  }
  if (absl::Status s = Flush(**client, with_version, &pending, out, &totals); !s.ok()) {
    return Fail("rates", s);
  }
  if (absl::Status s = output.Finish(); !s.ok()) return Fail("rates", s);
  std::cerr << "graphsieve rates: " << totals.pairs << " pairs (EXACT " << totals.exact
            << ", INFERRED " << totals.inferred << ", DEFAULT " << totals.by_default
            << ") from snapshot "
            << (totals.versions.empty() ? "(none: no pairs)" : absl::StrJoin(totals.versions, ", "))
            << " of " << (*client)->options().target << '\n';
  return kExitOk;
}

}  // namespace graphsieve
