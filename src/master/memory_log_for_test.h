// MemoryLog: an OperationLog in memory, for the engine's tests: records are
// kept as appended, WaitDurable() remembers the highest position asked, and
// every record is durable once appended, unless `manual_sync` is set: then
// only what SyncThrough() made durable is (it counts its calls). `fail` fails
// every call, as a log whose write failed; `fail_syncs` only WaitDurable and
// SyncThrough, as a log whose appends were buffered but whose sync failed.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "master/log_record.h"
#include "master/operation_log.h"

namespace crescent::master::testing {

class MemoryLog final : public OperationLog {
 public:
  StatusOr<uint64_t> Append(std::string_view record) override {
    std::lock_guard lock(mu_);
    if (fail) return Status(fail_code, "disk gone");
    records_.emplace_back(record);
    return records_.size();
  }
  Status WaitDurable(uint64_t position) override {
    std::lock_guard lock(mu_);
    waited = std::max(waited, position);
    ++waits;
    if (fail || fail_syncs) return Status(fail_code, "disk gone");
    return Status::Ok();
  }
  Status SyncThrough(uint64_t position) override {
    std::lock_guard lock(mu_);
    if (fail || fail_syncs) return Status(fail_code, "disk gone");
    synced = std::max(synced, position);
    ++forced_syncs;
    return Status::Ok();
  }
  uint64_t synced_position() const override {
    std::lock_guard lock(mu_);
    return manual_sync ? synced : records_.size();
  }
  Status ReadFrom(uint64_t position, const RecordFn& fn) override {
    std::lock_guard lock(mu_);
    for (uint64_t i = position; i < records_.size(); ++i) {
      if (Status s = fn(i, records_[i]); !s.ok()) return s;
    }
    return Status::Ok();
  }
  Status TruncateBefore(uint64_t) override { return Status::Ok(); }
  uint64_t end_position() const override {
    std::lock_guard lock(mu_);
    return records_.size();
  }

  std::vector<LogRecord> Decoded() {
    std::lock_guard lock(mu_);
    std::vector<LogRecord> out;
    for (const std::string& r : records_) {
      auto d = DecodeLogRecord(r);
      EXPECT_TRUE(d.ok()) << d.status().ToString();
      if (d.ok()) out.push_back(*d);
    }
    return out;
  }

  bool fail = false;
  bool fail_syncs = false;
  // What a failure answers: UNAVAILABLE is a log in etcd whose master lost
  // its leadership (durability/etcd_log.h).
  ErrorCode fail_code = ErrorCode::kIoError;
  uint64_t waited = 0;
  uint64_t waits = 0;  // WaitDurable calls
  bool manual_sync = false;
  uint64_t synced = 0;  // with manual_sync
  uint64_t forced_syncs = 0;

 private:
  mutable std::mutex mu_;
  std::vector<std::string> records_;
};

}  // namespace crescent::master::testing
