// Client side of the TCP data plane.
//
// Design:
//  - No I/O threads. The thread that calls Execute() moves the bytes itself,
//    over non-blocking sockets, in one poll() loop across the batch's lanes. A
//    reply is read by the thread that waits for it: no hand-off to an I/O
//    thread and back, each of which costs a futex wake-up (tens of microseconds
//    on a VM). Concurrent callers each run their own loop over their own lanes.
//  - A lane reading a payload raises SO_RCVLOWAT (wire::PayloadLowat), so
//    poll() reports it once the rest of the payload, or a step of it, has
//    arrived instead of at every burst. Lanes that share the poll use 1 MiB
//    steps, and the loop serves the other lanes meanwhile. A lane polled alone
//    uses 128 KiB steps: it copies each step out while the sender writes the
//    next, and wakes a few times per payload instead of at every burst
//    (same-run A/Bs: the whole payload as one mark took one-object 1 MiB gets
//    from ~0.6x to ~0.4x of a raw loopback stream, 128 KiB steps raised them
//    by 13-19% over mark 1; the 1 MiB steps took shared-lane batches of 8
//    from 0.78x to 0.95x).
//  - Execute() groups ops by endpoint, spreads each group over up to
//    options.lanes connections (least-loaded by bytes) and, per lane, writes
//    every request (gather writes straight from the caller's buffers) while it
//    reads the responses in order (payloads straight into the caller's
//    buffers). Doing both in one loop is what keeps a pipelined lane from
//    deadlocking when both directions' socket buffers are full.
//  - Timeouts bound each transfer, not the batch: a lane's deadline is
//    `timeout_ms` after it started or answered its last op, so each op has
//    that long from the moment its turn on the lane comes (a lane answers in
//    order), and a batch of many quick ops may take longer in all. Each new
//    connection has a connect deadline too; poll() never sleeps past the
//    earliest. A lane past its deadline fails with kTimeout (kUnavailable if
//    it was still connecting and its connect deadline came first).
//  - A stop switch (TcpTransportOptions::stop) is looked at before each
//    poll(), which then sleeps at most kStopCheckMs: once it is set, every
//    lane not done fails with kClosed.
//  - A lane's first failure is the status of every op it had not answered yet;
//    a lane that failed is closed, never pooled. At most options.lanes idle
//    connections per endpoint are kept (concurrent batches may open more).
#include "transfer/tcp_transport.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstring>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/endpoint.h"
#include "common/fd.h"
#include "common/value_hash.h"
#include "transfer/buffer_slices.h"
#include "transfer/congestion.h"
#include "transfer/wire.h"

namespace crescent::transfer {
namespace {

using Clock = std::chrono::steady_clock;

using Socket = ScopedFd;  // an owned socket

struct Address {
  sockaddr_storage storage{};
  socklen_t length = 0;
};

// One connection's share of a batch, driven by Execute's poll loop.
struct Lane {
  std::string endpoint;  // HOST:PORT, for messages
  Socket socket;
  int lowat = 1;  // the socket's SO_RCVLOWAT
  bool connecting = false;
  Clock::time_point connect_deadline;
  Clock::time_point deadline;  // for its next answer: timeout after its last one
  std::vector<size_t> ops;  // indices into the batch, in input order
  std::vector<wire::RequestBytes> requests;
  std::vector<iovec> out;  // requests and write payloads; consumed from out_next
  size_t out_next = 0;
  // Per iovec of `out`: the write op whose payload it is, when that op wants
  // its checksum (kNoOp otherwise). Hashed as each send leaves, in cache.
  static constexpr size_t kNoOp = ~size_t{0};
  std::vector<size_t> out_op;
  ValueHasher out_hasher;
  // The response being read: its header (then error text), or its payload.
  size_t answered = 0;  // ops[0, answered) have their final status
  bool in_payload = false;
  size_t in_got = 0;
  wire::ResponseBytes response{};
  wire::ResponseHeader header;
  // The payload being read, hashed as each receive lands (op.checksum_out set).
  ValueHasher hasher;
  Status failure;  // first failure; the status of every unanswered op

  bool Writing() const { return out_next < out.size(); }
  // Failed, or every op answered and every byte sent.
  bool Done() const { return !failure.ok() || (answered == ops.size() && !Writing()); }

  Status IoFailure(int err) const {
    return Status(ErrorCode::kUnavailable,
                  "connection to " + endpoint + " failed: " + std::strerror(err));
  }
};

// Everything Execute's helpers need about the batch.
struct Batch {
  std::span<const TransferOp> ops;
  std::vector<Status>* results;
  std::chrono::milliseconds timeout;  // per op (Lane::deadline)
};

void Fail(Lane& lane, const Batch& batch, Status status) {
  if (lane.Done()) return;
  lane.failure = std::move(status);
  lane.socket.reset();
  for (size_t k = lane.answered; k < lane.ops.size(); ++k) {
    (*batch.results)[lane.ops[k]] = lane.failure;
  }
}

// Writes as much of the lane's output as the socket takes now.
void WriteSome(Lane& lane, const Batch& batch) {
  while (lane.Writing()) {
    msghdr msg{};
    msg.msg_iov = lane.out.data() + lane.out_next;
    msg.msg_iovlen = std::min<size_t>(lane.out.size() - lane.out_next, IOV_MAX);
    ssize_t n = ::sendmsg(lane.socket.get(), &msg, MSG_NOSIGNAL);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return Fail(lane, batch, lane.IoFailure(errno));
    }
    auto left = static_cast<size_t>(n);
    while (left > 0) {
      iovec& v = lane.out[lane.out_next];
      size_t take = std::min(left, v.iov_len);
      const size_t op = lane.out_op[lane.out_next];
      // Right after the copy into the socket, while those bytes are in cache.
      if (op != Lane::kNoOp) lane.out_hasher.Update(v.iov_base, take);
      v.iov_base = static_cast<char*>(v.iov_base) + take;
      v.iov_len -= take;
      left -= take;
      if (v.iov_len == 0) {
        // An op's payload may be several iovecs (its slices): hashed as one.
        const size_t next = lane.out_next + 1;
        if (op != Lane::kNoOp && (next == lane.out.size() || lane.out_op[next] != op)) {
          *batch.ops[op].checksum_out = lane.out_hasher.Digest();
          lane.out_hasher.Reset();
        }
        ++lane.out_next;
      }
    }
  }
}

// Receives into `iov` (one recvmsg); returns bytes received, 0 when the
// socket has nothing now, or fails the lane (and returns 0) on EOF or error.
size_t ReceiveV(Lane& lane, const Batch& batch, iovec* iov, size_t count) {
  msghdr msg{};
  msg.msg_iov = iov;
  msg.msg_iovlen = count;
  for (;;) {
    ssize_t n = ::recvmsg(lane.socket.get(), &msg, 0);
    if (n > 0) return static_cast<size_t>(n);
    if (n == 0) {
      Fail(lane, batch, Status(ErrorCode::kUnavailable, lane.endpoint + " closed the connection"));
      return 0;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) Fail(lane, batch, lane.IoFailure(errno));
    return 0;
  }
}

// Receives into [p, p + want); as ReceiveV.
size_t Receive(Lane& lane, const Batch& batch, void* p, size_t want) {
  iovec one{p, want};
  return ReceiveV(lane, batch, &one, 1);
}

// Receives into the bytes [got, got + want) of the op's memory (its buffer,
// or its slices); as ReceiveV.
size_t ReceivePayload(Lane& lane, const Batch& batch, const TransferOp& op, size_t got,
                      size_t want) {
  if (op.slices.empty()) return Receive(lane, batch, op.buffer + got, want);
  iovec iov[64];
  return ReceiveV(lane, batch, iov, IovecsOf(op.slices, got, want, iov, std::size(iov)));
}

// The lane's next op has its own timeout from now.
void Answer(Lane& lane, const Batch& batch, Status status) {
  (*batch.results)[lane.ops[lane.answered]] = std::move(status);
  ++lane.answered;
  lane.in_payload = false;
  lane.in_got = 0;
  lane.deadline = Clock::now() + batch.timeout;
}

// Sets SO_RCVLOWAT. Failing to raise it only costs wake-ups; failing to lower
// it could leave poll() waiting for bytes that never come, so that fails the
// lane (Linux does not refuse the option on a connected TCP socket). False
// when the lane failed.
bool SetLowat(Lane& lane, const Batch& batch, int bytes) {
  if (bytes == lane.lowat) return true;
  if (::setsockopt(lane.socket.get(), SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes)) == 0) {
    lane.lowat = bytes;
  } else if (bytes < lane.lowat) {
    Fail(lane, batch,
         Status(ErrorCode::kInternal, "cannot lower SO_RCVLOWAT on the connection to " +
                                          lane.endpoint + ": " + std::strerror(errno)));
    return false;
  }
  return true;
}

// Reads responses in order for as long as the socket has bytes. `shared`:
// other lanes of the batch are busy too (see the low-water mark above). The
// mark is recomputed before every receive, and this returns only after a
// receive found nothing, so the mark left for poll() never exceeds what is
// still owed.
void ReadSome(Lane& lane, const Batch& batch, bool shared) {
  while (lane.failure.ok() && lane.answered < lane.ops.size()) {
    const TransferOp& op = batch.ops[lane.ops[lane.answered]];
    if (lane.in_payload) {
      const size_t left = op.cap.length - lane.in_got;
      const uint64_t step = shared ? wire::kSharedLaneMark : wire::kLoneLaneMark;
      if (!SetLowat(lane, batch, wire::PayloadLowat(left, step))) return;
      size_t n = ReceivePayload(lane, batch, op, lane.in_got, left);
      if (n == 0) return;
      // Right after the copy from the socket, while those bytes are in cache.
      if (op.checksum_out != nullptr) {
        if (op.slices.empty()) {
          lane.hasher.Update(op.buffer + lane.in_got, n);
        } else {
          ForEachRange(op.slices, lane.in_got, n,
                       [&](const std::byte* p, size_t k) { lane.hasher.Update(p, k); });
        }
      }
      lane.in_got += n;
      if (lane.in_got < op.cap.length) continue;
      // Back to 1 for the next header, here or on the pooled connection.
      if (!SetLowat(lane, batch, 1)) return;
      // The lease ran out while the bytes were in flight: the space may have
      // been reused, so they cannot be trusted.
      Status result;
      if (UnixNowMs() >= op.cap.expiry_unix_ms) {
        result = Status(ErrorCode::kLeaseExpired, "read lease expired before the transfer from " +
                                                      lane.endpoint + " finished");
      } else if (op.checksum_out != nullptr) {
        *op.checksum_out = lane.hasher.Digest();
      }
      Answer(lane, batch, std::move(result));
      continue;
    }
    // Header first, then (for an error) its message.
    size_t want = wire::kResponseHeaderSize;
    if (lane.in_got >= wire::kResponseHeaderSize) want += lane.header.message_length;
    if (lane.in_got < want) {
      size_t n = Receive(lane, batch, lane.response.data() + lane.in_got, want - lane.in_got);
      if (n == 0) return;
      lane.in_got += n;
      if (lane.in_got < want) continue;
    }
    if (want == wire::kResponseHeaderSize) {
      StatusOr<wire::ResponseHeader> h = wire::DecodeResponse(lane.response.data());
      if (!h.ok()) {
        return Fail(
            lane, batch,
            Status(ErrorCode::kCorruptData, "from " + lane.endpoint + ": " + h.status().message()));
      }
      lane.header = *h;
      if (lane.header.request_id != lane.answered) {
        return Fail(
            lane, batch,
            Status(ErrorCode::kCorruptData, lane.endpoint + " answered request " +
                                                std::to_string(lane.header.request_id) +
                                                ", expected " + std::to_string(lane.answered)));
      }
      if (lane.header.code != ErrorCode::kOk && lane.header.message_length > 0) continue;
    }
    const wire::ResponseHeader& h = lane.header;
    if (h.code != ErrorCode::kOk) {
      std::string message(
          reinterpret_cast<const char*>(lane.response.data()) + wire::kResponseHeaderSize,
          h.message_length);
      Answer(lane, batch, Status(h.code, lane.endpoint + ": " + message));
    } else if (op.cap.op == AccessOp::kRead) {
      if (h.payload_length != op.cap.length) {
        return Fail(lane, batch,
                    Status(ErrorCode::kCorruptData,
                           lane.endpoint + " sent " + std::to_string(h.payload_length) +
                               " bytes for a read of " + std::to_string(op.cap.length)));
      }
      lane.in_payload = true;
      lane.in_got = 0;
      if (op.checksum_out != nullptr) lane.hasher.Reset();
    } else if (h.payload_length != 0) {
      return Fail(lane, batch,
                  Status(ErrorCode::kCorruptData, lane.endpoint + " sent a payload for a write"));
    } else {
      Answer(lane, batch, Status::Ok());
    }
  }
}

// A connect that poll() reported finished: success or the error it met.
void FinishConnect(Lane& lane, const Batch& batch) {
  int err = 0;
  socklen_t len = sizeof(err);
  if (::getsockopt(lane.socket.get(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
  if (err == EINPROGRESS || err == EALREADY) return;  // not yet
  if (err == ECONNREFUSED) {
    return Fail(lane, batch,
                Status(ErrorCode::kUnavailable, "connection to " + lane.endpoint + " refused"));
  }
  if (err != 0) {
    return Fail(lane, batch,
                Status(ErrorCode::kUnavailable,
                       "cannot connect to " + lane.endpoint + ": " + std::strerror(err)));
  }
  lane.connecting = false;
}

// Starts a non-blocking connect; fails the lane if it cannot even start.
void StartConnect(Lane& lane, const Batch& batch, const Address& address,
                  const std::string& congestion) {
  int fd = ::socket(address.storage.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return Fail(lane, batch, lane.IoFailure(errno));
  lane.socket = Socket(fd);
  int one = 1;
  (void)::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
  // Checked when the client was configured (Client::Connect); a failure here
  // leaves the system default.
  (void)SetCongestionControl(fd, congestion);
  lane.connecting = true;
  if (::connect(fd, reinterpret_cast<const sockaddr*>(&address.storage), address.length) == 0) {
    lane.connecting = false;
  } else if (errno == ECONNREFUSED) {
    Fail(lane, batch,
         Status(ErrorCode::kUnavailable, "connection to " + lane.endpoint + " refused"));
  } else if (errno != EINPROGRESS) {
    Fail(lane, batch,
         Status(ErrorCode::kUnavailable,
                "cannot connect to " + lane.endpoint + ": " + std::strerror(errno)));
  }
}

// An idle connection has nothing to read; readable or hung up means the server
// closed it (e.g. restarted). Checking costs one poll() and saves a batch from
// failing on a stale pooled connection.
bool StillOpen(const Socket& s) {
  pollfd p{s.get(), POLLIN, 0};
  return ::poll(&p, 1, 0) == 0;
}

int64_t MillisUntil(Clock::time_point t, Clock::time_point now) {
  if (t <= now) return 0;
  // Round up, so poll() does not wake a hair early and spin.
  return (std::chrono::duration_cast<std::chrono::microseconds>(t - now).count() + 999) / 1000;
}

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(const TcpTransportOptions& options) : options_(options) {
    options_.lanes = std::max(1, options_.lanes);
  }

  bool CanReach(const std::string& endpoint) override { return ParseEndpoint(endpoint).ok(); }
  const char* Name() const override { return "tcp"; }
  std::vector<Status> Execute(std::span<const TransferOp> ops, int64_t timeout_ms) override;

 private:
  struct Peer {
    Address address;
    std::vector<Socket> idle;
  };

  StatusOr<Address> Resolve(const std::string& key, const Endpoint& ep);
  std::vector<Socket> TakeIdle(const std::string& key, size_t want);
  void ReturnIdle(const std::string& key, Socket socket);
  void Run(std::vector<Lane>& lanes, const Batch& batch);

  TcpTransportOptions options_;
  std::mutex mu_;
  std::unordered_map<std::string, Peer> peers_;  // by HOST:PORT
};

StatusOr<Address> TcpTransport::Resolve(const std::string& key, const Endpoint& ep) {
  {
    std::lock_guard lock(mu_);
    if (auto it = peers_.find(key); it != peers_.end()) return it->second.address;
  }
  // Resolved once (a host name synchronously) and cached for the transport's life.
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  int rc = ::getaddrinfo(ep.host.c_str(), std::to_string(ep.port).c_str(), &hints, &found);
  if (rc != 0 || found == nullptr) {
    return Status(ErrorCode::kUnavailable, "cannot resolve " + key + ": " + gai_strerror(rc));
  }
  Address address;
  std::memcpy(&address.storage, found->ai_addr, found->ai_addrlen);
  address.length = found->ai_addrlen;
  ::freeaddrinfo(found);
  std::lock_guard lock(mu_);
  return peers_.try_emplace(key, Peer{address, {}}).first->second.address;
}

std::vector<Socket> TcpTransport::TakeIdle(const std::string& key, size_t want) {
  std::vector<Socket> out;
  std::lock_guard lock(mu_);
  std::vector<Socket>& idle = peers_[key].idle;
  while (out.size() < want && !idle.empty()) {
    Socket s = std::move(idle.back());
    idle.pop_back();
    if (StillOpen(s)) out.push_back(std::move(s));
  }
  return out;
}

void TcpTransport::ReturnIdle(const std::string& key, Socket socket) {
  std::lock_guard lock(mu_);
  std::vector<Socket>& idle = peers_[key].idle;
  if (idle.size() < static_cast<size_t>(options_.lanes)) idle.push_back(std::move(socket));
  // else: dropped, which closes it
}

// The poll loop: until every lane is done or past its deadline.
void TcpTransport::Run(std::vector<Lane>& lanes, const Batch& batch) {
  // Pooled lanes can start writing before the first poll.
  for (Lane& lane : lanes) {
    if (!lane.Done() && !lane.connecting) WriteSome(lane, batch);
  }
  std::vector<pollfd> fds;
  std::vector<Lane*> polled;
  for (;;) {
    Clock::time_point now = Clock::now();
    Clock::time_point wake = Clock::time_point::max();
    fds.clear();
    polled.clear();
    const bool stopped = options_.stop != nullptr && options_.stop->load(std::memory_order_acquire);
    for (Lane& lane : lanes) {
      if (lane.Done()) continue;
      if (stopped) {
        Fail(lane, batch,
             Status(ErrorCode::kClosed,
                    "the transfer to " + lane.endpoint + " was stopped: the process is stopping"));
        continue;
      }
      if (lane.connecting && lane.connect_deadline < lane.deadline &&
          now >= lane.connect_deadline) {
        Fail(lane, batch,
             Status(ErrorCode::kUnavailable, "connect to " + lane.endpoint + " timed out after " +
                                                 std::to_string(options_.connect_timeout_ms) +
                                                 " ms"));
        continue;
      }
      if (now >= lane.deadline) {
        Fail(lane, batch,
             Status(ErrorCode::kTimeout, lane.endpoint + " did not finish a transfer within " +
                                             std::to_string(batch.timeout.count()) + " ms"));
        continue;
      }
      wake = std::min(wake, lane.deadline);
      if (lane.connecting) wake = std::min(wake, lane.connect_deadline);
      short events = lane.connecting ? POLLOUT : POLLIN;
      if (!lane.connecting && lane.Writing()) events |= POLLOUT;
      fds.push_back(pollfd{lane.socket.get(), events, 0});
      polled.push_back(&lane);
    }
    if (fds.empty()) return;
    int64_t wait = MillisUntil(wake, now);
    if (options_.stop != nullptr) wait = std::min(wait, kStopCheckMs);
    int rc = ::poll(fds.data(), fds.size(), static_cast<int>(std::min<int64_t>(wait, INT_MAX)));
    if (rc < 0 && errno != EINTR) {
      for (Lane* lane : polled) Fail(*lane, batch, lane->IoFailure(errno));
      return;
    }
    for (size_t k = 0; rc > 0 && k < fds.size(); ++k) {
      Lane& lane = *polled[k];
      short got = fds[k].revents;
      if (got == 0 || lane.Done()) continue;
      if (lane.connecting) {
        FinishConnect(lane, batch);
        if (lane.Done() || lane.connecting) continue;
        WriteSome(lane, batch);
        continue;
      }
      if (got & (POLLIN | POLLHUP | POLLERR)) ReadSome(lane, batch, fds.size() > 1);
      if (!lane.Done() && (got & (POLLOUT | POLLERR))) WriteSome(lane, batch);
    }
  }
}

std::vector<Status> TcpTransport::Execute(std::span<const TransferOp> ops, int64_t timeout_ms) {
  if (options_.stop != nullptr && options_.stop->load(std::memory_order_acquire)) {
    return std::vector<Status>(
        ops.size(), Status(ErrorCode::kClosed, "transfers are stopped: the process is stopping"));
  }
  std::vector<Status> results(ops.size(), Status(ErrorCode::kInternal, "op was not run"));
  Clock::time_point now = Clock::now();
  Batch batch{ops, &results, std::chrono::milliseconds(std::max<int64_t>(0, timeout_ms))};

  // Group valid ops by HOST:PORT, keeping input order within a group.
  struct Group {
    std::string key;
    Endpoint endpoint;
    std::vector<size_t> ops;
  };
  std::vector<Group> groups;
  for (size_t i = 0; i < ops.size(); ++i) {
    const TransferOp& op = ops[i];
    StatusOr<Endpoint> ep = ParseEndpoint(op.endpoint);
    if (!ep.ok()) {
      results[i] = ep.status();
      continue;
    }
    const bool copy_ok = (op.cap.op == AccessOp::kCopy &&
                          op.request_payload_bytes >= wire::kCopyTargetFixed &&
                          op.request_payload_bytes <= wire::kCopyTargetMax) ||
                         (op.cap.op == AccessOp::kVerify &&
                          op.request_payload_bytes == wire::kVerifyPayload);
    if ((op.cap.op != AccessOp::kRead && op.cap.op != AccessOp::kWrite && !copy_ok) ||
        op.cap.length == 0 || !op.HasMemory()) {
      results[i] = Status(ErrorCode::kInvalidArgument,
                          "transfer op needs a read or write capability, a non-empty range "
                          "and a buffer");
      continue;
    }
    if (!op.slices.empty() && (!SlicesCover(op.slices, op.cap.length) || copy_ok)) {
      results[i] = Status(ErrorCode::kInvalidArgument,
                          "a transfer op's slices must be non-empty and sum to its range's " +
                              std::to_string(op.cap.length) + " bytes (reads and writes only)");
      continue;
    }
    std::string key = ep->host + ":" + std::to_string(ep->port);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.key == key; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{key, *ep, {}});
    it->ops.push_back(i);
  }

  std::vector<Lane> lanes;
  std::vector<std::string> lane_keys;
  size_t total = 0;
  for (const Group& g : groups) total += std::min(g.ops.size(), size_t(options_.lanes));
  lanes.reserve(total);  // stable addresses for the poll loop
  for (const Group& group : groups) {
    StatusOr<Address> address = Resolve(group.key, group.endpoint);
    if (!address.ok()) {
      for (size_t i : group.ops) results[i] = address.status();
      continue;
    }
    size_t count = std::min(group.ops.size(), static_cast<size_t>(options_.lanes));
    std::vector<Socket> pooled = TakeIdle(group.key, count);
    size_t first = lanes.size();
    std::vector<uint64_t> load(count, 0);
    for (size_t k = 0; k < count; ++k) {
      Lane& lane = lanes.emplace_back();
      lane.endpoint = group.key;
      lane.deadline = now + batch.timeout;
      lane_keys.push_back(group.key);
      if (k < pooled.size()) lane.socket = std::move(pooled[k]);
    }
    for (size_t i : group.ops) {
      // Least-loaded lane by bytes (plus a per-op cost), so big and small ops mix.
      size_t k = std::min_element(load.begin(), load.end()) - load.begin();
      load[k] += ops[i].cap.length + 512;
      lanes[first + k].ops.push_back(i);
    }
    for (size_t k = 0; k < count; ++k) {
      Lane& lane = lanes[first + k];
      lane.requests.resize(lane.ops.size());
      lane.out.reserve(2 * lane.ops.size());
      lane.out_op.reserve(2 * lane.ops.size());
      for (size_t j = 0; j < lane.ops.size(); ++j) {
        const TransferOp& op = ops[lane.ops[j]];
        wire::RequestHeader header;
        header.request_id = j;
        header.cap = op.cap;
        header.payload_length = op.cap.op == AccessOp::kWrite  ? op.cap.length
                                : op.cap.op == AccessOp::kRead ? 0
                                                               : op.request_payload_bytes;
        wire::EncodeRequest(header, lane.requests[j]);
        lane.out.push_back(iovec{lane.requests[j].data(), lane.requests[j].size()});
        lane.out_op.push_back(Lane::kNoOp);
        if (header.payload_length != 0) {
          const bool hashed = op.cap.op == AccessOp::kWrite && op.checksum_out != nullptr;
          if (op.slices.empty()) {
            lane.out.push_back(iovec{op.buffer, header.payload_length});
            lane.out_op.push_back(hashed ? lane.ops[j] : Lane::kNoOp);
          } else {
            for (const BufferSlice& slice : op.slices) {
              lane.out.push_back(iovec{slice.data, slice.length});
              lane.out_op.push_back(hashed ? lane.ops[j] : Lane::kNoOp);
            }
          }
        }
      }
      if (k >= pooled.size()) {
        lane.connect_deadline = now + std::chrono::milliseconds(options_.connect_timeout_ms);
        StartConnect(lane, batch, *address, options_.congestion);
      }
    }
  }

  Run(lanes, batch);
  for (size_t k = 0; k < lanes.size(); ++k) {
    // Pooled only with its low-water mark back at 1 (a stale mark would keep
    // poll() from reporting a later small answer).
    if (lanes[k].failure.ok() && lanes[k].socket.valid() && lanes[k].lowat == 1) {
      ReturnIdle(lane_keys[k], std::move(lanes[k].socket));
    }
  }
  return results;
}

}  // namespace

std::unique_ptr<Transport> MakeTcpTransport(const TcpTransportOptions& options) {
  return std::make_unique<TcpTransport>(options);
}

}  // namespace crescent::transfer
