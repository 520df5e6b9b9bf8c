// Helpers shared by the subcommands (commands.h).
#include <charconv>
#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "client/cli/commands.h"
#include "client/cli/flags.h"

namespace graphsieve {

absl::StatusOr<std::unique_ptr<SamplingRateClient>> ClientFromFlags(const std::string& target,
                                                                    const char* target_flag) {
  if (target.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", target_flag, " HOST:PORT is required"));
  }
  SamplingRateClientOptions options;
  options.target = target;
  options.deadline_seconds = absl::GetFlag(FLAGS_deadline_seconds);
  const int64_t batch = absl::GetFlag(FLAGS_max_batch_pairs);
  if (batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--max-batch-pairs must be >= 1, got ", batch));
  }
  options.max_batch_pairs = static_cast<size_t>(batch);
  options.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  options.tls_root_cert_path = absl::GetFlag(FLAGS_tls_root_cert);
  options.tls_server_name_override = absl::GetFlag(FLAGS_tls_server_name);
  if (absl::Status s = options.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("connection flags: ", s.message()));
  }
  return SamplingRateClient::Create(options);
}

absl::StatusOr<LogReaderOptions> LogOptionsFromFlags() {
  LogReaderOptions options;
  const std::string dataset = absl::GetFlag(FLAGS_dataset);
  if (!dataset.empty()) {
    if (absl::Status s = ApplyDatasetPreset(dataset, &options); !s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--dataset: ", s.message()));
    }
  }
  // Explicit flags override the preset (a flag left at its default does not).
  auto overridden = [](const std::string& value, const char* def) { return value != def; };
  if (dataset.empty() || overridden(absl::GetFlag(FLAGS_user_column), "user_id")) {
    options.user_column = absl::GetFlag(FLAGS_user_column);
  }
  if (dataset.empty() || overridden(absl::GetFlag(FLAGS_item_column), "item_id")) {
    options.item_column = absl::GetFlag(FLAGS_item_column);
  }
  if (dataset.empty() || overridden(absl::GetFlag(FLAGS_label), "label")) {
    absl::StatusOr<LabelRule> rule = LabelRule::Parse(absl::GetFlag(FLAGS_label));
    if (!rule.ok())
      return absl::InvalidArgumentError(absl::StrCat("--label: ", rule.status().message()));
    options.label = *rule;
  }
  const std::string delimiter = absl::GetFlag(FLAGS_delimiter);
  if (delimiter == "tab" || delimiter == "\\t") {
    options.delimiter = '\t';
  } else if (delimiter.size() == 1) {
    options.delimiter = delimiter[0];
  } else if (!delimiter.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--delimiter must be one character or 'tab', got '", delimiter, "'"));
  }
  absl::StatusOr<IdMode> mode = ParseIdMode(absl::GetFlag(FLAGS_id_mode));
  if (!mode.ok())
    return absl::InvalidArgumentError(absl::StrCat("--id-mode: ", mode.status().message()));
  options.id_mode = *mode;
  options.keep_id_names = false;
  if (absl::Status s = options.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("log flags: ", s.message()));
  }
  return options;
}

int Fail(const char* command, const absl::Status& status, int exit_code) {
  std::cerr << "graphsieve " << command << ": " << status.message() << " ["
            << absl::StatusCodeToString(status.code()) << "]\n";
  return exit_code;
}

absl::StatusOr<std::ostream*> OpenOutput(const std::string& path,
                                         std::unique_ptr<std::ostream>* holder) {
  if (path.empty() || path == "-") return &std::cout;
  auto file = std::make_unique<std::ofstream>(path, std::ios::binary | std::ios::trunc);
  if (!*file)
    return absl::InvalidArgumentError(absl::StrCat("--output: cannot write '", path, "'"));
  *holder = std::move(file);
  return holder->get();
}

const char* SourceName(int source) {
  switch (source) {
    case v1::RATE_SOURCE_EXACT:
      return "EXACT";
    case v1::RATE_SOURCE_INFERRED:
      return "INFERRED";
    case v1::RATE_SOURCE_DEFAULT:
      return "DEFAULT";
    default:
      return "UNSPECIFIED";
  }
}

std::string FloatText(float v) {
  char buf[32];
  const auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : absl::StrCat(v);
}

}  // namespace graphsieve
