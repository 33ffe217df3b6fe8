// FileOperationLog: the master's operation log (master/operation_log.h) as
// files in the data dir, with group commit.
//
// Files. log-<start>.crlog, <start> the position of its first record in 16
// hex digits. A file is a 16-byte header ("CRSLOG01" and the start position,
// little-endian) and then records, each framed as
//   u32 length | u32 check | payload
// (little-endian; check = the low 32 bits of XXH3-64 of the payload, seeded
// with its length).
// A position counts framed bytes across files: file start + (offset - 16).
// Every file after the first starts where the one before it ends; a new file
// begins when the current one passes `file_bytes`, always at a record boundary.
//
// Crash safety. Open() scans the newest file; a frame that is cut short or
// fails its check, and everything after it, is a torn tail (a crash during an
// append): the file is cut there and a warning says where and how much. Damage
// in an older file is not a torn tail: ReadFrom() refuses it with kCorruptData
// naming the file and byte offset.
//
// Group commit. Append() copies the frame into a buffer under mu_; one flusher
// thread writes the buffer and fdatasyncs the file. With sync_interval_ms 0
// ("always") every Append() wakes the flusher, which syncs whatever was
// appended meanwhile (so a record nobody waits for is synced as promptly), and
// a WaitDurable() returns once its position is synced, so one sync serves
// every caller that appended meanwhile; with an interval the flusher writes
// and syncs that often and WaitDurable() returns at once. SyncThrough() writes
// and syncs on the caller's thread, in either mode. After a failed write or sync the log refuses
// every later call: what it has acknowledged stays true, and nothing more is acknowledged.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/fd.h"
#include "durability/log_frame.h"
#include "master/operation_log.h"

namespace crescent::durability {

struct FileLogOptions {
  std::string dir;
  // 0: fdatasync before WaitDurable() returns; else the flusher's period.
  int64_t sync_interval_ms = 10;
  // A new file begins once the current one holds this many bytes.
  uint64_t file_bytes = uint64_t{64} << 20;
  // Where positions start in a dir without log files (a restore whose log was
  // deleted continues at its snapshot's position).
  uint64_t start_position = 0;
};

struct FileLogStats {
  uint64_t end_position = 0;     // appended
  uint64_t synced_position = 0;  // on stable storage
  uint64_t first_position = 0;   // oldest still kept
  uint64_t files = 0;
  uint64_t syncs = 0;
};

class FileOperationLog final : public master::OperationLog {
 public:
  // Warnings (a torn tail cut) are appended to *warnings for the caller to show.
  static StatusOr<std::unique_ptr<FileOperationLog>> Open(const FileLogOptions& options,
                                                          std::vector<std::string>* warnings);
  ~FileOperationLog() override;  // writes and syncs what was appended

  StatusOr<uint64_t> Append(std::string_view record) override;
  Status WaitDurable(uint64_t position) override;
  Status SyncThrough(uint64_t position) override;
  uint64_t synced_position() const override;
  Status ReadFrom(uint64_t position, const RecordFn& fn) override;
  // Moves the log's end forward to `position` (a no-op unless it is past the
  // end): a new file starts there, so that a restore that had to use a
  // snapshot lying beyond the log's end (the records between were lost) goes
  // on from that snapshot's position. Records before `position` in older
  // files stay readable up to where they end.
  Status SkipTo(uint64_t position);
  Status TruncateBefore(uint64_t position) override;
  uint64_t end_position() const override;
  FileLogStats Stats() const;

  static constexpr uint64_t kHeaderBytes = 16;
  static constexpr uint64_t kFrameBytes = durability::kFrameBytes;
  static constexpr uint32_t kMaxRecordBytes = durability::kMaxRecordBytes;

 private:
  struct File {
    uint64_t start;
    std::string path;
  };
  explicit FileOperationLog(FileLogOptions options) : options_(std::move(options)) {}
  Status OpenTail(std::vector<std::string>* warnings);
  // Creates the file that starts at `start` and makes it the one appended to.
  Status StartFile(uint64_t start);
  void FlushLoop();
  // Writes buffered frames (and syncs when `sync`); the flusher's work, also
  // done by ReadFrom() and the destructor. io_mu_ must be held.
  Status WriteBufferedLocked(bool sync);

  const FileLogOptions options_;

  // mu_ guards the fields below it; io_mu_ (taken before mu_) serialises
  // writes to the file, so that the buffer's frames land in append order.
  std::mutex io_mu_;
  mutable std::mutex mu_;
  std::condition_variable flush_cv_;   // wakes the flusher
  std::condition_variable synced_cv_;  // wakes WaitDurable
  std::string buffer_;                 // framed records not yet written
  uint64_t end_ = 0;                   // position after the last Append
  uint64_t written_ = 0;               // position written to the file
  uint64_t synced_ = 0;                // position synced
  uint64_t syncs_ = 0;
  bool stop_ = false;
  Status error_;  // the first write/sync failure, sticky
  // By start; the last is appended to. Changed under both locks (io_mu_
  // first), so either one suffices to read it.
  std::vector<File> files_;
  // io_mu_ alone: the file appended to and its size.
  ScopedFd fd_;
  uint64_t file_written_bytes_ = 0;
  std::thread flusher_;
};

}  // namespace crescent::durability
