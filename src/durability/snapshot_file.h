// Snapshot files: the master's whole metadata state at one log position, as
// a sequence of LogRecords (master/log_record.h) that rebuild it when applied
// in order to an empty master: every mounted segment, then every object in
// eviction order (next victim first), so a restore re-inserts them into its
// policy in the order they left it. Allocator state is not stored: it is the
// set of replica ranges, rebuilt from the objects.
//
// File: snapshot-<log position, 16 hex digits>.crsnap, written under a
// temporary name, fsynced, renamed and the directory fsynced, so a reader
// sees a complete file or none.
//   header   "CRSNAP01" | u32 version | u32 0 | u64 log position | u64 unix ms
//   blocks   u32 compressed bytes | u32 raw bytes | u64 check | zstd data
//   trailer  "CRSNAPEN" | u64 blocks | u64 records | u64 check of the above
// (little-endian). A block's raw bytes are whole records, each a varint length
// and the encoded record; its check is XXH3-64 over its first 8 header bytes
// and the compressed data. A file without its trailer, or with any check
// failing, is refused with kCorruptData naming the file and the block.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/fd.h"
#include "crescent/status.h"
#include "durability/record_sink.h"
#include "master/log_record.h"

namespace crescent::durability {

inline constexpr uint32_t kSnapshotVersion = 1;

struct SnapshotInfo {
  std::string path;
  uint64_t log_position = 0;  // the log records before it are in the snapshot
  uint64_t created_unix_ms = 0;
  uint64_t records = 0;
  uint64_t blocks = 0;
  uint64_t file_bytes = 0;
};

class SnapshotWriter {
 public:
  // Writes to a temporary name in `dir` until Finish().
  static StatusOr<SnapshotWriter> Create(const std::string& dir, uint64_t log_position);
  SnapshotWriter(SnapshotWriter&&) noexcept;
  SnapshotWriter& operator=(SnapshotWriter&&) = delete;
  ~SnapshotWriter();  // without Finish(): removes the temporary file

  Status Add(const master::LogRecord& record);
  // Flushes, fsyncs, renames into place and fsyncs the directory.
  StatusOr<SnapshotInfo> Finish();

  static constexpr size_t kBlockRawBytes = 1 << 20;

 private:
  SnapshotWriter() = default;
  Status FlushBlock();

  std::string dir_, temp_path_, final_path_;
  ScopedFd fd_;        // the temporary file, until Finish()
  std::string block_;  // raw bytes of the block being filled
  SnapshotInfo info_;
};

// Snapshot files in `dir`, newest (highest log position) first.
std::vector<std::string> ListSnapshots(const std::string& dir);
// The path of the snapshot at `position` in `dir`.
std::string SnapshotPath(const std::string& dir, uint64_t position);
// The log position a snapshot file's name gives (0 for another name).
uint64_t SnapshotNamePosition(const std::string& path);

// Reads and checks the whole file, handing each record to `fn` in order
// (stopping at the first error `fn` returns). Nothing is handed over unless
// every block and the trailer check out; then `checked`, when given, gets the
// record count the trailer holds, before the first record (a reader sizes its
// tables by it).
// The record handed over is reused for the next one: copy what must outlive the call.
using SnapshotRecordFn = std::function<Status(const master::LogRecord&)>;
using SnapshotCheckedFn = std::function<void(uint64_t records)>;
StatusOr<SnapshotInfo> ReadSnapshot(const std::string& path, const SnapshotRecordFn& fn,
                                    const SnapshotCheckedFn& checked = nullptr);
// The same, decoding each record straight into the sink's next slot.
StatusOr<SnapshotInfo> ReadSnapshot(const std::string& path, RecordSink& sink,
                                    const SnapshotCheckedFn& checked = nullptr);
// Decodes a snapshot held in memory (`name` is used in messages): what
// ReadSnapshot does after reading the file, and what the fuzzer drives.
StatusOr<SnapshotInfo> DecodeSnapshot(std::string_view data, const std::string& name,
                                      const SnapshotRecordFn& fn,
                                      const SnapshotCheckedFn& checked = nullptr);
StatusOr<SnapshotInfo> DecodeSnapshot(std::string_view data, const std::string& name,
                                      RecordSink& sink, const SnapshotCheckedFn& checked = nullptr);

// Checks the file's header, every block and the trailer (ReadSnapshot's first
// pass, decoding nothing): kCorruptData naming the file and the block, as
// ReadSnapshot would refuse it.
StatusOr<SnapshotInfo> CheckSnapshot(const std::string& path);

// Keeps the newest `keep` snapshots that read back whole (CheckSnapshot) and
// removes every other one: older whole ones, and damaged ones wherever they
// are (a restore refuses them). So the last whole snapshot is never removed,
// and a damaged one never takes a whole one's place.
struct PruneResult {
  uint64_t oldest_kept = UINT64_MAX;         // the oldest log position a kept one needs
  std::vector<std::string> removed_damaged;  // why each damaged one was refused
};
StatusOr<PruneResult> PruneSnapshots(const std::string& dir, size_t keep);

}  // namespace crescent::durability
