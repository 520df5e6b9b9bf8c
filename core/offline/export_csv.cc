#include "core/offline/export_csv.h"

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <memory>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "core/io/output_file.h"

namespace graphsieve {
namespace {

void AppendId(uint64_t id, const absl::flat_hash_map<uint64_t, std::string>& names,
              std::string* out) {
  auto it = names.find(id);
  if (it == names.end()) {
    char buf[24];
    auto r = std::to_chars(buf, buf + sizeof(buf), id);
    out->append(buf, r.ptr);
    return;
  }
  const std::string& text = it->second;
  if (text.find_first_of(",\"\r\n") == std::string::npos) {
    out->append(text);
    return;
  }
  out->push_back('"');  // RFC 4180 quoting
  for (char c : text) {
    if (c == '"') out->push_back('"');
    out->push_back(c);
  }
  out->push_back('"');
}

void AppendFloat(float v, std::string* out) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof(buf), v);  // shortest round-trip form
  out->append(buf, r.ptr);
}

}  // namespace

absl::Status WriteExportCsv(const std::string& path, const PairTable& pairs,
                            const PipelineResult& result,
                            const absl::flat_hash_map<uint64_t, std::string>& user_names,
                            const absl::flat_hash_map<uint64_t, std::string>& item_names,
                            bool header) {
  const size_t n = pairs.num_pairs();
  if (result.geff.size() != n || result.hardness.size() != n || result.score.size() != n ||
      result.rate.size() != n) {
    return absl::InvalidArgumentError("export: per-pair result columns do not match the pairs");
  }
  absl::StatusOr<OutputFile> out = OutputFile::Resolve(path, "--export");
  if (!out.ok()) return out.status();
  const std::string& tmp = out->write_path();
  bool committed = false;
  const absl::Cleanup abandon = [&] {
    if (!committed) out->Abandon();
  };
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (f == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("--export: cannot create ", tmp, ": ", std::strerror(errno)));
  }
  std::string buf;
  buf.reserve(1 << 20);
  if (header) {
    buf.append(kExportHeader);
    buf.push_back('\n');
  }
  for (size_t i = 0; i < n; ++i) {
    AppendId(pairs.user_ids[pairs.pair_user[i]], user_names, &buf);
    buf.push_back(',');
    AppendId(pairs.item_ids[pairs.pair_item[i]], item_names, &buf);
    buf.push_back(',');
    buf.push_back(pairs.label[i] ? '1' : '0');
    buf.push_back(',');
    absl::StrAppend(&buf, pairs.instances[i]);
    buf.push_back(',');
    AppendFloat(result.geff[i], &buf);
    buf.push_back(',');
    AppendFloat(result.hardness[i], &buf);
    buf.push_back(',');
    AppendFloat(result.score[i], &buf);
    buf.push_back(',');
    AppendFloat(result.rate[i], &buf);
    buf.push_back('\n');
    if (buf.size() > (1 << 20) - 256 || i + 1 == n) {
      if (std::fwrite(buf.data(), 1, buf.size(), f.get()) != buf.size()) {
        return absl::ResourceExhaustedError(
            absl::StrCat("--export: write ", tmp, ": ", std::strerror(errno)));
      }
      buf.clear();
    }
  }
  if (!buf.empty() && std::fwrite(buf.data(), 1, buf.size(), f.get()) != buf.size()) {
    return absl::ResourceExhaustedError(
        absl::StrCat("--export: write ", tmp, ": ", std::strerror(errno)));
  }
  if (std::fflush(f.get()) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("--export: write ", tmp, ": ", std::strerror(errno)));
  }
  if (std::fclose(f.release()) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("--export: write ", tmp, ": ", std::strerror(errno)));
  }
  committed = true;  // Commit removes the temporary itself when the rename fails
  if (absl::Status s = out->Commit(); !s.ok())
    return absl::Status(s.code(), absl::StrCat("--export: ", s.message()));
  return absl::OkStatus();
}

std::string ExportPartPath(const std::string& path, int rank, int ranks) {
  return absl::StrFormat("%s.part-%05d-of-%05d", path, rank, ranks);
}

absl::Status JoinExportParts(const std::string& path, int ranks) {
  absl::StatusOr<OutputFile> target = OutputFile::Resolve(path, "--export");
  if (!target.ok()) return target.status();
  const std::string& tmp = target->write_path();
  bool committed = false;
  const absl::Cleanup abandon = [&] {
    if (!committed) target->Abandon();
  };
  std::unique_ptr<FILE, int (*)(FILE*)> out(std::fopen(tmp.c_str(), "wb"), &std::fclose);
  if (out == nullptr) {
    return absl::PermissionDeniedError(
        absl::StrCat("--export: cannot create ", tmp, ": ", std::strerror(errno)));
  }
  std::unique_ptr<char[]> buf(new char[1 << 20]);
  for (int r = 0; r < ranks; ++r) {
    const std::string part = ExportPartPath(path, r, ranks);
    std::unique_ptr<FILE, int (*)(FILE*)> in(std::fopen(part.c_str(), "rb"), &std::fclose);
    if (in == nullptr) {
      return absl::NotFoundError(
          absl::StrCat("--export: cannot open the part ", part, ": ", std::strerror(errno)));
    }
    size_t got = 0;
    while ((got = std::fread(buf.get(), 1, 1 << 20, in.get())) > 0) {
      if (std::fwrite(buf.get(), 1, got, out.get()) != got) {
        return absl::ResourceExhaustedError(
            absl::StrCat("--export: write ", tmp, ": ", std::strerror(errno)));
      }
    }
    if (std::ferror(in.get())) {
      return absl::DataLossError(
          absl::StrCat("--export: read the part ", part, ": ", std::strerror(errno)));
    }
  }
  if (std::fflush(out.get()) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("--export: write ", tmp, ": ", std::strerror(errno)));
  }
  if (std::fclose(out.release()) != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("--export: write ", tmp, ": ", std::strerror(errno)));
  }
  committed = true;  // Commit removes the temporary itself when the rename fails
  if (absl::Status s = target->Commit(); !s.ok()) {
    return absl::Status(s.code(), absl::StrCat("--export: ", s.message()));
  }
  RemoveExportParts(path, ranks);
  return absl::OkStatus();
}

void RemoveExportParts(const std::string& path, int ranks) {
  for (int r = 0; r < ranks; ++r) {
    const std::string part = ExportPartPath(path, r, ranks);
    std::remove(part.c_str());
    std::remove((part + ".tmp").c_str());
  }
  std::remove((path + ".tmp").c_str());
}

}  // namespace graphsieve
