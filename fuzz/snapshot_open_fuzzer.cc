// fuzz_snapshot_open: VersionOpener::OpenStored (core/snapshot/version_opener.h)
// on a real snapshot version in which one file (any file of the version:
// MANIFEST.json, RocksDB's CURRENT/MANIFEST/OPTIONS, every SST) is replaced by
// the fuzz input. Two templates are written at start-up with the real writer
// (block-based and cuckoo pairs tables).
//
// Input layout: byte 0 mode bits (bit 0 template, bit 1 "re-seal": write the
// new file's size and XXH3-64 into MANIFEST.json so the content reaches
// RocksDB and the decoders, bit 2 lookup kRocksDb instead of kMemory),
// byte 1 the file index (modulo the number of files), then the new content.
// Contracts checked: without re-sealing, any change to a file the manifest
// lists is rejected at open; an accepted version answers lookups without
// crashing; errors carry a message.
//
// GRAPHSIEVE_FUZZ_WRITE_SEEDS=<dir> writes one seed per file of each
// template into <dir> and exits (how fuzz/corpus/snapshot_open was made).
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/snapshot/file_util.h"
#include "core/snapshot/manifest.h"
#include "core/snapshot/snapshot_reader.h"
#include "core/snapshot/snapshot_writer.h"
#include "core/snapshot/version_opener.h"
#include "fuzz/fuzz_util.h"
#include "nlohmann/json.hpp"
#include "tests/snapshot/synthetic.h"

namespace graphsieve {
namespace {

constexpr char kVersion[] = "20261125T224501Z-0000f022";

struct Template {
  std::string root;                    // <scratch>/<name>; the version is root/kVersion
  std::vector<std::string> files;      // relative to the version dir, sorted
  std::vector<std::string> contents;   // original bytes of each file
  std::string manifest;                // original MANIFEST.json
  std::vector<uint64_t> users, items;  // some stored pairs, for lookups
};

std::string VersionDir(const Template& t) { return t.root + "/" + kVersion; }

Template MakeTemplate(const std::string& name, snapshot::TableFormat format) {
  Template t;
  t.root = fuzz::ScratchDir() + "/" + name;
  (void)snapshot::RemoveTree(t.root);
  fuzz::Check(::mkdir(t.root.c_str(), 0700) == 0, "mkdir template root");
  testing_util::Synthetic s = testing_util::MakeSynthetic(6, 5, 3, /*seed=*/7, /*sketch_dim=*/2);
  s.info.version = kVersion;
  SnapshotWriterOptions options;
  options.pairs_format = format;
  options.threads = 1;
  auto stats = WriteSnapshotDir(VersionDir(t), s.pairs, s.result, s.info, options);
  fuzz::Check(stats.ok(), "writing the template snapshot failed");
  auto files = snapshot::ListFilesRecursive(VersionDir(t));
  fuzz::Check(files.ok(), "listing the template snapshot failed");
  t.files = *files;
  for (const std::string& f : t.files) {
    auto text = snapshot::ReadFileToString(VersionDir(t) + "/" + f);
    fuzz::Check(text.ok(), "reading the template snapshot failed");
    t.contents.push_back(*text);
    if (f == snapshot::kManifestFile) t.manifest = *text;
  }
  for (size_t k = 0; k < s.pairs.pair_user.size(); k += 2) {
    t.users.push_back(s.pairs.user_ids[s.pairs.pair_user[k]]);
    t.items.push_back(s.pairs.item_ids[s.pairs.pair_item[k]]);
  }
  t.users.push_back(12345);  // and a pair that is not stored
  t.items.push_back(678);
  return t;
}

std::vector<Template>& Templates() {
  static auto* t =
      new std::vector<Template>{MakeTemplate("block", snapshot::TableFormat::kBlockBased),
                                MakeTemplate("cuckoo", snapshot::TableFormat::kCuckoo)};
  return *t;
}

// MANIFEST.json with `file`'s size and digest replaced by those of `content`.
std::string Reseal(const std::string& manifest, const std::string& file,
                   const std::string& content) {
  nlohmann::json m = nlohmann::json::parse(manifest);
  for (auto& f : m["files"]) {
    if (f["path"] == file) {
      f["size_bytes"] = content.size();
      f["xxh3"] = snapshot::Hex64(XXH3_64bits(content.data(), content.size()));
    }
  }
  return m.dump(2);
}

void Exercise(const SnapshotReader& reader, const Template& t) {
  const size_t n = t.users.size();
  std::unique_ptr<bool[]> found(new bool[n]);
  std::vector<float> rates(n);
  (void)reader.LookupPairs(t.users, t.items, absl::MakeSpan(found.get(), n), absl::MakeSpan(rates));
  std::vector<float> sketch(reader.model().sketch_dim);
  NodeRecord record;
  for (size_t k = 0; k < n; ++k) {
    (void)reader.LookupUser(t.users[k], &record, absl::MakeSpan(sketch));
    (void)reader.LookupItem(t.items[k], &record, absl::MakeSpan(sketch));
  }
  uint64_t pairs = 0;
  (void)reader.ForEachPair([&](uint64_t, uint64_t, float) { ++pairs; });
}

}  // namespace
}  // namespace graphsieve

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  using namespace graphsieve;
  const char* seeds = std::getenv("GRAPHSIEVE_FUZZ_WRITE_SEEDS");
  if (seeds == nullptr) return 0;
  int n = 0;
  for (size_t which = 0; which < Templates().size(); ++which) {
    const Template& t = Templates()[which];
    for (size_t k = 0; k < t.files.size(); ++k) {
      std::string seed;
      seed.push_back(static_cast<char>(which));  // not re-sealed, memory lookups
      seed.push_back(static_cast<char>(k));
      seed += t.contents[k];
      fuzz::WriteFileOrDie(std::string(seeds) + "/" + std::to_string(n++), seed);
    }
  }
  std::fprintf(stderr, "wrote %d seeds to %s\n", n, seeds);
  std::exit(0);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphsieve;
  fuzz::Input in(data, size);
  const uint8_t mode = in.Byte();
  const Template& t = Templates()[mode & 1];
  const bool reseal = mode & 2;
  const size_t k = in.Byte() % t.files.size();
  const std::string& file = t.files[k];
  const std::string content(in.Rest());
  const bool is_manifest = file == snapshot::kManifestFile;
  const std::string dir = VersionDir(t);

  fuzz::WriteFileOrDie(dir + "/" + file, content);
  if (reseal && !is_manifest) {
    fuzz::WriteFileOrDie(dir + "/" + snapshot::kManifestFile, Reseal(t.manifest, file, content));
  }
  SnapshotReaderOptions options;
  options.lookup = (mode & 4) ? LookupMode::kRocksDb : LookupMode::kMemory;
  options.block_cache_bytes = 1 << 20;
  auto reader = VersionOpener().OpenStored(t.root, kVersion, options);
  if (reader.ok()) {
    const bool listed = t.manifest.find("\"" + file + "\"") != std::string::npos;
    fuzz::Check(reseal || is_manifest || !listed || content == t.contents[k],
                "a changed file that MANIFEST.json lists was accepted without re-sealing");
    Exercise(**reader, t);
  } else {
    fuzz::Check(!reader.status().message().empty(), "an error without a message");
  }
  reader = absl::UnknownError("released");  // close RocksDB before restoring the files
  fuzz::WriteFileOrDie(dir + "/" + file, t.contents[k]);
  if (reseal && !is_manifest) {
    fuzz::WriteFileOrDie(dir + "/" + snapshot::kManifestFile, t.manifest);
  }
  return 0;
}
