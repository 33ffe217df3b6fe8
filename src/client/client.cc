// crescent::Client (include/crescent/client.h): the put and get protocols over
// MasterClient (control) and ReplicaIo (data).
#include "crescent/client.h"

#include <cstdlib>
#include <stdexcept>

#include "client/client_impl.h"
#include "transfer/congestion.h"
#include "transfer/shm_transport.h"
#include "transfer/tcp_transport.h"

namespace crescent {

using client::CallTimer;
using client::ClientOp;
using client::OkBytes;
using client::Timed;
using client::TimedOne;

Client::Client(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Client::~Client() = default;

StatusOr<std::unique_ptr<Client>> Client::Connect(const ClientConfig& given) {
  ClientConfig config = given;
  if (config.tcp_congestion.empty()) {
    // The environment reaches clients made by programs that do not set it
    // themselves (the CLI verbs, the Python binding, the HiCache adapter).
    if (const char* env = std::getenv("CRESCENT_TCP_CONGESTION"); env != nullptr) {
      config.tcp_congestion = env;
    }
  }
  if (config.put_retry_ms < 0) {
    return Status(ErrorCode::kInvalidArgument, "put_retry_ms is " +
                                                   std::to_string(config.put_retry_ms) +
                                                   "; it must be 0 (no retry) or more");
  }
  // Accepted, these would fail every transfer later (a timeout of 0 expires at once).
  if (config.transfer_timeout_ms <= 0 || config.tcp_lanes < 1) {
    return Status(ErrorCode::kInvalidArgument,
                  "client config: need transfer_timeout_ms > 0 and tcp_lanes >= 1 (got " +
                      std::to_string(config.transfer_timeout_ms) + " and " +
                      std::to_string(config.tcp_lanes) + ")");
  }
  if (config.location_cache > 0 && !config.verify_checksums) {
    // The checksum is what makes a remembered location safe to read.
    return Status(ErrorCode::kInvalidArgument,
                  "client config: the location cache needs verify_checksums");
  }
  if (config.location_cache > 0 && config.location_cache_ttl_ms <= 0) {
    return Status(ErrorCode::kInvalidArgument, "client config: location_cache_ttl_ms is " +
                                                   std::to_string(config.location_cache_ttl_ms) +
                                                   "; it must be more than 0");
  }
  if (Status s = transfer::CheckCongestionControl(config.tcp_congestion); !s.ok()) {
    return Status(s.code(), "tcp_congestion: " + s.message());
  }
  auto impl = std::make_unique<Impl>(config);
  rpc::MasterClientOptions mo;
  mo.address = config.master_address;
  mo.rpc_timeout_ms = config.rpc_timeout_ms;
  mo.attempts = config.rpc_attempts;
  mo.lean_control = config.lean_control;
  mo.token = config.token;
  mo.tls = config.tls;
  StatusOr<std::unique_ptr<rpc::MasterClient>> master = rpc::MasterClient::Create(mo);
  if (!master.ok()) return master.status();
  impl->master = std::move(master.value());
  transfer::TcpTransportOptions to;
  to.lanes = config.tcp_lanes;
  to.congestion = config.tcp_congestion;
  impl->tcp = transfer::MakeTcpTransport(to);
  if (config.use_shared_memory) impl->shm = transfer::MakeShmTransport();
  impl->io =
      std::make_unique<client::ReplicaIo>(*impl->tcp, impl->shm.get(), config.transfer_timeout_ms);
  if (impl->shm && config.placement_hints > 0) {
    impl->hints = std::make_unique<client::PlacementHints>(config.placement_hints);
  }
  if (config.location_cache > 0) {
    impl->locations = std::make_unique<client::LocationCache>(config.location_cache);
    rpc::MasterClient* m = impl->master.get();
    impl->touches = std::make_unique<client::TouchBatcher>(
        [m](std::span<const std::string> keys) { return m->TouchKeys(keys); },
        config.location_touch_interval_ms);
  }
  Impl* self = impl.get();
  impl->putter = std::make_unique<client::PutPath>(
      *impl->master, *impl->io, impl->config, impl->put_retries,
      [self](const std::string& key, const rpc::RemotePut& put, uint64_t checksum, uint64_t size) {
        self->Remember(key, put.replicas);
        self->RememberPut(key, put, checksum, size);
      });
  return std::unique_ptr<Client>(new Client(std::move(impl)));
}

const std::string& Client::master_address() const { return impl_->master->address(); }

Status Client::Put(const std::string& key, std::span<const std::byte> value,
                   const PutOptions& options) {
  CallTimer timer(impl_->metrics, ClientOp::kPut);
  const std::byte* data = value.data();
  size_t size = value.size();
  Status s = std::move(impl_->PutMany({&key, 1}, {&data, 1}, {&size, 1}, options, false)[0]);
  if (s.ok()) impl_->metrics.AddBytes(ClientOp::kPut, size);
  return TimedOne(timer, std::move(s));
}

namespace {

// Sizes `value` to hold `size` bytes of `key`'s value. A value the client's
// memory cannot hold is NO_SPACE, never an exception across the library
// boundary (the caller may retry with GetInto and a buffer of its own).
StatusOr<std::byte*> SizeFor(std::vector<std::byte>& value, uint64_t size, const std::string& key) {
  try {
    value.resize(size);
  } catch (const std::exception&) {  // bad_alloc, or length_error past max_size()
    return Status(ErrorCode::kNoSpace, "cannot allocate " + std::to_string(size) +
                                           " bytes in the client for the value of '" + key + "'");
  }
  return value.data();
}

}  // namespace

StatusOr<std::vector<std::byte>> Client::Get(const std::string& key) {
  CallTimer timer(impl_->metrics, ClientOp::kGet);
  std::vector<std::byte> value;
  auto r = impl_->GetMany({&key, 1}, false, [&](size_t, uint64_t size) -> StatusOr<std::byte*> {
    return SizeFor(value, size, key);
  });
  if (!r[0].ok()) return TimedOne(timer, StatusOr<std::vector<std::byte>>(r[0].status()));
  impl_->metrics.AddBytes(ClientOp::kGet, value.size());
  return TimedOne(timer, StatusOr<std::vector<std::byte>>(std::move(value)));
}

StatusOr<KeyValue> Client::GetLongestPrefix(const std::string& key) {
  CallTimer timer(impl_->metrics, ClientOp::kGet);
  // A read whose capability expired before its copy asks again, as GetMany's.
  for (int round = 0;; ++round) {
    StatusOr<rpc::RemoteLongestPrefix> m = impl_->master->GetLongestPrefix(key);
    if (!m.ok()) return TimedOne(timer, StatusOr<KeyValue>(m.status()));
    KeyValue out{std::move(m->key), {}};
    StatusOr<std::byte*> buf = SizeFor(out.value, m->read.size, out.key);
    if (!buf.ok()) return TimedOne(timer, StatusOr<KeyValue>(buf.status()));
    std::vector<StatusOr<size_t>> res{size_t{m->read.size}};
    impl_->ReadGranted({&out.key, 1}, {0}, {&m->read}, {client::ObjectMemory{*buf, {}}}, res);
    if (res[0].ok()) {
      impl_->metrics.AddBytes(ClientOp::kGet, out.value.size());
      return TimedOne(timer, StatusOr<KeyValue>(std::move(out)));
    }
    if (res[0].status().code() != ErrorCode::kLeaseExpired || round + 1 >= kLeaseRetries) {
      return TimedOne(timer, StatusOr<KeyValue>(res[0].status()));
    }
    impl_->lease_retries.fetch_add(1, std::memory_order_relaxed);
  }
}

StatusOr<bool> Client::Exists(const std::string& key) {
  CallTimer timer(impl_->metrics, ClientOp::kExists);
  return TimedOne(timer, impl_->master->Exists(key));
}

Status Client::Remove(const std::string& key, bool force) {
  CallTimer timer(impl_->metrics, ClientOp::kRemove);
  impl_->Forget(key);
  return TimedOne(timer, impl_->master->Remove(key, force));
}

std::vector<Status> Client::BatchPut(std::span<const std::string> keys,
                                     std::span<const std::span<const std::byte>> values,
                                     const PutOptions& options, bool chain) {
  if (values.size() != keys.size()) {
    return std::vector<Status>(keys.size(),
                               Status(ErrorCode::kInvalidArgument, "one value per key needed"));
  }
  CallTimer timer(impl_->metrics, ClientOp::kPut);
  std::vector<const std::byte*> data;
  std::vector<size_t> sizes;
  for (auto v : values) {
    data.push_back(v.data());
    sizes.push_back(v.size());
  }
  std::vector<Status> r = impl_->PutMany(keys, data, sizes, options, chain);
  impl_->metrics.AddBytes(ClientOp::kPut, OkBytes(r, sizes));
  return Timed(timer, std::move(r));
}

std::vector<StatusOr<std::vector<std::byte>>> Client::BatchGet(std::span<const std::string> keys) {
  CallTimer timer(impl_->metrics, ClientOp::kGet);
  std::vector<std::vector<std::byte>> values(keys.size());
  auto r = impl_->GetMany(keys, false, [&](size_t i, uint64_t size) -> StatusOr<std::byte*> {
    return SizeFor(values[i], size, keys[i]);
  });
  std::vector<StatusOr<std::vector<std::byte>>> out;
  out.reserve(keys.size());
  uint64_t bytes = 0;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (r[i].ok()) {
      bytes += values[i].size();
      out.emplace_back(std::move(values[i]));
    } else {
      out.emplace_back(r[i].status());
    }
  }
  impl_->metrics.AddBytes(ClientOp::kGet, bytes);
  return Timed(timer, std::move(out));
}

std::vector<StatusOr<bool>> Client::BatchExists(std::span<const std::string> keys) {
  CallTimer timer(impl_->metrics, ClientOp::kExists);
  StatusOr<master::BatchExistsResult> r = impl_->master->BatchExists(keys);
  if (!r.ok()) return Timed(timer, std::vector<StatusOr<bool>>(keys.size(), r.status()));
  std::vector<StatusOr<bool>> out;
  out.reserve(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) {
    if (!r->statuses.empty() && !r->statuses[i].ok()) {
      out.emplace_back(std::move(r->statuses[i]));
    } else {
      out.emplace_back(bool{r->present[i]});
    }
  }
  return Timed(timer, std::move(out));
}

std::vector<Status> Client::BatchRemove(std::span<const std::string> keys, bool force) {
  CallTimer timer(impl_->metrics, ClientOp::kRemove);
  for (const std::string& k : keys) impl_->Forget(k);
  return Timed(timer, impl_->master->BatchRemove(keys, force));
}

Status Client::RegisterBuffer(const void* ptr, size_t size, BufferAccess access) {
  return impl_->buffers.Register(ptr, size, access);
}
Status Client::UnregisterBuffer(const void* ptr) { return impl_->buffers.Unregister(ptr); }
void Client::WaitBuffersWarm() const { impl_->buffers.WaitWarm(); }
Status Client::CheckBuffer(const void* ptr, size_t size, BufferAccess need) const {
  return impl_->buffers.Check(ptr, size, need);
}

Status Client::PutFrom(const std::string& key, const void* ptr, size_t size,
                       const PutOptions& options) {
  void* p = const_cast<void*>(ptr);
  return std::move(BatchPutFrom({&key, 1}, {&p, 1}, {&size, 1}, options, false)[0]);
}

StatusOr<size_t> Client::GetInto(const std::string& key, void* ptr, size_t capacity) {
  return std::move(BatchGetInto({&key, 1}, {&ptr, 1}, {&capacity, 1})[0]);
}

std::vector<Status> Client::BatchPutFrom(std::span<const std::string> keys,
                                         std::span<void* const> ptrs, std::span<const size_t> sizes,
                                         const PutOptions& options, bool chain) {
  CallTimer timer(impl_->metrics, ClientOp::kPut);
  if (Status s = impl_->CheckBatch(keys.size(), ptrs.size(), sizes.size()); !s.ok()) {
    return Timed(timer, std::vector<Status>(keys.size(), s));
  }
  // Keys whose buffer is not registered fail alone; the rest still go.
  std::vector<Status> out(keys.size());
  std::vector<std::string> ok_keys;
  std::vector<const std::byte*> ok_ptrs;
  std::vector<size_t> ok_sizes, ok_idx;
  for (size_t i = 0; i < keys.size(); ++i) {
    if (Status s = impl_->buffers.Check(ptrs[i], sizes[i], BufferAccess::kReadOnly); !s.ok()) {
      out[i] = std::move(s);
      continue;
    }
    ok_keys.push_back(keys[i]);
    ok_ptrs.push_back(static_cast<const std::byte*>(ptrs[i]));
    ok_sizes.push_back(sizes[i]);
    ok_idx.push_back(i);
  }
  if (chain && ok_idx.size() != keys.size()) {
    // A chain with a hole would link pages across it; refuse the whole batch.
    for (size_t i : ok_idx) {
      out[i] = Status(ErrorCode::kInvalidArgument, "another page of this chain was refused");
    }
    return Timed(timer, std::move(out));
  }
  std::vector<Status> r = impl_->PutMany(ok_keys, ok_ptrs, ok_sizes, options, chain);
  impl_->metrics.AddBytes(ClientOp::kPut, OkBytes(r, ok_sizes));
  for (size_t k = 0; k < ok_idx.size(); ++k) out[ok_idx[k]] = std::move(r[k]);
  return Timed(timer, std::move(out));
}

std::vector<StatusOr<size_t>> Client::BatchGetInto(std::span<const std::string> keys,
                                                   std::span<void* const> ptrs,
                                                   std::span<const size_t> capacities) {
  CallTimer timer(impl_->metrics, ClientOp::kGet);
  if (Status s = impl_->CheckBatch(keys.size(), ptrs.size(), capacities.size()); !s.ok()) {
    return Timed(timer, std::vector<StatusOr<size_t>>(keys.size(), s));
  }
  std::vector<StatusOr<size_t>> got =
      impl_->GetMany(keys, false, [&](size_t i, uint64_t size) -> StatusOr<std::byte*> {
        if (size > capacities[i]) {
          return Status(ErrorCode::kBufferTooSmall,
                        "buffer of " + std::to_string(capacities[i]) + " bytes is too small: '" +
                            keys[i] + "' needs " + std::to_string(size) + " bytes");
        }
        if (Status s = impl_->buffers.Check(ptrs[i], size, BufferAccess::kReadWrite); !s.ok()) {
          return s;
        }
        return static_cast<std::byte*>(ptrs[i]);
      });
  uint64_t bytes = 0;
  for (const auto& g : got) bytes += g.ok() ? g.value() : 0;
  impl_->metrics.AddBytes(ClientOp::kGet, bytes);
  return Timed(timer, std::move(got));
}

StatusOr<size_t> Client::BatchQueryPrefix(std::span<const std::string> keys) {
  CallTimer timer(impl_->metrics, ClientOp::kQueryPrefix);
  StatusOr<size_t> r = impl_->master->BatchQueryPrefix(keys);
  timer.Done(r.ok() ? keys.size() : 0, r.ok() ? 0 : keys.size());
  return r;
}

StatusOr<size_t> Client::GetPrefixInto(std::span<const std::string> keys,
                                       std::span<void* const> ptrs,
                                       std::span<const size_t> capacities) {
  CallTimer timer(impl_->metrics, ClientOp::kGetPrefix);
  if (Status s = impl_->CheckBatch(keys.size(), ptrs.size(), capacities.size()); !s.ok()) {
    timer.Done(0, keys.size());
    return s;
  }
  std::vector<StatusOr<size_t>> r =
      impl_->GetMany(keys, true, [&](size_t i, uint64_t size) -> StatusOr<std::byte*> {
        if (size > capacities[i]) {
          return Status(ErrorCode::kBufferTooSmall,
                        "page " + std::to_string(i) + " needs " + std::to_string(size) +
                            " bytes, buffer has " + std::to_string(capacities[i]));
        }
        if (Status s = impl_->buffers.Check(ptrs[i], size, BufferAccess::kReadWrite); !s.ok()) {
          return s;
        }
        return static_cast<std::byte*>(ptrs[i]);
      });
  size_t leading = 0;
  uint64_t bytes = 0;
  while (leading < r.size() && r[leading].ok()) bytes += r[leading++].value();
  impl_->metrics.AddBytes(ClientOp::kGetPrefix, bytes);
  timer.Done(leading, r.size() - leading);
  // A first page that is not stored makes an empty prefix; one that fails for
  // any other reason (a bad key or buffer, an unreachable master or node) is
  // an error, not an empty prefix.
  if (leading == 0 && !r.empty()) {
    ErrorCode c = r[0].status().code();
    if (c != ErrorCode::kObjectNotFound && c != ErrorCode::kObjectNotReady) return r[0].status();
  }
  return leading;
}

StatusOr<std::vector<std::string>> Client::List(const std::string& prefix, size_t limit,
                                                bool* truncated, const std::string& after) {
  CallTimer timer(impl_->metrics, ClientOp::kList);
  return TimedOne(timer, impl_->master->List(prefix, limit, truncated, after));
}

StatusOr<size_t> Client::RemoveByPrefix(const std::string& prefix, bool force) {
  if (prefix.empty()) {  // every key starts with "": removing them all takes RemoveAll
    return Status(ErrorCode::kInvalidArgument,
                  "an empty prefix would remove every key; to do that, call RemoveAll");
  }
  CallTimer timer(impl_->metrics, ClientOp::kRemove);
  impl_->ForgetAll();
  return TimedOne(timer, impl_->master->RemoveByPrefix(prefix, force));
}

StatusOr<size_t> Client::RemoveAll(bool force) {
  CallTimer timer(impl_->metrics, ClientOp::kRemove);
  impl_->ForgetAll();
  return TimedOne(timer, impl_->master->RemoveAll(force));
}

StatusOr<size_t> Client::EndSession(std::span<const std::string> keys) {
  CallTimer timer(impl_->metrics, ClientOp::kEndSession);
  StatusOr<size_t> marked = impl_->master->EndSession(keys);
  timer.Done(marked.ok() ? keys.size() : 0, marked.ok() ? 0 : keys.size());
  return marked;
}

StatusOr<uint64_t> Client::GetSize(const std::string& key) {
  StatusOr<RemoteRead> r = impl_->master->GetReplicaList(key);
  if (!r.ok()) return r.status();
  return r.value().size;
}

ClientCounters Client::Counters() const {
  ClientCounters c;
  c.copy_ahead_kept = impl_->copy_ahead_kept.load(std::memory_order_relaxed);
  c.copy_ahead_discarded = impl_->copy_ahead_discarded.load(std::memory_order_relaxed);
  c.shm_fallbacks = impl_->io->shm_fallbacks();
  c.checksum_mismatches = impl_->checksum_mismatches.load(std::memory_order_relaxed);
  c.put_retries = impl_->put_retries.load(std::memory_order_relaxed);
  c.replica_fallbacks = impl_->io->replica_fallbacks();
  c.lease_retries = impl_->lease_retries.load(std::memory_order_relaxed);
  const client::ClientMetrics& lm = impl_->metrics;
  c.location_hits = lm.LocationHits();
  c.location_misses = lm.LocationMisses();
  c.location_fallbacks_checksum = lm.LocationFallbacks(client::LocationFallback::kChecksum);
  c.location_fallbacks_expired = lm.LocationFallbacks(client::LocationFallback::kExpired);
  c.location_fallbacks_refused = lm.LocationFallbacks(client::LocationFallback::kRefused);
  c.location_fallbacks_unreachable = lm.LocationFallbacks(client::LocationFallback::kUnreachable);
  if (impl_->touches) {
    c.location_touches_sent = impl_->touches->sent();
    c.location_touches_failed = impl_->touches->failed();
  }
  if (impl_->shm) {
    const transfer::Transport::MappedMemory m = impl_->shm->Mapped();
    c.shm_mapped_bytes = m.mapped;
    c.shm_warmed_bytes = m.warmed;
  }
  return c;
}

std::string Client::Metrics() const {
  metrics::TextWriter w;
  impl_->metrics.Collect(w);
  const ClientCounters c = Counters();
  w.Family("crescent_client_put_retries_total", "counter",
           "Keys of puts tried again after a failure a moment may cure.");
  w.Sample({}, c.put_retries);
  w.Family("crescent_client_shm_fallbacks_total", "counter",
           "Transfers shared memory could not carry, sent again over TCP.");
  w.Sample({}, c.shm_fallbacks);
  w.Family("crescent_client_replica_fallbacks_total", "counter",
           "Reads that failed on one replica and were tried on the next.");
  w.Sample({}, c.replica_fallbacks);
  w.Family(
      "crescent_client_lease_retries_total", "counter",
      "Keys of gets asked of the master again after their capability expired before the copy.");
  w.Sample({}, c.lease_retries);
  w.Family("crescent_client_checksum_mismatches_total", "counter",
           "Replicas whose bytes did not match their value's checksum.");
  w.Sample({}, c.checksum_mismatches);
  w.Family("crescent_client_copy_ahead_total", "counter",
           "Same-host copies made during the lease round trip, by outcome.");
  w.Sample({{"outcome", "kept"}}, c.copy_ahead_kept);
  w.Sample({{"outcome", "discarded"}}, c.copy_ahead_discarded);
  w.Family("crescent_client_location_touches_total", "counter",
           "Keys of location-cache reads reported to the master, by result.");
  w.Sample({{"result", "sent"}}, c.location_touches_sent);
  w.Sample({{"result", "failed"}}, c.location_touches_failed);
  w.Family("crescent_client_shm_mapped_bytes", "gauge",
           "Bytes of same-host store-node segments this client has mapped.");
  w.Sample({}, c.shm_mapped_bytes);
  w.Family("crescent_client_shm_warmed_bytes", "gauge",
           "Of those, bytes whose pages this client has read once (first-access traps paid).");
  w.Sample({}, c.shm_warmed_bytes);
  return w.Take();
}

std::map<std::string, ClientOpStats> Client::OpStats() const {
  std::map<std::string, ClientOpStats> out;
  for (size_t i = 0; i < client::kClientOpCount; ++i) {
    const auto op = static_cast<ClientOp>(i);
    const metrics::HistogramSnapshot h = impl_->metrics.Latency(op);
    ClientOpStats s;
    s.calls = h.count;
    s.ok_keys = impl_->metrics.Keys(op, true);
    s.failed_keys = impl_->metrics.Keys(op, false);
    s.bytes = impl_->metrics.Bytes(op);
    s.seconds = static_cast<double>(h.sum) / 1e9;
    s.p50_seconds = h.Quantile(0.5) / 1e9;
    s.p99_seconds = h.Quantile(0.99) / 1e9;
    out.emplace(std::string(client::ClientOpName(op)), s);
  }
  return out;
}

StatusOr<ClusterStat> Client::Stat() {
  StatusOr<rpc::ClusterStats> s = impl_->master->Stats();
  if (!s.ok()) return s.status();
  ClusterStat out;
  out.objects = s.value().objects;
  out.pending_puts = s.value().pending_puts;
  out.capacity_bytes = s.value().capacity_bytes;
  out.used_bytes = s.value().used_bytes;
  out.held_bytes = s.value().held_bytes;
  out.largest_object = s.value().largest_object;
  out.admin_port = s.value().admin_port;
  out.counters = s.value().counters;
  for (const master::TenantStats& t : s.value().tenants) {
    out.tenants.push_back(
        {t.tenant, t.quota_bytes, t.bytes, t.objects, t.hits, t.misses, t.evictions});
  }
  out.masters = s.value().masters;
  for (const master::SegmentInfo& seg : s.value().segments) {
    out.segments.push_back({seg.spec.name, seg.spec.owner_node, seg.spec.endpoint,
                            seg.spec.capacity, seg.used_bytes,
                            seg.spec.tier == master::Tier::kPmem ? "pmem" : "dram"});
  }
  return out;
}

}  // namespace crescent
