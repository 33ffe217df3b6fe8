// DeferredLog: the operation log of a master that does not lead yet (a
// standby of a cluster, docs/ha.md). The engine is built on it before there is
// a log to write: a standby applies the leader's records and writes none, so
// until Attach() every write is refused (kUnavailable) and nothing is durable
// but position 0. Attach() hands it the log the master writes once it leads
// (durability/etcd_log.h), before the engine serves anything; every call then
// goes to that log.
//
// Thread-safety: Attach() publishes the log with release order; callers that
// learned of the promotion after it (the RPC server started after Attach, the
// maintenance thread too) see it.
#pragma once

#include <atomic>
#include <memory>

#include "master/operation_log.h"

namespace crescent::server {

class DeferredLog final : public master::OperationLog {
 public:
  void Attach(std::unique_ptr<master::OperationLog> log) {
    owned_ = std::move(log);
    log_.store(owned_.get(), std::memory_order_release);
  }
  master::OperationLog* attached() const { return log_.load(std::memory_order_acquire); }

  StatusOr<uint64_t> Append(std::string_view record) override {
    if (auto* l = attached()) return l->Append(record);
    return Standby();
  }
  Status WaitDurable(uint64_t position) override {
    if (auto* l = attached()) return l->WaitDurable(position);
    return position == 0 ? Status::Ok() : Standby();
  }
  Status SyncThrough(uint64_t position) override {
    if (auto* l = attached()) return l->SyncThrough(position);
    return position == 0 ? Status::Ok() : Standby();
  }
  uint64_t synced_position() const override {
    auto* l = attached();
    return l ? l->synced_position() : 0;
  }
  Status ReadFrom(uint64_t position, const RecordFn& fn) override {
    if (auto* l = attached()) return l->ReadFrom(position, fn);
    return Standby();
  }
  Status TruncateBefore(uint64_t position) override {
    if (auto* l = attached()) return l->TruncateBefore(position);
    return Standby();
  }
  uint64_t end_position() const override {
    auto* l = attached();
    return l ? l->end_position() : 0;
  }

 private:
  static Status Standby() {
    return Status(ErrorCode::kUnavailable, "this master is a standby: it writes no log");
  }
  std::unique_ptr<master::OperationLog> owned_;
  std::atomic<master::OperationLog*> log_{nullptr};
};

}  // namespace crescent::server
