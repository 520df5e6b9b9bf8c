// fuzz_manifest: MANIFEST.json parsing (core/snapshot/manifest.h) and the
// other JSON/binary decoders of snapshot metadata (format.h: the unseen-model
// JSON of the meta column family, node values). Every input must give a
// status, never a crash or an exception; accepted manifests are checked for
// the invariants the reader relies on.
#include <cstdint>
#include <string>
#include <vector>

#include "core/snapshot/format.h"
#include "core/snapshot/manifest.h"
#include "fuzz/fuzz_util.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace graphsieve;
  const absl::string_view text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<snapshot::ParsedManifest> m = snapshot::ParseManifest(text, "MANIFEST.json");
  if (m.ok()) {
    fuzz::Check(!m->files.empty(), "accepted a manifest without files");
    for (const snapshot::ManifestFileEntry& f : m->files) {
      fuzz::Check(!f.path.empty() && f.path[0] != '/' && f.path.find("..") == std::string::npos,
                  "accepted a file path outside the version directory");
    }
    fuzz::Check(m->summary.json.size() == size, "summary.json is not the manifest text");
  } else {
    fuzz::Check(!m.status().message().empty(), "an error without a message");
  }

  absl::StatusOr<UnseenModel> model = snapshot::DecodeUnseenModel(text);
  if (!model.ok()) fuzz::Check(!model.status().message().empty(), "an error without a message");

  // A node value with a sketch of 0..7 floats (the length is part of the input).
  std::vector<float> sketch(size % 8);
  NodeRecord record;
  (void)snapshot::DecodeNodeValue(text, &record, absl::MakeSpan(sketch));
  return 0;
}
