#include "durability/etcd_log_tail.h"

#include <chrono>

#include "durability/etcd_log.h"
#include "durability/log_frame.h"
#include "etcd/cluster_keys.h"

namespace crescent::durability {
namespace {

using namespace std::chrono_literals;
constexpr auto kPoll = 100ms;  // how long a wait goes before it looks at stop_

bool Transient(const Status& s) {
  return s.code() == ErrorCode::kTimeout || s.code() == ErrorCode::kUnavailable;
}

}  // namespace

StatusOr<std::unique_ptr<EtcdLogTail>> EtcdLogTail::Start(EtcdLogTailOptions options) {
  if (options.etcd == nullptr || !options.fn) {
    return Status(ErrorCode::kInvalidArgument, "the log tail needs an etcd client and a callback");
  }
  if (Status s = etcd::CheckClusterName(options.cluster); !s.ok()) return s;
  if (options.page_keys <= 0) {
    return Status(ErrorCode::kInvalidArgument, "the log tail's page must hold a key or more");
  }
  auto tail = std::unique_ptr<EtcdLogTail>(new EtcdLogTail(std::move(options)));
  tail->next_.store(tail->options_.from, std::memory_order_release);
  // The first range on the caller's thread: a trimmed position is known at once.
  if (Status s = tail->CatchUp(&tail->first_revision_); !s.ok()) return s;
  tail->thread_ = std::thread([p = tail.get()] { p->Run(); });
  return tail;
}

EtcdLogTail::~EtcdLogTail() { Stop(); }

void EtcdLogTail::Stop() {
  stop_.store(true, std::memory_order_release);
  if (thread_.joinable()) thread_.join();
}

Status EtcdLogTail::status() const {
  std::lock_guard lock(mu_);
  return error_;
}

Status EtcdLogTail::Hand(uint64_t position, std::string_view record) {
  if (stop_.load(std::memory_order_acquire)) return Status(ErrorCode::kClosed, "the tail stopped");
  if (Status s = options_.fn(position, record); !s.ok()) {
    callback_failed_ = true;
    return s;
  }
  next_.store(position + kFrameBytes + record.size(), std::memory_order_release);
  return Status::Ok();
}

Status EtcdLogTail::CatchUp(int64_t* revision) {
  return ReadEtcdLog(
      *options_.etcd, options_.cluster, position(), options_.page_keys,
      [this](uint64_t p, std::string_view r) { return Hand(p, r); }, nullptr, revision);
}

Status EtcdLogTail::Follow(int64_t revision) {
  etcdserverpb::WatchCreateRequest w;
  w.set_key(etcd::LogPrefix(options_.cluster));
  w.set_range_end(etcd::PrefixEnd(etcd::LogPrefix(options_.cluster)));
  w.set_start_revision(revision + 1);
  StatusOr<std::unique_ptr<etcd::EtcdWatch>> watch = options_.etcd->Watch(w);
  if (!watch.ok()) {  // unreachable, or the revision is compacted: range again
    std::this_thread::sleep_for(kPoll);
    return Status::Ok();
  }
  while (!stop_.load(std::memory_order_acquire)) {
    StatusOr<etcdserverpb::WatchResponse> r = (*watch)->Next(etcd::Clock::now() + kPoll);
    if (!r.ok() && r.status().code() == ErrorCode::kTimeout) continue;
    if (!r.ok() || r->canceled() || r->compact_revision() != 0) return Status::Ok();
    for (const auto& e : r->events()) {
      if (e.type() != etcdserverpb::Event::PUT) continue;  // a trim
      StatusOr<uint64_t> start = etcd::LogKeyPosition(options_.cluster, e.kv().key());
      if (!start.ok()) return start.status();
      const uint64_t next = position();
      if (*start + e.kv().value().size() <= next) continue;  // handed already
      if (*start > next) return Status::Ok();                // missed one: range again
      uint64_t expect = kAnyStart;
      Status s =
          HandEtcdLogBatch(options_.cluster, e.kv().key(), e.kv().value(), next, &expect,
                           [this](uint64_t p, std::string_view rec) { return Hand(p, rec); });
      if (!s.ok()) return s;
    }
  }
  return Status::Ok();
}

void EtcdLogTail::Run() {
  int64_t revision = first_revision_;
  for (;;) {
    Status s = Follow(revision);
    while (s.ok() && !stop_.load(std::memory_order_acquire)) {
      reranges_.fetch_add(1, std::memory_order_acq_rel);
      s = CatchUp(&revision);
      if (s.ok()) break;
      if (Transient(s) && !callback_failed_) {
        s = Status::Ok();
        std::this_thread::sleep_for(kPoll);
      }
    }
    if (stop_.load(std::memory_order_acquire)) return;
    if (!s.ok()) {
      {
        std::lock_guard lock(mu_);
        error_ = s;
      }
      if (options_.on_end) options_.on_end(s);
      return;
    }
  }
}

}  // namespace crescent::durability
