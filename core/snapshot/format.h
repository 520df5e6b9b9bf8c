// The on-disk layout of one snapshot version (docs/DESIGN.md §3, docs/SNAPSHOT.md):
// key and value encodings, column family names, the RocksDB options that the
// writer and the reader must agree on, and RocksDB → absl status conversion.
//
// Thread-safety: all functions are pure.
#ifndef GRAPHSIEVE_CORE_SNAPSHOT_FORMAT_H_
#define GRAPHSIEVE_CORE_SNAPSHOT_FORMAT_H_

#include <cstdint>
#include <cstring>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/records/node_record.h"
#include "core/records/unseen_model.h"
#include "rocksdb/options.h"
#include "rocksdb/status.h"

namespace graphsieve {
namespace snapshot {

// Bumped on any incompatible change of the layout below. Readers refuse
// values outside [kOldestReadableFormatVersion, kFormatVersion] with
// FAILED_PRECONDITION.
//   1: the first layout.
//   2: meta/unseen_model carries the rate rule (mixture), κ and h̄, and a
//      version may hold index.gsi and parts. A format-1 reader would score
//      INFERRED pairs of such a version with the floor rule — silently wrong —
//      so it must refuse it; this reader still reads format 1 (as the floor
//      rule, without an index file).
inline constexpr int kFormatVersion = 2;
inline constexpr int kOldestReadableFormatVersion = 1;

// index.gsi (docs/SNAPSHOT.md "The serving index file"): 2 stores the 28-byte
// node record; 1 (formats 2 and older) the 20-byte one, still read.
inline constexpr uint32_t kIndexFileFormatVersion = 2;
inline constexpr uint32_t kOldestIndexFileFormatVersion = 1;

inline constexpr char kManifestFile[] = "MANIFEST.json";
inline constexpr char kDbDir[] = "db";
inline constexpr char kPairsCf[] = "pairs";
inline constexpr char kNodesCf[] = "nodes";
inline constexpr char kMetaCf[] = "meta";
inline constexpr char kMetaUnseenModelKey[] = "unseen_model";

inline constexpr size_t kPairKeyBytes = 16;       // user_id BE ‖ item_id BE
inline constexpr size_t kPairValueBytes = 4;      // rate, float32 little-endian
inline constexpr size_t kNodeKeyBytes = 9;        // side byte (0 user, 1 item) ‖ id BE
inline constexpr size_t kNodeRecordBytes = 28;    // format 3
inline constexpr size_t kNodeRecordBytesV2 = 20;  // formats 1 and 2: no counts

// How the pairs column family's SST files are laid out. The nodes and meta
// column families are always block-based (they are small).
enum class TableFormat {
  kBlockBased,  // bulk-loaded SST (SstFileWriter + ingest), bloom + in-block hash index
  kCuckoo,      // ingest block-based, then compacted into one CuckooTable (mmap reads)
};
const char* TableFormatName(TableFormat format);
absl::StatusOr<TableFormat> ParseTableFormat(absl::string_view name);

inline void PutBigEndian64(uint64_t v, char* out) {
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
}
inline uint64_t GetBigEndian64(const char* in) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = (v << 8) | static_cast<uint8_t>(in[i]);
  return v;
}
inline void EncodePairKey(uint64_t user, uint64_t item, char* out /* 16 bytes */) {
  PutBigEndian64(user, out);
  PutBigEndian64(item, out + 8);
}
inline void EncodeRate(float rate, char* out /* 4 bytes */) {
  static_assert(sizeof(float) == 4);
  std::memcpy(out, &rate, 4);  // x86-64/aarch64: little-endian IEEE 754
}
inline float DecodeRate(const char* in) {
  float rate;
  std::memcpy(&rate, in, 4);
  return rate;
}
inline void EncodeNodeKey(bool is_item, uint64_t id, char* out /* 9 bytes */) {
  out[0] = is_item ? 1 : 0;
  PutBigEndian64(id, out + 1);
}

// Node value: NodeRecord (component, degree, sum_uncertainty, sum_score,
// mean_rate, positives, impressions; little-endian, 28 bytes) followed by
// sketch_dim float32.
std::string EncodeNodeValue(const NodeRecord& record, absl::Span<const float> sketch);
// Reads the 28-byte record and the 20-byte one of formats 1 and 2 (then
// positives = impressions = 0). Errors: DATA_LOSS when the value is neither
// 28 nor 20 bytes + 4 * sketch.size().
absl::Status DecodeNodeValue(absl::string_view value, NodeRecord* record, absl::Span<float> sketch);

// UnseenModel as a small JSON object (meta column family).
std::string EncodeUnseenModel(const UnseenModel& model);
absl::StatusOr<UnseenModel> DecodeUnseenModel(absl::string_view text);

// Column family options for the pairs CF. `for_write` selects the factory
// that writes the final format (through compaction); readers get an adaptive
// factory that reads any of them. `cache` (may be null) serves block-based reads.
// `scan_only`: for a reader that only iterates (no Get or MultiGet): the
// tables open without their Bloom filters, which an iteration never reads
// (10 bits a pair: ~14 MiB for 11.7M pairs not loaded).
rocksdb::ColumnFamilyOptions PairsCfOptions(TableFormat format, bool for_write,
                                            std::shared_ptr<rocksdb::Cache> cache,
                                            bool scan_only = false);
// The block-based table options of the bulk-loaded pairs SST (SstFileWriter).
rocksdb::Options PairsSstWriterOptions();
// Options for the small nodes/meta column families.
rocksdb::ColumnFamilyOptions SmallCfOptions(std::shared_ptr<rocksdb::Cache> cache);

// RocksDB status → absl status, prefixed with `context` (e.g. a file name).
absl::Status FromRocks(const rocksdb::Status& s, absl::string_view context);

// Creates RocksDB's process-wide statics once, behind this project's own
// function-local static: the default Env and FileSystem, and the set of filter
// policy names a block-based table reader builds at its first open (by writing
// and opening one tiny table in an in-memory Env). They are function-local
// statics inside RocksDB, which Debian builds without ThreadSanitizer: their
// guard is read inline there, so TSan cannot see that a second thread's use is
// ordered after the first thread's construction and reports a race on them.
// Through this guard (compiled here, instrumented in a TSan build) the order is
// visible. Every path that builds rocksdb::Options or opens a DB calls it first;
// it costs one atomic load after the first call (docs/RELIABILITY.md).
void InitRocksDbDefaults();

// A RocksDB info logger that drops everything, so that a read-only open never
// writes a LOG file into a published (checksummed) snapshot directory.
std::shared_ptr<rocksdb::Logger> NullLogger();

}  // namespace snapshot
}  // namespace graphsieve

#endif  // GRAPHSIEVE_CORE_SNAPSHOT_FORMAT_H_
