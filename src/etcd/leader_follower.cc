#include "etcd/leader_follower.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <utility>
#include <vector>

namespace crescent::etcd {
namespace {

bool SameLeader(const std::optional<LeaderInfo>& a, const std::optional<LeaderInfo>& b) {
  if (!a || !b) return !a && !b;
  return a->master_id == b->master_id && a->grpc == b->grpc;
}

std::string Joined(const std::vector<std::string>& parts) {
  std::string out;
  for (const std::string& p : parts) out += (out.empty() ? "" : ",") + p;
  return out;
}

}  // namespace

struct LeaderFollower::Impl {
  EtcdAddress address;
  std::string key;
  FollowerOptions options;
  std::unique_ptr<EtcdClient> etcd;

  mutable std::mutex mu;  // guards the view and `stop`, `watch`
  std::condition_variable changed;
  std::optional<LeaderInfo> leader;
  int64_t revision = 0;   // the etcd revision the view is true at
  int64_t key_mod = 0;    // the key's mod revision in the view; 0: absent
  bool answered = false;  // etcd answered once, or failed once
  Status etcd_error;      // the last read's failure; OK once a read worked
  std::atomic<uint64_t> generation{0};
  bool stop = false;
  EtcdWatch* watch = nullptr;  // the thread's watch, for Cancel (under `mu`)

  std::mutex listeners_mu;  // held while a change is applied and told, to keep their order
  std::vector<Listener> listeners;
  std::mutex recheck_mu;
  std::thread thread;

  std::string Where() const { return "etcd (endpoints " + Joined(address.endpoints) + ")"; }

  // Takes the view at `rev`: the key `present` with `value` (its mod revision
  // `mod`), or absent. False when it brought nothing new (an older view, or
  // the key as it was).
  bool Apply(int64_t rev, bool present, const std::string& value, int64_t mod) {
    std::optional<LeaderInfo> next;
    if (present && !value.empty()) {
      StatusOr<LeaderInfo> info = DecodeLeaderInfo(value);
      if (info.ok()) next = std::move(*info);
    }
    std::lock_guard told(listeners_mu);
    bool moved = false;
    {
      std::lock_guard lock(mu);
      answered = true;
      etcd_error = Status::Ok();
      changed.notify_all();
      if (rev < revision) return false;
      const bool fresh = (present ? mod : 0) != key_mod;
      revision = rev;
      key_mod = present ? mod : 0;
      if (!fresh) return false;
      moved = !SameLeader(leader, next);
      leader = next;
      if (moved) generation.fetch_add(1, std::memory_order_acq_rel);
    }
    if (moved) {
      for (const Listener& l : listeners) l(next);
    }
    return true;
  }

  void Fail(const Status& s) {
    std::lock_guard lock(mu);
    answered = true;
    etcd_error = s;
    changed.notify_all();
  }

  // Sleeps `d`, or until stopped: false then.
  bool Pause(std::chrono::milliseconds d) {
    std::unique_lock lock(mu);
    changed.wait_for(lock, d, [&] { return stop; });
    return !stop;
  }

  bool Stopping() const {
    std::lock_guard lock(mu);
    return stop;
  }

  // Reads the key, then follows it with a watch until the watch ends. False
  // when etcd could not be read or watched.
  bool Follow() {
    etcdserverpb::RangeRequest read;
    read.set_key(key);
    StatusOr<etcdserverpb::RangeResponse> got = etcd->Range(read);
    if (!got.ok()) {
      Fail(got.status());
      return false;
    }
    const int64_t rev = got->header().revision();
    const bool present = got->kvs_size() > 0;
    Apply(rev, present, present ? got->kvs(0).value() : "",
          present ? got->kvs(0).mod_revision() : 0);
    etcdserverpb::WatchCreateRequest create;
    create.set_key(key);
    create.set_start_revision(rev + 1);
    StatusOr<std::unique_ptr<EtcdWatch>> made = etcd->Watch(create);
    if (!made.ok()) {
      Fail(made.status());
      return false;
    }
    std::unique_ptr<EtcdWatch> w = std::move(*made);
    {
      std::lock_guard lock(mu);
      if (stop) return true;
      watch = w.get();
    }
    for (;;) {
      StatusOr<etcdserverpb::WatchResponse> resp = w->Next(Clock::now() + std::chrono::hours(1));
      if (!resp.ok() && resp.status().code() == ErrorCode::kTimeout) continue;
      // Ended (etcd went away, Recheck or the destructor cancelled it), or
      // cancelled by etcd: read anew.
      if (!resp.ok() || resp->canceled()) break;
      for (const etcdserverpb::Event& ev : resp->events()) {
        const bool put = ev.type() == etcdserverpb::Event::PUT;
        Apply(ev.kv().mod_revision(), put, ev.kv().value(), ev.kv().mod_revision());
      }
    }
    std::lock_guard lock(mu);
    watch = nullptr;
    return true;
  }

  void Run() {
    std::chrono::milliseconds backoff = options.retry_initial;
    while (!Stopping()) {
      if (Follow()) backoff = options.retry_initial;
      if (!Pause(backoff)) return;
      backoff = std::min(backoff * 2, options.retry_max);
    }
  }
};

StatusOr<std::unique_ptr<LeaderFollower>> LeaderFollower::Start(const std::string& address,
                                                                FollowerOptions options) {
  StatusOr<EtcdAddress> parsed = ParseEtcdAddress(address);
  if (!parsed.ok()) return parsed.status();
  if (options.retry_initial.count() <= 0 || options.retry_max < options.retry_initial) {
    return Status(ErrorCode::kInvalidArgument,
                  "follower options: need 0 < retry_initial <= retry_max");
  }
  auto impl = std::make_unique<Impl>();
  impl->key = LeaderKey(parsed->cluster);
  StatusOr<std::unique_ptr<EtcdClient>> etcd =
      EtcdClient::Create({.endpoints = parsed->endpoints, .call_timeout = options.call_timeout});
  if (!etcd.ok()) return etcd.status();
  impl->etcd = std::move(*etcd);
  impl->address = std::move(*parsed);
  impl->options = options;
  impl->thread = std::thread([p = impl.get()] { p->Run(); });
  return std::unique_ptr<LeaderFollower>(new LeaderFollower(std::move(impl)));
}

LeaderFollower::LeaderFollower(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

LeaderFollower::~LeaderFollower() {
  {
    std::lock_guard lock(impl_->mu);
    impl_->stop = true;
    if (impl_->watch != nullptr) impl_->watch->Cancel();
    impl_->changed.notify_all();
  }
  if (impl_->thread.joinable()) impl_->thread.join();
}

const EtcdAddress& LeaderFollower::address() const { return impl_->address; }

uint64_t LeaderFollower::generation() const {
  return impl_->generation.load(std::memory_order_acquire);
}

StatusOr<FollowedLeader> LeaderFollower::Leader(Clock::time_point deadline) {
  Impl& m = *impl_;
  std::unique_lock lock(m.mu);
  m.changed.wait_until(lock, deadline, [&] {
    return m.stop || m.leader.has_value() || (m.answered && !m.etcd_error.ok());
  });
  if (m.leader) return FollowedLeader{*m.leader, m.generation.load(std::memory_order_acquire)};
  const std::string cluster = "cluster " + m.address.cluster;
  if (!m.etcd_error.ok()) {
    return Status(ErrorCode::kUnavailable, "cannot read the leader of " + cluster + " from " +
                                               m.Where() + ": " + m.etcd_error.message());
  }
  if (!m.answered) {
    return Status(ErrorCode::kUnavailable,
                  "no answer yet from " + m.Where() + " about the leader of " + cluster);
  }
  return Status(ErrorCode::kUnavailable,
                cluster + " has no leader: its leader key " + m.key + " in " + m.Where() +
                    (m.key_mod == 0 ? " is absent" : " is empty (a new leader getting ready)"));
}

void LeaderFollower::Recheck() {
  Impl& m = *impl_;
  std::unique_lock once(m.recheck_mu, std::try_to_lock);
  if (!once.owns_lock()) return;
  etcdserverpb::RangeRequest read;
  read.set_key(m.key);
  StatusOr<etcdserverpb::RangeResponse> got = m.etcd->Range(read);
  if (!got.ok()) {
    m.Fail(got.status());
    return;
  }
  const bool present = got->kvs_size() > 0;
  const bool news = m.Apply(got->header().revision(), present, present ? got->kvs(0).value() : "",
                            present ? got->kvs(0).mod_revision() : 0);
  // The watch missed it (a stalled member keeps a watch silent): a new one.
  std::lock_guard lock(m.mu);
  if (news && m.watch != nullptr) m.watch->Cancel();
}

void LeaderFollower::AddListener(Listener listener) {
  std::lock_guard lock(impl_->listeners_mu);
  impl_->listeners.push_back(std::move(listener));
}

}  // namespace crescent::etcd
