// OperationLog: where the master appends the state changes a snapshot would
// see, so that a restart can replay what came after its last snapshot. The
// engine only appends; the durability layer (src/durability) implements it on
// files in the data dir, and a later one may put it in etcd.
//
// Contract:
//  - Append() is ordered: records are read back in the order their Append()
//    calls returned, and each returns the position just past its record.
//    Positions only grow; a position names the boundary between two records.
//  - Append() only buffers. WaitDurable(p) returns once every record before p
//    is as durable as the log's sync policy promises before an acknowledgement
//    ("always": on stable storage; an interval: written, and synced within the
//    interval). The engine calls it after releasing its locks, so that one sync
//    covers every caller waiting at that moment (group commit).
//  - SyncThrough(p) makes every record before p durable on stable storage
//    before it returns, whatever the sync policy: for changes that must not be
//    lost even within an interval (a segment's mount, which its node learns
//    only from the answer; space about to be reused; a snapshot's prefix).
//  - With "always", every appended record reaches stable storage within a
//    bounded time whether or not anyone waits (maintenance's changes too).
//  - ReadFrom(p) hands the records from position p on, in order, to `fn`; it
//    stops early when `fn` returns an error and returns that error.
//  - TruncateBefore(p) may drop records before p (a snapshot covers them); the
//    ones from p on stay readable.
//  - Every method is thread-safe.
#pragma once

#include <cstdint>
#include <functional>
#include <string_view>

#include "crescent/status.h"

namespace crescent::master {

class OperationLog {
 public:
  using RecordFn = std::function<Status(uint64_t position, std::string_view record)>;

  virtual ~OperationLog() = default;
  virtual StatusOr<uint64_t> Append(std::string_view record) = 0;
  virtual Status WaitDurable(uint64_t position) = 0;
  virtual Status SyncThrough(uint64_t position) = 0;
  // The position every record before which is on stable storage.
  virtual uint64_t synced_position() const = 0;
  virtual Status ReadFrom(uint64_t position, const RecordFn& fn) = 0;
  virtual Status TruncateBefore(uint64_t position) = 0;
  // The position the next Append() will start at.
  virtual uint64_t end_position() const = 0;
};

}  // namespace crescent::master
