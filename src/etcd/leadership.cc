#include "etcd/leadership.h"

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

namespace crescent::etcd {
namespace {

using namespace std::chrono_literals;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
      .count();
}

etcdserverpb::Compare CreatedAt(const std::string& key, int64_t revision) {
  etcdserverpb::Compare c;
  c.set_key(key);
  c.set_target(etcdserverpb::Compare::CREATE);
  c.set_result(etcdserverpb::Compare::EQUAL);
  c.set_create_revision(revision);
  return c;
}

}  // namespace

struct Leadership::Impl {
  std::shared_ptr<EtcdClient> etcd;
  LeadershipOptions options;
  int64_t lease = 0;
  std::chrono::milliseconds granted{0};
  int64_t revision = 0;
  // When the last keep-alive etcd answered was sent (steady ns); 0: none.
  std::atomic<int64_t> renewed_at{0};
  std::atomic<bool> lost{false};  // the lease or the key is gone for good
  std::mutex mu;                  // guards stop
  std::condition_variable wake;
  bool stop = false;
  std::thread keeper;
  bool resigned = false;

  void KeepAlive() {
    const auto every = std::max<std::chrono::milliseconds>(granted / 3, 100ms);
    for (;;) {
      {
        std::unique_lock lock(mu);
        if (wake.wait_for(lock, every, [&] { return stop; })) return;
      }
      const int64_t sent = NowNs();
      StatusOr<int64_t> left = etcd->KeepAliveOnce(lease);
      if (left.ok() && *left > 0) {
        renewed_at.store(sent, std::memory_order_release);
      } else if (left.ok()) {
        lost.store(true, std::memory_order_release);  // expired: it never comes back
        return;
      }
    }
  }

  void StopKeeper() {
    {
      std::lock_guard lock(mu);
      stop = true;
    }
    wake.notify_all();
    if (keeper.joinable()) keeper.join();
  }

  // One try to create the key; true when it is ours (then `revision` is set).
  // Else `*watch_from` is the revision to watch the holder's key from.
  StatusOr<bool> TryCreate(int64_t* watch_from) {
    etcdserverpb::TxnRequest t;
    *t.add_compare() = CreatedAt(options.key, 0);
    auto* put = t.add_success()->mutable_request_put();
    put->set_key(options.key);
    put->set_value(options.value);
    put->set_lease(lease);
    t.add_failure()->mutable_request_range()->set_key(options.key);
    StatusOr<etcdserverpb::TxnResponse> r = etcd->Txn(t);
    if (!r.ok()) return r.status();
    if (r->succeeded()) {
      revision = r->header().revision();
      return true;
    }
    const auto& kvs = r->responses(0).response_range().kvs();
    if (!kvs.empty() && kvs[0].lease() == lease) {  // an earlier try of ours, its answer lost
      revision = kvs[0].create_revision();
      return true;
    }
    *watch_from = r->header().revision() + 1;
    return false;
  }

  // Waits until the key is deleted (from revision `from` on) or `deadline`.
  void AwaitDelete(int64_t from, Clock::time_point deadline) {
    etcdserverpb::WatchCreateRequest w;
    w.set_key(options.key);
    w.set_start_revision(from);
    StatusOr<std::unique_ptr<EtcdWatch>> watch = etcd->Watch(w);
    if (!watch.ok()) {
      std::this_thread::sleep_for(100ms);
      return;
    }
    for (;;) {
      StatusOr<etcdserverpb::WatchResponse> r = (*watch)->Next(deadline);
      if (!r.ok()) return;  // the deadline, or the stream ended: try again
      for (const auto& e : r->events()) {
        if (e.type() == etcdserverpb::Event::DELETE) return;
      }
      if (r->canceled()) return;
    }
  }
};

StatusOr<std::unique_ptr<Leadership>> Leadership::Campaign(std::shared_ptr<EtcdClient> etcd,
                                                           LeadershipOptions options,
                                                           Clock::time_point deadline) {
  if (options.key.empty()) return Status(ErrorCode::kInvalidArgument, "no leader key");
  auto impl = std::make_unique<Impl>();
  impl->etcd = std::move(etcd);
  impl->options = std::move(options);
  const int64_t seconds = std::max<int64_t>(1, (impl->options.ttl.count() + 999) / 1000);
  const int64_t asked = NowNs();
  StatusOr<etcdserverpb::LeaseGrantResponse> lease = impl->etcd->LeaseGrant(seconds);
  if (!lease.ok()) return lease.status();
  impl->lease = lease->id();
  impl->granted = std::chrono::seconds(lease->ttl());
  impl->renewed_at.store(asked, std::memory_order_release);
  impl->keeper = std::thread([p = impl.get()] { p->KeepAlive(); });
  auto self = std::unique_ptr<Leadership>(new Leadership(std::move(impl)));
  Impl& m = *self->impl_;
  while (Clock::now() < deadline) {
    int64_t from = 0;
    StatusOr<bool> mine = m.TryCreate(&from);
    if (mine.ok() && *mine) return self;
    if (!mine.ok()) {
      std::this_thread::sleep_for(100ms);  // etcd unreachable: its client moved on
      continue;
    }
    m.AwaitDelete(from, deadline);
  }
  return Status(ErrorCode::kTimeout, "did not become leader of " + m.options.key + " in time");
}

Leadership::Leadership(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Leadership::~Leadership() { Resign(); }

int64_t Leadership::revision() const { return impl_->revision; }
int64_t Leadership::lease() const { return impl_->lease; }
std::chrono::milliseconds Leadership::ttl() const { return impl_->granted; }

bool Leadership::Held() const {
  if (impl_->lost.load(std::memory_order_acquire) || impl_->revision == 0) return false;
  const int64_t since = NowNs() - impl_->renewed_at.load(std::memory_order_acquire);
  return since < std::chrono::duration_cast<std::chrono::nanoseconds>(impl_->granted).count();
}

StatusOr<etcdserverpb::TxnResponse> Leadership::GuardedTxn(etcdserverpb::TxnRequest txn) {
  // The fence first: a reply can then tell "not ours" from the txn's own.
  etcdserverpb::TxnRequest guarded;
  *guarded.add_compare() = CreatedAt(impl_->options.key, impl_->revision);
  for (auto& c : *txn.mutable_compare()) *guarded.add_compare() = std::move(c);
  *guarded.mutable_success() = std::move(*txn.mutable_success());
  guarded.add_failure()->mutable_request_range()->set_key(impl_->options.key);
  for (auto& op : *txn.mutable_failure()) *guarded.add_failure() = std::move(op);
  StatusOr<etcdserverpb::TxnResponse> r = impl_->etcd->Txn(guarded);
  if (r.ok() && !r->succeeded()) {
    const auto& kvs = r->responses(0).response_range().kvs();
    if (kvs.empty() || kvs[0].create_revision() != impl_->revision) {
      impl_->lost.store(true, std::memory_order_release);
    }
  }
  return r;
}

Status Leadership::Publish(const std::string& value) {
  etcdserverpb::TxnRequest t;
  auto* put = t.add_success()->mutable_request_put();
  put->set_key(impl_->options.key);
  put->set_value(value);
  put->set_lease(impl_->lease);
  StatusOr<etcdserverpb::TxnResponse> r = GuardedTxn(std::move(t));
  if (!r.ok()) return r.status();
  if (!r->succeeded()) {
    return Status(ErrorCode::kNotOwner, "no longer the leader of " + impl_->options.key);
  }
  return Status::Ok();
}

void Leadership::StopKeepAlive() { impl_->StopKeeper(); }

void Leadership::Resign() {
  if (impl_->resigned) return;
  impl_->resigned = true;
  impl_->StopKeeper();
  impl_->lost.store(true, std::memory_order_release);
  (void)impl_->etcd->LeaseRevoke(impl_->lease);
}

}  // namespace crescent::etcd
