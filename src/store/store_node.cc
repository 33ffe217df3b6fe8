#include "store/store_node.h"

#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <random>

#include "common/clock.h"
#include "common/endpoint.h"

namespace crescent::store {
namespace {

std::string DefaultNodeId() {
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) std::snprintf(host, sizeof host, "node");
  return std::string(host) + "-" + std::to_string(getpid());
}

// Whether paths `a` and `b` name one existing file (the same device and inode:
// a link or another spelling of the path counts).
bool SameFile(const std::string& a, const std::string& b) {
  struct stat sa {
  }, sb{};
  return ::stat(a.c_str(), &sa) == 0 && ::stat(b.c_str(), &sb) == 0 && sa.st_dev == sb.st_dev &&
         sa.st_ino == sb.st_ino;
}

// A random non-zero 64-bit value: a mount's epoch, its owner token.
uint64_t RandomNonZero() {
  uint64_t epoch = 0;
  while (epoch == 0) {
    if (getrandom(&epoch, sizeof epoch, 0) != static_cast<ssize_t>(sizeof epoch)) {
      std::random_device rd;  // getrandom is missing only before Linux 3.17
      epoch = (uint64_t{rd()} << 32) ^ rd();
    }
  }
  return epoch;
}

}  // namespace

StatusOr<std::unique_ptr<StoreNode>> StoreNode::Start(const StoreNodeOptions& options,
                                                      const std::string& secret) {
  StatusOr<transfer::CapabilitySigner> signer = transfer::CapabilitySigner::Create(secret);
  if (!signer.ok()) return signer.status();
  StoreNodeOptions o = options;
  if (o.node_id.empty()) o.node_id = DefaultNodeId();
  if (o.segment_name.empty()) o.segment_name = o.node_id + "/dram0";
  if (o.segment_size == 0) {
    return Status(ErrorCode::kInvalidSize, "segment size must be greater than 0");
  }
  auto wildcard = [](const std::string& h) {
    return h.empty() || h == "0.0.0.0" || h == "::" || h == "[::]";
  };
  if (o.advertise_host.empty()) {
    if (wildcard(o.host)) {
      return Status(ErrorCode::kInvalidArgument,
                    "data host '" + o.host +
                        "' listens on every address, but clients need one to connect to: "
                        "give it as the advertise host (--advertise-host)");
    }
    o.advertise_host = o.host;
  } else if (wildcard(o.advertise_host)) {
    return Status(ErrorCode::kInvalidArgument, "advertise host '" + o.advertise_host +
                                                   "' is not an address clients can connect to");
  }
  std::unique_ptr<StoreNode> node(new StoreNode(std::move(o), std::move(signer.value())));
  const StoreNodeOptions& opt = node->options_;

  auto segment = transfer::SegmentMemory::Create(opt.segment_name, opt.segment_size);
  if (!segment.ok()) return segment.status();
  node->AddSegment(std::move(segment).value(), opt.segment_name, master::Tier::kDram);
  for (size_t i = 0; i < opt.persistent.size(); ++i) {
    const PersistentSegmentOptions& p = opt.persistent[i];
    for (size_t j = 0; j < i; ++j) {
      // The file of an earlier one exists by now (opened, created if missing).
      if (SameFile(opt.persistent[j].path, p.path)) {
        return Status(ErrorCode::kInvalidArgument,
                      "persistent segment file " + p.path + " is given twice" +
                          (p.path == opt.persistent[j].path
                               ? std::string()
                               : " (as " + opt.persistent[j].path + " and " + p.path + ")"));
      }
    }
    auto file = transfer::SegmentMemory::OpenPersistent(p.path, p.file_size);
    if (!file.ok()) return file.status();
    std::string name = "pmem-" + (*file)->persistent()->uuid();
    for (const Segment& other : node->segments_) {
      if (other.name == name) {  // two files, one segment: a copy of a file
        return Status(ErrorCode::kInvalidArgument,
                      "persistent segment file " + p.path + " names the same segment (" + name +
                          ") as another file given: a copy of it? Each segment needs its own "
                          "file");
      }
    }
    node->AddSegment(std::move(file).value(), std::move(name), master::Tier::kPmem);
  }
  std::vector<transfer::SegmentMemory*> memories;
  for (const Segment& seg : node->segments_) memories.push_back(seg.memory.get());
  if (opt.warm_pages) {
    // DRAM only: warming a file reads all of it from its device.
    node->warmer_ = std::make_unique<transfer::PageWarmer>(node->segments_[0].memory->data(),
                                                           opt.segment_size);
  }

  transfer::TcpServerOptions tcp_options;
  tcp_options.host = opt.host;
  tcp_options.port = opt.port;
  tcp_options.threads = opt.io_threads;
  tcp_options.congestion = opt.tcp_congestion;
  tcp_options.metrics = &node->transfer_metrics_;
  tcp_options.limits = opt.limits;
  auto tcp =
      transfer::TcpDataServer::Start(tcp_options, transfer::SegmentSet(memories), node->signer_);
  if (!tcp.ok()) return tcp.status();
  node->tcp_ = std::move(tcp.value());

  Endpoint ep{opt.advertise_host, node->tcp_->port(), ""};
  if (opt.shared_memory) {
    // Unique per process and start (the abstract socket namespace is per host).
    ep.shm_name =
        "crescent-" + std::to_string(getpid()) + "-" + transfer::RandomSecret().substr(0, 16);
    auto shm = transfer::ShmServer::Start(ep.shm_name, transfer::SegmentSet(memories),
                                          node->signer_, &node->transfer_metrics_);
    if (!shm.ok()) return shm.status();
    node->shm_ = std::move(shm.value());
  }
  node->base_endpoint_ = ep;

  auto master = rpc::MasterClient::Create(opt.master);
  if (!master.ok()) return master.status();
  node->master_ = std::move(master.value());
  // A new leader of a cluster of masters hears from this node at once (it
  // may need the node to mount again): not a heartbeat interval later.
  node->master_->OnLeaderChange([n = node.get()] {
    {
      std::lock_guard g(n->mu_);
      n->beat_now_ = true;
    }
    n->cv_.notify_all();
  });
  // The master's clock first: no capability for this node exists before the
  // mount, so none is honoured before a reading.
  (void)node->HeartbeatOnce();
  if (Status s = node->Mount(/*fresh=*/true); !s.ok()) return s;
  node->heartbeat_ = std::thread([n = node.get()] { n->HeartbeatLoop(); });
  return node;
}

void StoreNode::AddSegment(std::unique_ptr<transfer::SegmentMemory> memory, std::string name,
                           master::Tier tier) {
  memory->SetClockGate(&clock_gate_);
  Segment& seg = segments_.emplace_back();
  seg.memory = std::move(memory);
  seg.name = std::move(name);
  seg.tier = tier;
}

Status StoreNode::Mount(bool fresh) {
  if (fresh) {
    // Refuse every capability, and cut off the same-host clients that map the
    // memory, before the master can hand the space to anything new.
    for (Segment& seg : segments_) seg.memory->SetId(0);
    if (shm_) shm_->DropMappings();
    std::lock_guard g(mu_);
    for (Segment& seg : segments_) seg.unanswered.reset();
  }
  Status first = Status::Ok();
  for (size_t i = 0; i < segments_.size(); ++i) {
    if (segments_[i].memory->id() != 0) continue;
    if (Status s = MountOne(i); !s.ok() && first.ok()) first = s;
  }
  return first;
}

bool StoreNode::AnyUnmounted() const {
  return std::any_of(segments_.begin(), segments_.end(),
                     [](const Segment& s) { return s.memory->id() == 0; });
}

namespace {

// Puts `m` first in `list` (once), keeping at most `limit`.
void Remember(std::vector<master::MountIdentity>& list, master::MountIdentity m, size_t limit) {
  std::erase_if(list, [&](const master::MountIdentity& x) {
    return x.endpoint == m.endpoint && x.owner_token == m.owner_token;
  });
  list.insert(list.begin(), std::move(m));
  if (list.size() > limit) list.resize(limit);
}

}  // namespace

Status StoreNode::MountOne(size_t i) {
  Segment& seg = segments_[i];
  // Offered back so that a master restored from its data dir can take the
  // segment over with its objects (the memory is the same): the new epoch
  // still refuses every capability of the previous mount.
  master::PreviousMount previous;
  master::SegmentSpec spec;
  {
    std::lock_guard g(mu_);
    if (!seg.remembered.empty()) {
      previous.endpoint = seg.remembered.front().endpoint;
      previous.owner_token = seg.remembered.front().owner_token;
      previous.earlier.assign(seg.remembered.begin() + 1, seg.remembered.end());
    }
    if (seg.unanswered) spec = *seg.unanswered;
  }
  if (spec.name.empty()) {
    Endpoint ep = base_endpoint_;
    ep.epoch = RandomNonZero();
    spec.name = seg.name;
    spec.capacity = seg.memory->size();
    spec.owner_node = options_.node_id;
    spec.endpoint = ep.ToString();
    spec.tier = seg.tier;
    spec.owner_token = RandomNonZero();  // as random, and as secret: never leaves master and node
    if (const transfer::PmemFile* file = seg.memory->persistent()) {
      spec.file_identity = file->file_identity();
    }
  }
  bool adopted = false;
  StatusOr<master::SegmentId> id = master_->MountSegment(
      spec, &signer_, previous.endpoint.empty() ? nullptr : &previous, &adopted);
  if (!id.ok()) {
    const ErrorCode code = id.status().code();
    std::lock_guard g(mu_);
    if (code == ErrorCode::kUnavailable || code == ErrorCode::kTimeout) {
      // The master may have mounted it: a mount it can prove from now on.
      seg.unanswered = spec;
      Remember(seg.remembered, {spec.endpoint, spec.owner_token}, kRememberedMounts);
    } else {
      seg.unanswered.reset();
    }
    return Status(code, "mounting segment " + spec.name + " on master " + master_->address() +
                            ": " + id.status().message());
  }
  seg.memory->SetMount(id.value(), spec.endpoint);
  std::lock_guard g(mu_);
  seg.endpoint = spec.endpoint;
  seg.owner_token = spec.owner_token;
  seg.adopted = adopted;
  seg.unanswered.reset();
  Remember(seg.remembered, {spec.endpoint, spec.owner_token}, kRememberedMounts);
  return Status::Ok();
}

std::string StoreNode::endpoint(size_t i) const {
  std::lock_guard g(mu_);
  return segments_[i].endpoint;
}

void StoreNode::HeartbeatLoop() {
  // While the master cannot be reached, ask again after this long rather than
  // a whole interval: a restarted master then hears from the node (and answers
  // NODE_UNKNOWN, so it remounts) moments after it is back.
  constexpr int64_t kUnreachableRetryMs = 100;
  int64_t wait_ms = options_.heartbeat_interval_ms;
  std::unique_lock lock(mu_);
  while (!stop_) {
    cv_.wait_for(lock, std::chrono::milliseconds(wait_ms), [&] { return stop_ || beat_now_; });
    if (stop_) break;
    beat_now_ = false;
    lock.unlock();
    Status s = HeartbeatOnce();
    const bool unreachable =
        s.code() == ErrorCode::kUnavailable || s.code() == ErrorCode::kTimeout;
    wait_ms = unreachable ? std::min(options_.heartbeat_interval_ms, kUnreachableRetryMs)
                          : options_.heartbeat_interval_ms;
    // Also while unmounted after a refused remount (another cluster secret):
    // the master may be restarted with the right one.
    if (s.code() == ErrorCode::kNodeUnknown || (s.ok() && AnyUnmounted())) {
      Status m = Mount(/*fresh=*/s.code() == ErrorCode::kNodeUnknown);
      if (m.ok()) {
        std::lock_guard g(mu_);
        ++remounts_;
        for (const Segment& seg : segments_) {
          std::fprintf(stderr, "crescent store: remounted %s (segment id %u)%s\n",
                       seg.name.c_str(), seg.memory->id(),
                       seg.adopted ? ": the master took it over with its objects" : "");
        }
      } else {
        std::fprintf(stderr, "crescent store: remount failed: %s\n", m.ToString().c_str());
      }
    }
    lock.lock();
  }
}

Status StoreNode::HeartbeatOnce() {
  rpc::MasterClient::MasterClockReading clock;
  transfer::ClockGate::Reading r;
  r.sent_steady_ms = SteadyClock::Instance().NowMs();
  Status s = master_->Heartbeat(options_.node_id, &clock);
  r.received_steady_ms = SteadyClock::Instance().NowMs();
  r.master_unix_ms = clock.unix_ms;
  r.grace_ms = clock.capability_grace_ms;
  r.lifetime_ms = clock.capability_lifetime_ms;
  (void)clock_gate_.Record(r);
  // Said once per change (the heartbeat thread alone reads and writes it).
  const Status gate = clock_gate_.Check(UnixNowMs());
  if (!gate.ok() && !clock_refused_) {
    std::fprintf(stderr, "crescent store: clock skew: %s\n", gate.message().c_str());
  } else if (gate.ok() && clock_refused_) {
    std::fprintf(
        stderr,
        "crescent store: clock skew: this node's clock agrees with the master's again "
        "(%lld ms apart): serving capabilities\n",
        static_cast<long long>(clock_gate_.SkewMs(UnixNowMs(), SteadyClock::Instance().NowMs())));
  }
  clock_refused_ = !gate.ok();
  return s;
}

uint64_t StoreNode::remounts() const {
  std::lock_guard g(mu_);
  return remounts_;
}

void StoreNode::Stop() {
  {
    std::lock_guard g(mu_);
    if (stop_) return;
    stop_ = true;
  }
  cv_.notify_all();
  // Joined after the unmount: a call of the warmer in flight (slow on a busy
  // machine, at nice 19) must not delay hiding this node's replicas.
  if (warmer_) warmer_->RequestStop();
  if (heartbeat_.joinable()) heartbeat_.join();
  UnmountAll();
  if (warmer_) warmer_->Stop();
  if (shm_) shm_->Stop();
  if (tcp_) tcp_->Stop();
}

void StoreNode::UnmountAll() {
  if (!master_) return;
  for (Segment& seg : segments_) {
    if (seg.memory->id() == 0) continue;
    uint64_t token;
    {
      std::lock_guard g(mu_);
      token = seg.owner_token;
    }
    Status s = master_->UnmountSegment(seg.name, options_.node_id, token);
    if (!s.ok()) {
      std::fprintf(stderr,
                   "crescent store: unmount of %s failed (the master drops the segment "
                   "after the heartbeat TTL): %s\n",
                   seg.name.c_str(), s.ToString().c_str());
    }
  }
}

StoreNode::~StoreNode() {
  Stop();
  master_.reset();  // before mu_ and cv_, which its OnLeaderChange touches
}

void StoreNode::CollectMetrics(metrics::TextWriter& w) const {
  transfer_metrics_.Collect(w);
  const uint64_t remounted = remounts();
  auto each = [&](const char* name, const char* type, const char* help, auto value) {
    w.Family(name, type, help);
    for (size_t i = 0; i < segments_.size(); ++i) {
      const Segment& seg = segments_[i];
      w.Sample({{"segment", seg.name}, {"tier", seg.tier == master::Tier::kPmem ? "pmem" : "dram"}},
               static_cast<uint64_t>(value(i, seg)));
    }
  };
  each("crescent_store_segment_bytes", "gauge", "Size of each of the node's segments.",
       [](size_t, const Segment& s) { return s.memory->size(); });
  each("crescent_store_segment_mounted", "gauge",
       "1 while the segment is mounted on the master, else 0.",
       [](size_t, const Segment& s) { return s.memory->id() != 0 ? 1u : 0u; });
  each("crescent_store_warmed_bytes", "gauge",
       "Bytes of the segment whose pages were touched after start (--no-warm-pages, and "
       "persistent segments: 0).",
       [this](size_t i, const Segment&) { return i == 0 ? warmed_bytes() : 0; });
  w.Family("crescent_store_clock_skew_ms", "gauge",
           "This node's wall clock minus the master's, as measured at its heartbeats and "
           "carried on by its steady clock (0 before the first reading).");
  const int64_t unix_now = UnixNowMs(), steady_now = SteadyClock::Instance().NowMs();
  w.Sample({}, static_cast<double>(clock_gate_.SkewMs(unix_now, steady_now)));
  w.Family("crescent_store_clock_refusing", "gauge",
           "1 while the node refuses every capability because its clock disagrees with the "
           "master's by more than the capability grace, else 0.");
  w.Sample({}, clock_gate_.Open(unix_now, steady_now) ? uint64_t{0} : uint64_t{1});
  each("crescent_store_remounts_total", "counter",
       "Times the node mounted its segments again (a master restart, or it was dropped).",
       [remounted](size_t, const Segment&) { return remounted; });
}

}  // namespace crescent::store
