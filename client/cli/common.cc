// Helpers shared by the subcommands (commands.h).
#include <charconv>
#include <fstream>
#include <iostream>

#include "absl/flags/flag.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "client/cli/commands.h"
#include "client/cli/flags.h"
#include "core/cli/log_flags.h"

namespace graphsieve {

absl::StatusOr<std::unique_ptr<SamplingRateClient>> ClientFromFlags(const std::string& target,
                                                                    const char* target_flag) {
  if (target.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", target_flag, " HOST:PORT is required"));
  }
  SamplingRateClientOptions options;
  options.target = target;
  options.deadline_seconds = absl::GetFlag(FLAGS_deadline_seconds);
  if (!(options.deadline_seconds > 0 && options.deadline_seconds <= kMaxDeadlineSeconds)) {
    return absl::InvalidArgumentError(absl::StrCat("--deadline-seconds must be in (0, ",
                                                   kMaxDeadlineSeconds, "] (one day), got ",
                                                   options.deadline_seconds));
  }
  const int64_t batch = absl::GetFlag(FLAGS_max_batch_pairs);
  if (batch < 1) {
    return absl::InvalidArgumentError(absl::StrCat("--max-batch-pairs must be >= 1, got ", batch));
  }
  options.max_batch_pairs = static_cast<size_t>(batch);
  options.max_attempts = absl::GetFlag(FLAGS_max_attempts);
  options.tls_root_cert_path = absl::GetFlag(FLAGS_tls_root_cert);
  options.tls_server_name_override = absl::GetFlag(FLAGS_tls_server_name);
  if (!options.tls_server_name_override.empty() && options.tls_root_cert_path.empty()) {
    return absl::InvalidArgumentError(
        "--tls-server-name needs --tls-root-cert (without it the CLI speaks plaintext)");
  }
  if (absl::Status s = options.Validate(); !s.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("connection flags: ", s.message()));
  }
  absl::StatusOr<std::unique_ptr<SamplingRateClient>> client = SamplingRateClient::Create(options);
  if (!client.ok() && absl::StartsWith(client.status().message(), "TLS root cert")) {
    return absl::Status(client.status().code(),
                        absl::StrCat("--tls-root-cert: ", client.status().message()));
  }
  return client;
}

absl::StatusOr<LogReaderOptions> LogOptionsFromFlags() {
  LogReaderOptions base;
  base.keep_id_names = false;
  return LogReaderOptionsFromFlags(base, /*read_pilot=*/false);
}

absl::StatusOr<std::string> PairsInputFromFlags(bool default_is_stdin) {
  const std::string input = absl::GetFlag(FLAGS_input);
  const std::string pairs = absl::GetFlag(FLAGS_pairs);
  if (pairs.empty()) return input == "-" && !default_is_stdin ? std::string() : input;
  return MergeAliasFlag("input", input, "pairs", pairs, "-");
}

int Fail(const char* command, const absl::Status& status, int exit_code) {
  std::cerr << "graphsieve " << command << ": " << status.message() << " ["
            << absl::StatusCodeToString(status.code()) << "]\n";
  return exit_code;
}

CommandOutput::~CommandOutput() {
  if (file_ && !finished_) {
    out_.close();
    file_->Abandon();
  }
}

absl::Status CommandOutput::Open(const std::string& path, const std::string& input) {
  if (path.empty() || path == "-") return absl::OkStatus();
  if (absl::Status s = RefuseOutputOverInput(path, "--output", input, "--input"); !s.ok()) return s;
  absl::StatusOr<OutputFile> file = OutputFile::Resolve(path, "--output");
  if (!file.ok()) return file.status();
  out_.open(file->write_path(), std::ios::binary | std::ios::trunc);
  if (!out_) {
    file->Abandon();
    return absl::InvalidArgumentError(absl::StrCat("--output: cannot write '", path, "'"));
  }
  file_ = *std::move(file);
  return absl::OkStatus();
}

absl::Status CommandOutput::Finish() {
  finished_ = true;
  if (!file_) {
    std::cout.flush();
    return std::cout ? absl::OkStatus() : absl::UnavailableError("--output: write failed");
  }
  out_.close();
  if (!out_) {
    file_->Abandon();
    return absl::UnavailableError(
        absl::StrCat("--output: write to '", file_->final_path(), "' failed"));
  }
  return file_->Commit();
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
