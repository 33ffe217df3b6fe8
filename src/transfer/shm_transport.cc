// ShmTransport: one mapping per endpoint, made by one handshake (shm_protocol.h)
// and shared by every caller. A mapping is reference-counted (shared_ptr), so a
// caller still copying keeps it alive while another thread replaces it after the
// node remounted; the last reference unmaps it.
//
// A store node that exits leaves our mapping of its memory behind, and a copy
// into it still "succeeds". So every mapping keeps its handshake connection
// open; the node holds its end until it stops or exits (shm_server.cc), and
// after each batch of copies the transport polls it once per mapping used: if
// the node is gone, the batch's ops on it fail with kUnavailable (a put is then
// revoked instead of publishing bytes nobody can serve) and the mapping is
// dropped. Mappings of nodes that went away while unused are dropped by a sweep
// at most once per kSweepInterval (from Execute and CanReach), which frees
// their memory.
//
// Reads copy from the mapping, which is read-only (the node seals its memfd).
// Writes are performed by the node (shm_server.h): the transport sends a write
// request naming its buffer over one of a small pool of kept connections per
// endpoint and waits for the reply; the node copies from our memory, checking
// the capability as it goes.
//
// Locking: mu_ guards the endpoint and reachability tables; each endpoint's own
// mutex serialises its handshakes, so concurrent first callers wait for one
// handshake instead of racing several; its write_mu guards the idle write
// connections.
#include "transfer/shm_transport.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include "common/endpoint.h"
#include "common/fd.h"
#include "common/value_hash.h"
#include "transfer/buffer_slices.h"
#include "transfer/bulk_copy.h"
#include "transfer/copy_hash.h"
#include "transfer/page_warmer.h"
#include "transfer/shm_protocol.h"

namespace crescent::transfer {
namespace {

using Clock = std::chrono::steady_clock;

// Idle write connections kept per endpoint; more concurrent writers connect anew.
constexpr size_t kIdleWriteConnections = 8;
// A failed CanReach is retried after this long (the node may have started).
constexpr auto kNegativeReachTtl = std::chrono::seconds(5);
// How often Execute and CanReach look for mappings whose node stopped serving.
constexpr auto kSweepInterval = std::chrono::seconds(1);

struct Mapping {
  std::byte* data = nullptr;
  uint64_t size = 0;
  uint32_t segment = 0;
  ScopedFd conn;  // the handshake connection, held open while the node serves
  // Reads one byte of each page from user mode, in the background, so that
  // first copies out of a page do not pay a first-access trap (page_warmer.h).
  // Null for a persistent segment's file, mapped lazily (Handshake).
  std::unique_ptr<PageWarmer> warmer;
  // [offset, offset + length) lies inside the mapping (written so it cannot wrap).
  bool Holds(uint64_t offset, uint64_t length) const {
    return offset <= size && length <= size - offset;
  }
  ~Mapping() {
    warmer.reset();  // stopped and joined before its pages go
    if (data) munmap(data, size);
  }  // then conn closes
};

Status Errno(ErrorCode code, const std::string& what, int err) {
  return Status(code, what + ": " + std::strerror(err));
}

// A connected socket to abstract socket `name`, with send/receive timeouts.
StatusOr<ScopedFd> Connect(const std::string& name, int64_t timeout_ms) {
  sockaddr_un addr;
  socklen_t len = 0;
  if (!shm::AbstractAddress(name, addr, len)) {
    return Status(ErrorCode::kInvalidArgument, "bad shm name '" + name + "'");
  }
  ScopedFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Errno(ErrorCode::kIoError, "shm socket", errno);
  if (timeout_ms < 1) timeout_ms = 1;
  timeval tv{static_cast<time_t>(timeout_ms / 1000),
             static_cast<suseconds_t>((timeout_ms % 1000) * 1000)};
  setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd.get(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
  int rc;
  do {
    rc = connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len);
  } while (rc != 0 && errno == EINTR);
  if (rc != 0) {
    int err = errno;
    // EAGAIN: the listener's backlog is full (Unix sockets do not queue more).
    return Errno(err == EAGAIN ? ErrorCode::kTimeout : ErrorCode::kUnavailable,
                 "shm connect to '" + name + "'", err);
  }
  return fd;
}

bool IsTimeout(int err) { return err == EAGAIN || err == EWOULDBLOCK; }

// A read's copy out of the segment into `to` (one buffer, or an op's slices
// in order, `length` bytes in all); with `checksum_out`, copied and hashed in
// one pass, the XXH3 state carried from slice to slice (copy_hash.h).
void CopyOut(std::span<const BufferSlice> to, const std::byte* from, uint64_t length,
             uint64_t* checksum_out) {
  CopyHasher hasher(length >= kStreamingFrom);
  for (const BufferSlice& slice : to) {
    if (checksum_out == nullptr) {
      BulkCopy(slice.data, from, slice.length);
    } else {
      hasher.Copy(slice.data, from, slice.length);
    }
    from += slice.length;
  }
  if (checksum_out != nullptr) *checksum_out = hasher.Digest();
}

// Whether the node that handed out `m` still serves it: its end of the held
// handshake connection is open. The node never sends on it, so readable or
// hung up means it closed (stopped, or exited and the kernel closed it).
bool NodeServes(const Mapping& m) {
  pollfd p{m.conn.get(), POLLIN | POLLRDHUP, 0};
  int rc;
  do {
    rc = poll(&p, 1, 0);
  } while (rc < 0 && errno == EINTR);
  return rc <= 0;  // a poll error tells nothing: keep the mapping
}

// Closes every fd carried by `msg`'s control data except the first SCM_RIGHTS
// one, which it returns (none if there is none).
ScopedFd TakeFirstFd(msghdr& msg) {
  ScopedFd first;
  for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
    if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS) continue;
    size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (size_t i = 0; i < n; ++i) {
      int raw;
      std::memcpy(&raw, CMSG_DATA(c) + i * sizeof(int), sizeof raw);
      ScopedFd fd(raw);
      if (!first.valid()) first = std::move(fd);  // any other closes here
    }
  }
  return first;
}

// Sends `cap`, receives the reply and the memfd, and maps it.
StatusOr<std::shared_ptr<Mapping>> Handshake(const std::string& name, const Capability& cap,
                                             int64_t timeout_ms) {
  StatusOr<ScopedFd> conn_or = Connect(name, timeout_ms);
  if (!conn_or.ok()) return conn_or.status();
  ScopedFd conn = std::move(conn_or).value();

  uint8_t req[shm::kRequestBytes];
  shm::EncodeRequest(shm::Request{cap, shm::Kind::kMap, 0, {}}, req);
  size_t sent = 0;
  Status send_failure;
  while (sent < sizeof req) {
    ssize_t w = send(conn.get(), req + sent, sizeof req - sent, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) {
      int err = errno;
      send_failure = Errno(IsTimeout(err) ? ErrorCode::kTimeout : ErrorCode::kUnavailable,
                           "shm handshake send", err);
      // A server that refused us may have replied and closed already: its
      // reply, still queued for us, says why better than EPIPE does.
      if (err != EPIPE && err != ECONNRESET) return send_failure;
      break;
    }
    sent += static_cast<size_t>(w);
  }

  uint8_t buf[shm::kReplyBytes];
  ScopedFd memfd;
  size_t got = 0;
  while (got < sizeof buf) {
    iovec iov{buf + got, sizeof buf - got};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)];
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    ssize_t r = recvmsg(conn.get(), &msg, MSG_CMSG_CLOEXEC);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int err = errno;
      if (!send_failure.ok()) return send_failure;
      return Errno(IsTimeout(err) ? ErrorCode::kTimeout : ErrorCode::kUnavailable,
                   "shm handshake receive", err);
    }
    ScopedFd fd = TakeFirstFd(msg);
    // The protocol sends one fd; any other closes here.
    if (fd.valid() && !memfd.valid()) memfd = std::move(fd);
    if (r == 0) {
      if (!send_failure.ok()) return send_failure;
      return Status(ErrorCode::kUnavailable, "shm server closed during handshake");
    }
    if (msg.msg_flags & MSG_CTRUNC) {
      return Status(ErrorCode::kInternal, "shm handshake: control data truncated");
    }
    got += static_cast<size_t>(r);
  }

  shm::Reply reply;
  if (!shm::DecodeReply(buf, reply)) {
    return Status(ErrorCode::kInternal, "malformed shm handshake reply");
  }
  if (reply.code != ErrorCode::kOk) {
    return Status(reply.code, "shm handshake refused: " + reply.message);
  }
  if (!send_failure.ok()) return send_failure;  // an OK reply to a request it never got
  if (!memfd.valid()) return Status(ErrorCode::kInternal, "shm handshake reply carried no fd");
  if (reply.segment != cap.segment) {
    return Status(ErrorCode::kSegmentNotFound,
                  "shm server holds segment " + std::to_string(reply.segment) +
                      ", capability names " + std::to_string(cap.segment));
  }
  struct stat st {};
  if (fstat(memfd.get(), &st) != 0) return Errno(ErrorCode::kIoError, "fstat shm fd", errno);
  if (reply.size == 0 || st.st_size < 0 || static_cast<uint64_t>(st.st_size) < reply.size) {
    return Status(ErrorCode::kInternal, "shm fd holds " + std::to_string(st.st_size) +
                                            " bytes, server announced " +
                                            std::to_string(reply.size));
  }
  // A DRAM segment is the node's memfd, sealed against writes (segment_memory.cc):
  // the node reserved its pages, so MAP_POPULATE maps them all now, once per
  // endpoint, keeping page faults out of every later copy, and the warmer below
  // the first-access traps of a VM that shadows page tables. A persistent
  // segment is a file (pmem_file.h), which cannot carry that seal: it is mapped
  // lazily, each page when a copy first reads it, and never warmed. Populating
  // or warming it would bring in the whole file (0.55 s for 512 MiB in tmpfs on
  // the development VM, past a read's lease; on an SSD, reading it all) before
  // or beside the first read. Read-only either way: writes go through the node.
  const int seals = fcntl(memfd.get(), F_GET_SEALS);
  const bool dram = seals >= 0 && (seals & F_SEAL_FUTURE_WRITE) != 0;
  void* p =
      mmap(nullptr, reply.size, PROT_READ, MAP_SHARED | (dram ? MAP_POPULATE : 0), memfd.get(), 0);
  if (p == MAP_FAILED) return Errno(ErrorCode::kIoError, "mmap shm segment", errno);
  auto mapping = std::make_shared<Mapping>();
  mapping->data = static_cast<std::byte*>(p);
  mapping->size = reply.size;
  mapping->segment = reply.segment;
  mapping->conn = std::move(conn);
  if (dram) {
    mapping->warmer =
        std::make_unique<PageWarmer>(mapping->data, mapping->size, PageWarmer::Access::kUser);
  }
  return mapping;  // memfd closes here: the mapping keeps the pages
}

class ShmTransport final : public Transport {
 public:
  bool CanReach(const std::string& endpoint) override;
  std::vector<Status> Execute(std::span<const TransferOp> ops, int64_t timeout_ms) override;
  const char* Name() const override { return "shm"; }
  bool CopyAhead(const std::string& endpoint, uint32_t segment, uint64_t offset, uint64_t length,
                 std::span<const BufferSlice> to, uint64_t* checksum_out) override;
  MappedMemory Mapped() override;

 private:
  struct EndpointState {
    std::string shm_name;
    std::mutex mu;  // serialises handshakes; guards mapping
    std::shared_ptr<Mapping> mapping;
    std::mutex write_mu;                 // guards idle_writers
    std::vector<ScopedFd> idle_writers;  // kept write connections, not in use
  };
  struct Reach {
    bool ok = false;
    Clock::time_point checked;
  };

  StatusOr<std::shared_ptr<EndpointState>> State(const std::string& endpoint);
  StatusOr<std::shared_ptr<Mapping>> MappingFor(const TransferOp& op, Clock::time_point deadline);
  // Has the node perform `op`, a write (shm_server.h).
  Status WriteThroughNode(const TransferOp& op, Clock::time_point deadline);
  // `used` is set to the mapping the op copied through, if it got one.
  Status ExecuteOne(const TransferOp& op, Clock::time_point deadline,
                    std::shared_ptr<Mapping>& used);
  // Drops `m` from `endpoint` unless a newer mapping has replaced it there.
  void Drop(const std::string& endpoint, const std::shared_ptr<Mapping>& m);
  // Drops the mappings of nodes that no longer serve; at most once per kSweepInterval.
  void SweepGone();

  std::mutex mu_;
  std::unordered_map<std::string, std::shared_ptr<EndpointState>> endpoints_;
  std::unordered_map<std::string, Reach> reach_;
  std::atomic<int64_t> next_sweep_{0};  // Clock ticks; SweepGone's next due time
};

StatusOr<std::shared_ptr<ShmTransport::EndpointState>> ShmTransport::State(
    const std::string& endpoint) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = endpoints_.find(endpoint); it != endpoints_.end()) return it->second;
  }
  StatusOr<Endpoint> ep = ParseEndpoint(endpoint);
  if (!ep.ok()) return ep.status();
  if (ep->shm_name.empty()) {
    return Status(ErrorCode::kUnavailable, "endpoint '" + endpoint + "' offers no shm");
  }
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = endpoints_[endpoint];
  if (!slot) {
    slot = std::make_shared<EndpointState>();
    slot->shm_name = ep->shm_name;
  }
  return slot;
}

bool ShmTransport::CanReach(const std::string& endpoint) {
  SweepGone();
  auto now = Clock::now();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (auto it = reach_.find(endpoint); it != reach_.end()) {
      if (it->second.ok || now - it->second.checked < kNegativeReachTtl) return it->second.ok;
    }
  }
  bool ok = false;
  if (StatusOr<Endpoint> ep = ParseEndpoint(endpoint); ep.ok() && !ep->shm_name.empty()) {
    // Connecting proves the socket is in our network namespace, i.e. same host;
    // the server sees EOF instead of a request and just closes.
    ok = Connect(ep->shm_name, 1000).ok();  // and closed at once
  }
  std::lock_guard<std::mutex> lock(mu_);
  reach_[endpoint] = Reach{ok, now};
  return ok;
}

StatusOr<std::shared_ptr<Mapping>> ShmTransport::MappingFor(const TransferOp& op,
                                                            Clock::time_point deadline) {
  StatusOr<std::shared_ptr<EndpointState>> state_or = State(op.endpoint);
  if (!state_or.ok()) return state_or.status();
  EndpointState& state = **state_or;
  std::lock_guard<std::mutex> lock(state.mu);
  // A mapping for another segment id means the node remounted (or the caller's
  // capability is stale): handshake once with this capability. Only a
  // successful handshake replaces the mapping, so a stale capability cannot
  // evict a good one.
  if (state.mapping && state.mapping->segment == op.cap.segment) return state.mapping;
  {
    // A handshake with this endpoint failed a moment ago (below): do not pay
    // for another within the same batch; the caller goes over TCP.
    std::lock_guard<std::mutex> reach_lock(mu_);  // after state.mu: never the reverse
    auto it = reach_.find(op.endpoint);
    if (it != reach_.end() && !it->second.ok &&
        Clock::now() - it->second.checked < kNegativeReachTtl) {
      return Status(ErrorCode::kUnavailable, "shared memory of " + op.endpoint +
                                                 " is unavailable (a recent handshake failed)");
    }
  }
  int64_t left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  if (left <= 0) return Status(ErrorCode::kTimeout, "shm handshake: deadline passed");
  StatusOr<std::shared_ptr<Mapping>> fresh = Handshake(state.shm_name, op.cap, left);
  if (!fresh.ok()) {
    if (IsShmPathFailure(fresh.status().code())) {
      // The path, not the capability, failed (socket gone, segment not
      // mappable here): CanReach says no until the negative reach expires, so
      // callers use TCP meanwhile instead of failing here op after op.
      std::lock_guard<std::mutex> reach_lock(mu_);  // after state.mu: never the reverse
      reach_[op.endpoint] = Reach{false, Clock::now()};
    }
    return fresh.status();
  }
  state.mapping = *fresh;
  return state.mapping;
}

Status ShmTransport::ExecuteOne(const TransferOp& op, Clock::time_point deadline,
                                std::shared_ptr<Mapping>& used) {
  const Capability& cap = op.cap;
  if (!op.HasMemory()) return Status(ErrorCode::kInvalidArgument, "null transfer buffer");
  if (!op.slices.empty() && !SlicesCover(op.slices, op.cap.length)) {
    return Status(ErrorCode::kInvalidArgument,
                  "a transfer op's slices must be non-empty and sum to its range's " +
                      std::to_string(op.cap.length) + " bytes");
  }
  if (cap.op != AccessOp::kRead && cap.op != AccessOp::kWrite) {
    return Status(ErrorCode::kInvalidArgument, "unknown transfer op");
  }
  if (cap.length == 0) return Status(ErrorCode::kInvalidArgument, "empty transfer range");
  if (cap.op == AccessOp::kWrite) return WriteThroughNode(op, deadline);
  StatusOr<std::shared_ptr<Mapping>> mapping_or = MappingFor(op, deadline);
  if (!mapping_or.ok()) return mapping_or.status();
  const Mapping& m = **mapping_or;
  if (cap.expiry_unix_ms <= UnixNowMs()) {
    return Status(ErrorCode::kLeaseExpired, "capability expired before the shm copy");
  }
  if (!m.Holds(cap.offset, cap.length)) {
    return Status(ErrorCode::kInvalidArgument,
                  "range [" + std::to_string(cap.offset) + ", +" + std::to_string(cap.length) +
                      ") is outside the shm segment of " + std::to_string(m.size) + " bytes");
  }
  used = *mapping_or;
  BufferSlice one;
  CopyOut(MemoryOf(op, &one), m.data + cap.offset, cap.length, op.checksum_out);
  // The range may have been reused after expiry: bytes copied late are junk.
  // (The node's hang-up, checked after the batch, covers a remount.)
  if (cap.expiry_unix_ms <= UnixNowMs()) {
    return Status(ErrorCode::kLeaseExpired, "capability expired during the shm read");
  }
  return Status::Ok();
}

Status ShmTransport::WriteThroughNode(const TransferOp& op, Clock::time_point deadline) {
  StatusOr<std::shared_ptr<EndpointState>> state_or = State(op.endpoint);
  if (!state_or.ok()) return state_or.status();
  EndpointState& state = **state_or;
  auto left_ms = [&] {
    return std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  };
  ScopedFd conn;
  {
    std::lock_guard lock(state.write_mu);
    if (!state.idle_writers.empty()) {
      conn = std::move(state.idle_writers.back());
      state.idle_writers.pop_back();
    }
  }
  if (!conn.valid()) {
    if (left_ms() <= 0) return Status(ErrorCode::kTimeout, "shm write: deadline passed");
    StatusOr<ScopedFd> fresh = Connect(state.shm_name, left_ms());
    if (!fresh.ok()) return fresh.status();
    conn = std::move(fresh).value();
  }
  // One buffer: kWrite with its address. Slices: kWriteV, their table after
  // the request (shm_protocol.h), which the node reads with process_vm_readv.
  std::string req(shm::kRequestBytes, '\0');
  {
    uint8_t fixed[shm::kRequestBytes];
    shm::Request r{op.cap, shm::Kind::kWrite, reinterpret_cast<uintptr_t>(op.buffer), {}};
    if (!op.slices.empty()) {
      r.kind = shm::Kind::kWriteV;
      r.address = op.slices.size();
      for (const BufferSlice& slice : op.slices) {
        r.slices.push_back({reinterpret_cast<uintptr_t>(slice.data), slice.length});
      }
    }
    shm::EncodeRequest(r, fixed);
    std::memcpy(req.data(), fixed, sizeof fixed);
    shm::AppendSlices(r, req);
  }
  size_t sent = 0;
  while (sent < req.size()) {
    ssize_t w = send(conn.get(), req.data() + sent, req.size() - sent, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR) continue;
    // A kept connection the node closed (it restarted its server): a path failure.
    if (w < 0) {
      return Errno(ErrorCode::kUnavailable,
                   "shm write request to " + op.endpoint + " (the node exited or stopped?)", errno);
    }
    sent += static_cast<size_t>(w);
  }
  // While the node copies, this thread hashes the same bytes (both only read
  // them), so the checksum costs the put no time of its own.
  if (op.checksum_out != nullptr) {
    BufferSlice one;
    ValueHasher h;
    for (const BufferSlice& slice : MemoryOf(op, &one)) h.Update(slice.data, slice.length);
    *op.checksum_out = h.Digest();
  }
  // The reply comes once the node has copied everything (or given up): wait
  // for it up to the op's deadline. Our buffer must stay untouched until then,
  // and it does: the caller waits for Execute.
  uint8_t buf[shm::kReplyBytes];
  size_t got = 0;
  while (got < sizeof buf) {
    int64_t left = left_ms();
    if (left <= 0) {
      // The node may still be copying; the connection is dropped (never reused
      // mid-request), and the put will be revoked. Its capability fences the rest.
      return Status(ErrorCode::kTimeout, "shm write: no reply from the node before the deadline");
    }
    pollfd p{conn.get(), POLLIN, 0};
    int rc = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 60'000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) continue;
    ssize_t r = recv(conn.get(), buf + got, sizeof buf - got, MSG_DONTWAIT);
    if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (r <= 0) {
      return Status(ErrorCode::kUnavailable,
                    "store node " + op.endpoint + " closed the shm connection during a write");
    }
    got += static_cast<size_t>(r);
  }
  shm::Reply reply;
  if (!shm::DecodeReply(buf, reply)) {
    return Status(ErrorCode::kInternal, "malformed shm write reply");
  }
  {
    std::lock_guard lock(state.write_mu);
    if (state.idle_writers.size() < kIdleWriteConnections) {
      state.idle_writers.push_back(std::move(conn));
    }
  }
  if (reply.code != ErrorCode::kOk) return Status(reply.code, "shm write: " + reply.message);
  // Map the segment if we have not (MappingFor returns at once when we have):
  // a get of what we just put can then be copied ahead (CopyAhead needs a
  // mapping). A failed handshake changes nothing for the write, which is done.
  (void)MappingFor(op, deadline);
  return Status::Ok();
}

bool ShmTransport::CopyAhead(const std::string& endpoint, uint32_t segment, uint64_t offset,
                             uint64_t length, std::span<const BufferSlice> to,
                             uint64_t* checksum_out) {
  std::shared_ptr<EndpointState> state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = endpoints_.find(endpoint);
    if (it == endpoints_.end()) return false;
    state = it->second;
  }
  std::shared_ptr<Mapping> m;
  {
    // A handshake in progress holds the lock for up to its deadline: do not wait.
    std::unique_lock<std::mutex> lock(state->mu, std::try_to_lock);
    if (!lock.owns_lock()) return false;
    m = state->mapping;
  }
  // The mapping is held (not unmapped under us) until the copy is done.
  if (!m || m->segment != segment || length == 0 || !SlicesCover(to, length) ||
      !m->Holds(offset, length)) {
    return false;
  }
  CopyOut(to, m->data + offset, length, checksum_out);
  if (!NodeServes(*m)) {  // the bytes may be right, but a live replica should serve them
    Drop(endpoint, m);
    return false;
  }
  return true;
}

Transport::MappedMemory ShmTransport::Mapped() {
  std::vector<std::shared_ptr<EndpointState>> states;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (const auto& [endpoint, state] : endpoints_) states.push_back(state);
  }
  MappedMemory out;
  for (const auto& state : states) {
    std::shared_ptr<Mapping> m;
    {
      // A handshake in progress holds the lock: its mapping is not counted yet.
      std::unique_lock<std::mutex> lock(state->mu, std::try_to_lock);
      if (!lock.owns_lock()) continue;
      m = state->mapping;
    }
    if (!m) continue;
    out.mapped += m->size;
    // A lazily mapped file has no warming to wait for.
    out.warmed += m->warmer ? m->warmer->warmed_bytes() : m->size;
  }
  return out;
}

void ShmTransport::Drop(const std::string& endpoint, const std::shared_ptr<Mapping>& m) {
  std::shared_ptr<EndpointState> state;
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = endpoints_.find(endpoint);
    if (it == endpoints_.end()) return;
    state = it->second;
  }
  {
    std::lock_guard<std::mutex> lock(state->mu);
    if (state->mapping != m) return;  // replaced by a newer handshake meanwhile
    state->mapping.reset();
  }
  // The node is gone: use TCP (which will fail over) instead of handshaking
  // with it op after op, and forget its entry (each node start is a new one).
  std::lock_guard<std::mutex> lock(mu_);
  reach_[endpoint] = Reach{false, Clock::now()};
  if (auto it = endpoints_.find(endpoint); it != endpoints_.end() && it->second == state) {
    endpoints_.erase(it);
  }
}

void ShmTransport::SweepGone() {
  // Every transfer and replica choice passes here: only a due sweep takes a lock.
  const int64_t now = Clock::now().time_since_epoch().count();
  int64_t due = next_sweep_.load(std::memory_order_relaxed);
  if (now < due ||
      !next_sweep_.compare_exchange_strong(due, now + Clock::duration(kSweepInterval).count(),
                                           std::memory_order_relaxed)) {
    return;  // not due, or another caller took this one
  }
  std::vector<std::pair<std::string, std::shared_ptr<EndpointState>>> states;
  {
    std::lock_guard<std::mutex> lock(mu_);
    states.assign(endpoints_.begin(), endpoints_.end());
  }
  for (auto& [endpoint, state] : states) {
    std::shared_ptr<Mapping> m;
    {
      // A handshake in progress holds the lock: its mapping is checked next time.
      std::unique_lock<std::mutex> lock(state->mu, std::try_to_lock);
      if (!lock.owns_lock()) continue;
      m = state->mapping;
    }
    if (m && !NodeServes(*m)) Drop(endpoint, m);
  }
}

std::vector<Status> ShmTransport::Execute(std::span<const TransferOp> ops, int64_t timeout_ms) {
  std::vector<Status> out;
  out.reserve(ops.size());
  std::vector<std::shared_ptr<Mapping>> used(ops.size());
  // The timeout bounds each op, from when it starts (transport.h).
  for (size_t i = 0; i < ops.size(); ++i) {
    out.push_back(
        ExecuteOne(ops[i], Clock::now() + std::chrono::milliseconds(timeout_ms), used[i]));
  }
  // Once per mapping, after its last copy: bytes copied into (or out of) the
  // memory of a node that no longer serves it are nobody's.
  std::vector<const Mapping*> checked, gone;
  for (size_t i = 0; i < ops.size(); ++i) {
    const Mapping* m = used[i].get();
    if (m == nullptr || std::find(checked.begin(), checked.end(), m) != checked.end()) continue;
    checked.push_back(m);
    if (NodeServes(*m)) continue;
    gone.push_back(m);
    Drop(ops[i].endpoint, used[i]);
  }
  for (size_t k = 0; k < ops.size() && !gone.empty(); ++k) {
    if (out[k].ok() && std::find(gone.begin(), gone.end(), used[k].get()) != gone.end()) {
      out[k] = Status(ErrorCode::kUnavailable,
                      "store node " + ops[k].endpoint +
                          " no longer serves its shared memory (it exited or shut down)");
    }
  }
  SweepGone();
  return out;
}

}  // namespace

std::unique_ptr<Transport> MakeShmTransport() { return std::make_unique<ShmTransport>(); }

}  // namespace crescent::transfer
