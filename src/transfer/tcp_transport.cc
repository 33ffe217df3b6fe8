// Client side of the TCP data plane.
//
// Design:
//  - One io_context driven by options.io_threads threads carries every socket.
//    Each pooled connection (Conn) owns a strand; all I/O and timer handlers of a
//    connection run on it, so a lane's state needs no locks.
//  - Execute() groups ops by endpoint, spreads each group over up to
//    options.lanes connections (least-loaded by bytes) and runs each lane as two
//    concurrent chains on its strand: a writer that sends every request with one
//    gather write (write payloads straight from the caller's buffers) and a
//    reader that takes the responses in order (read payloads straight into the
//    caller's buffers). Running both at once is what keeps a pipelined lane from
//    deadlocking when both directions' socket buffers are full.
//  - Timeouts: each lane has one steady_timer at the batch deadline (or at the
//    earlier connect deadline while connecting). When it fires, the lane records
//    kTimeout (kUnavailable for a connect timeout) and closes its socket, so the
//    pending reads/writes complete with operation_aborted and the lane ends. The
//    calling thread just waits for every lane to end, which the timers bound.
//  - A lane's first failure is the status of every op it had not answered yet;
//    a lane that failed is closed, never pooled. At most options.lanes idle
//    connections per endpoint are kept (concurrent batches may open more).
//  - Lifetimes: a Lane is shared by its handlers; it touches the caller's Batch
//    only until it reports itself finished, after which handlers that still run
//    (a cancelled timer) see `finished` and return.
#include "transfer/tcp_transport.h"

#include <poll.h>

#include <algorithm>
#include <asio/bind_executor.hpp>
#include <asio/co_spawn.hpp>
#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>
#include <asio/read.hpp>
#include <asio/redirect_error.hpp>
#include <asio/steady_timer.hpp>
#include <asio/strand.hpp>
#include <asio/use_awaitable.hpp>
#include <asio/write.hpp>
#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "transfer/endpoint.h"
#include "transfer/wire.h"

namespace crescent::transfer {
namespace {

using asio::ip::tcp;
using Clock = std::chrono::steady_clock;
using Strand = asio::strand<asio::io_context::executor_type>;

// One connection to a data server; every operation on it runs on `strand`.
struct Conn {
  explicit Conn(asio::io_context& io) : strand(asio::make_strand(io)), socket(strand) {}
  Strand strand;
  tcp::socket socket;
};

// Per-Execute completion state, on the calling thread's stack.
struct Batch {
  std::span<const TransferOp> ops;
  std::vector<Status>* results = nullptr;
  int64_t timeout_ms = 0;
  std::mutex mu;
  std::condition_variable cv;
  size_t lanes_left = 0;
};

// One connection's share of a batch. Fields are touched only on conn->strand
// while the lane runs, and by Execute's thread only after it finished.
struct Lane : std::enable_shared_from_this<Lane> {
  Lane(Batch& b, std::shared_ptr<Conn> c) : batch(&b), conn(std::move(c)), timer(conn->strand) {}

  Batch* batch;
  std::shared_ptr<Conn> conn;
  std::string endpoint;  // HOST:PORT, for messages
  tcp::endpoint address;
  bool connect_first = false;
  Clock::time_point deadline;
  Clock::time_point connect_deadline;
  int64_t connect_timeout_ms = 0;
  std::vector<size_t> ops;  // indices into batch->ops, in input order
  std::vector<wire::RequestBytes> requests;
  std::vector<asio::const_buffer> out;
  asio::steady_timer timer;
  uint64_t timer_generation = 0;
  bool connecting = false;
  Status failure;       // first failure; the status of every unanswered op
  size_t answered = 0;  // ops[0, answered) have their final status
  int chains = 0;       // running coroutines (connect+reader, writer)
  bool finished = false;

  void Fail(Status status) {
    if (failure.ok()) failure = std::move(status);
    asio::error_code ec;
    conn->socket.close(ec);  // aborts the other chain
  }

  Status IoFailure(const asio::error_code& ec) const {
    if (ec == asio::error::eof) {
      return Status(ErrorCode::kUnavailable, endpoint + " closed the connection");
    }
    return Status(ErrorCode::kUnavailable,
                  "connection to " + endpoint + " failed: " + ec.message());
  }

  void Arm(Clock::time_point when) {
    uint64_t generation = ++timer_generation;
    timer.expires_at(when);  // cancels a pending wait; its handler sees the old generation
    timer.async_wait([self = shared_from_this(), generation](const asio::error_code& ec) {
      if (ec || generation != self->timer_generation || self->finished) return;
      self->OnTimer();
    });
  }

  void OnTimer() {
    if (connecting && connect_deadline < deadline) {
      Fail(Status(ErrorCode::kUnavailable, "connect to " + endpoint + " timed out after " +
                                               std::to_string(connect_timeout_ms) + " ms"));
    } else {
      Fail(Status(ErrorCode::kTimeout, endpoint + " did not answer within " +
                                           std::to_string(batch->timeout_ms) + " ms"));
    }
  }

  void ChainDone() {
    if (--chains > 0) return;
    finished = true;
    timer.cancel();
    Status rest = failure.ok() ? Status(ErrorCode::kInternal, "lane ended early") : failure;
    for (size_t k = answered; k < ops.size(); ++k) (*batch->results)[ops[k]] = rest;
    std::lock_guard lock(batch->mu);
    if (--batch->lanes_left == 0) batch->cv.notify_all();
  }

  // A handler for co_spawn that ends one chain, on the strand.
  auto OnChainEnd() {
    return asio::bind_executor(conn->strand, [self = shared_from_this()](std::exception_ptr e) {
      if (e) self->Fail(Status(ErrorCode::kInternal, "data-plane client coroutine failed"));
      self->ChainDone();
    });
  }
};

asio::awaitable<void> WriteChain(std::shared_ptr<Lane> lane) {
  asio::error_code ec;
  co_await asio::async_write(lane->conn->socket, lane->out,
                             asio::redirect_error(asio::use_awaitable, ec));
  if (ec) lane->Fail(lane->IoFailure(ec));
}

// Reads the responses in order; returns with lane->answered == ops.size() or
// after Fail().
asio::awaitable<void> ReadChain(Lane& lane) {
  asio::error_code ec;
  auto use = asio::redirect_error(asio::use_awaitable, ec);
  tcp::socket& socket = lane.conn->socket;
  wire::ResponseBytes response;
  for (; lane.answered < lane.ops.size(); ++lane.answered) {
    size_t index = lane.ops[lane.answered];
    const TransferOp& op = lane.batch->ops[index];
    co_await asio::async_read(socket, asio::buffer(response.data(), wire::kResponseHeaderSize),
                              use);
    if (ec) co_return lane.Fail(lane.IoFailure(ec));
    StatusOr<wire::ResponseHeader> header = wire::DecodeResponse(response.data());
    if (!header.ok()) {
      co_return lane.Fail(Status(ErrorCode::kCorruptData,
                                 "from " + lane.endpoint + ": " + header.status().message()));
    }
    const wire::ResponseHeader& h = *header;
    if (h.request_id != lane.answered) {
      co_return lane.Fail(Status(ErrorCode::kCorruptData, lane.endpoint + " answered request " +
                                                              std::to_string(h.request_id) +
                                                              ", expected " +
                                                              std::to_string(lane.answered)));
    }
    Status result;
    if (h.code != ErrorCode::kOk) {
      if (h.message_length > 0) {
        co_await asio::async_read(
            socket, asio::buffer(response.data() + wire::kResponseHeaderSize, h.message_length),
            use);
        if (ec) co_return lane.Fail(lane.IoFailure(ec));
      }
      std::string message(
          reinterpret_cast<const char*>(response.data()) + wire::kResponseHeaderSize,
          h.message_length);
      result = Status(h.code, lane.endpoint + ": " + message);
    } else if (op.cap.op == AccessOp::kRead) {
      if (h.payload_length != op.cap.length) {
        co_return lane.Fail(Status(ErrorCode::kCorruptData,
                                   lane.endpoint + " sent " + std::to_string(h.payload_length) +
                                       " bytes for a read of " + std::to_string(op.cap.length)));
      }
      co_await asio::async_read(socket, asio::buffer(op.buffer, op.cap.length), use);
      if (ec) co_return lane.Fail(lane.IoFailure(ec));
      // The lease ran out while the bytes were in flight: the space may have
      // been reused, so they cannot be trusted.
      if (UnixNowMs() >= op.cap.expiry_unix_ms) {
        result = Status(ErrorCode::kLeaseExpired, "read lease expired before the transfer from " +
                                                      lane.endpoint + " finished");
      }
    } else if (h.payload_length != 0) {
      co_return lane.Fail(
          Status(ErrorCode::kCorruptData, lane.endpoint + " sent a payload for a write"));
    }
    (*lane.batch->results)[index] = std::move(result);
  }
}

asio::awaitable<void> RunLane(std::shared_ptr<Lane> lane) {
  if (lane->connect_first) {
    asio::error_code ec;
    lane->connecting = true;
    lane->Arm(std::min(lane->deadline, lane->connect_deadline));
    co_await lane->conn->socket.async_connect(lane->address,
                                              asio::redirect_error(asio::use_awaitable, ec));
    lane->connecting = false;
    if (ec) {
      if (ec == asio::error::connection_refused) {
        co_return lane->Fail(
            Status(ErrorCode::kUnavailable, "connection to " + lane->endpoint + " refused"));
      }
      co_return lane->Fail(Status(ErrorCode::kUnavailable,
                                  "cannot connect to " + lane->endpoint + ": " + ec.message()));
    }
    if (!lane->failure.ok()) co_return;  // the timer fired as the connect completed
    lane->conn->socket.set_option(tcp::no_delay(true), ec);
    if (lane->connect_deadline < lane->deadline) lane->Arm(lane->deadline);
  } else {
    lane->Arm(lane->deadline);
  }
  ++lane->chains;
  asio::co_spawn(lane->conn->strand, WriteChain(lane), lane->OnChainEnd());
  co_await ReadChain(*lane);
}

// An idle connection has nothing to read; readable or hung up means the server
// closed it (e.g. restarted). Checking costs one poll() and saves a batch from
// failing on a stale pooled connection. Safe: no operation is pending on it.
bool StillOpen(Conn& conn) {
  pollfd p{conn.socket.native_handle(), POLLIN, 0};
  return poll(&p, 1, 0) == 0;
}

class TcpTransport final : public Transport {
 public:
  explicit TcpTransport(const TcpTransportOptions& options)
      : options_(options), work_(asio::make_work_guard(io_)) {
    options_.lanes = std::max(1, options_.lanes);
    int threads = std::max(1, options_.io_threads);
    for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { io_.run(); });
  }

  ~TcpTransport() override {
    work_.reset();
    io_.stop();
    for (std::thread& t : threads_) t.join();
    peers_.clear();  // closes idle sockets while io_ is alive
  }

  bool CanReach(const std::string& endpoint) override { return ParseEndpoint(endpoint).ok(); }
  const char* Name() const override { return "tcp"; }
  std::vector<Status> Execute(std::span<const TransferOp> ops, int64_t timeout_ms) override;

 private:
  struct Peer {
    tcp::endpoint address;
    std::vector<std::shared_ptr<Conn>> idle;
  };

  StatusOr<tcp::endpoint> Address(const std::string& key, const Endpoint& ep);
  std::vector<std::shared_ptr<Conn>> TakeIdle(const std::string& key, size_t want);
  void ReturnIdle(const std::string& key, std::shared_ptr<Conn> conn);

  TcpTransportOptions options_;
  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  std::vector<std::thread> threads_;
  std::mutex mu_;
  std::unordered_map<std::string, Peer> peers_;  // by HOST:PORT
};

StatusOr<tcp::endpoint> TcpTransport::Address(const std::string& key, const Endpoint& ep) {
  {
    std::lock_guard lock(mu_);
    if (auto it = peers_.find(key); it != peers_.end()) return it->second.address;
  }
  asio::error_code ec;
  tcp::endpoint address;
  if (asio::ip::address ip = asio::ip::make_address(ep.host, ec); !ec) {
    address = tcp::endpoint(ip, ep.port);
  } else {
    // A host name: resolved once (synchronously) and cached for the transport's life.
    tcp::resolver resolver(io_);
    auto found = resolver.resolve(ep.host, std::to_string(ep.port), ec);
    if (ec || found.empty()) {
      return Status(ErrorCode::kUnavailable, "cannot resolve " + key + ": " + ec.message());
    }
    address = found.begin()->endpoint();
  }
  std::lock_guard lock(mu_);
  return peers_.try_emplace(key, Peer{address, {}}).first->second.address;
}

std::vector<std::shared_ptr<Conn>> TcpTransport::TakeIdle(const std::string& key, size_t want) {
  std::vector<std::shared_ptr<Conn>> out;
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<Conn>>& idle = peers_[key].idle;
  while (out.size() < want && !idle.empty()) {
    std::shared_ptr<Conn> conn = std::move(idle.back());
    idle.pop_back();
    if (StillOpen(*conn)) out.push_back(std::move(conn));
  }
  return out;
}

void TcpTransport::ReturnIdle(const std::string& key, std::shared_ptr<Conn> conn) {
  std::lock_guard lock(mu_);
  std::vector<std::shared_ptr<Conn>>& idle = peers_[key].idle;
  if (idle.size() < static_cast<size_t>(options_.lanes)) idle.push_back(std::move(conn));
  // else: dropped; the socket closes (no operation is pending on it)
}

std::vector<Status> TcpTransport::Execute(std::span<const TransferOp> ops, int64_t timeout_ms) {
  std::vector<Status> results(ops.size(), Status(ErrorCode::kInternal, "op was not run"));
  Clock::time_point now = Clock::now();
  Batch batch;
  batch.ops = ops;
  batch.results = &results;
  batch.timeout_ms = timeout_ms;

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
    if ((op.cap.op != AccessOp::kRead && op.cap.op != AccessOp::kWrite) || op.cap.length == 0 ||
        op.buffer == nullptr) {
      results[i] = Status(ErrorCode::kInvalidArgument,
                          "transfer op needs a read or write capability, a non-empty range "
                          "and a buffer");
      continue;
    }
    std::string key = ep->host + ":" + std::to_string(ep->port);
    auto it =
        std::find_if(groups.begin(), groups.end(), [&](const Group& g) { return g.key == key; });
    if (it == groups.end()) it = groups.insert(groups.end(), Group{key, *ep, {}});
    it->ops.push_back(i);
  }

  std::vector<std::shared_ptr<Lane>> lanes;
  std::vector<std::string> lane_keys;
  for (Group& group : groups) {
    StatusOr<tcp::endpoint> address = Address(group.key, group.endpoint);
    if (!address.ok()) {
      for (size_t i : group.ops) results[i] = address.status();
      continue;
    }
    size_t count = std::min(group.ops.size(), static_cast<size_t>(options_.lanes));
    std::vector<std::shared_ptr<Conn>> conns = TakeIdle(group.key, count);
    size_t pooled = conns.size();
    while (conns.size() < count) conns.push_back(std::make_shared<Conn>(io_));
    std::vector<std::shared_ptr<Lane>> mine;
    std::vector<uint64_t> load(count, 0);
    for (size_t k = 0; k < count; ++k) {
      auto lane = std::make_shared<Lane>(batch, conns[k]);
      lane->endpoint = group.key;
      lane->address = *address;
      lane->connect_first = k >= pooled;
      lane->deadline = now + std::chrono::milliseconds(std::max<int64_t>(0, timeout_ms));
      lane->connect_timeout_ms = options_.connect_timeout_ms;
      lane->connect_deadline = now + std::chrono::milliseconds(options_.connect_timeout_ms);
      mine.push_back(std::move(lane));
    }
    for (size_t i : group.ops) {
      // Least-loaded lane by bytes (plus a per-op cost), so big and small ops mix.
      size_t k = std::min_element(load.begin(), load.end()) - load.begin();
      load[k] += ops[i].cap.length + 512;
      mine[k]->ops.push_back(i);
    }
    for (std::shared_ptr<Lane>& lane : mine) {
      lane->requests.resize(lane->ops.size());
      lane->out.reserve(2 * lane->ops.size());
      for (size_t k = 0; k < lane->ops.size(); ++k) {
        const TransferOp& op = ops[lane->ops[k]];
        wire::RequestHeader header;
        header.request_id = k;
        header.cap = op.cap;
        header.payload_length = op.cap.op == AccessOp::kWrite ? op.cap.length : 0;
        wire::EncodeRequest(header, lane->requests[k]);
        lane->out.push_back(asio::buffer(lane->requests[k]));
        if (op.cap.op == AccessOp::kWrite) {
          lane->out.push_back(asio::buffer(op.buffer, op.cap.length));
        }
      }
      lanes.push_back(lane);
      lane_keys.push_back(group.key);
    }
  }

  batch.lanes_left = lanes.size();
  for (std::shared_ptr<Lane>& lane : lanes) {
    lane->chains = 1;
    asio::co_spawn(lane->conn->strand, RunLane(lane), lane->OnChainEnd());
  }
  {
    // Bounded: every lane's timer closes its socket at the deadline.
    std::unique_lock lock(batch.mu);
    batch.cv.wait(lock, [&] { return batch.lanes_left == 0; });
  }
  for (size_t k = 0; k < lanes.size(); ++k) {
    if (lanes[k]->failure.ok()) ReturnIdle(lane_keys[k], std::move(lanes[k]->conn));
  }
  return results;
}

}  // namespace

std::unique_ptr<Transport> MakeTcpTransport(const TcpTransportOptions& options) {
  return std::make_unique<TcpTransport>(options);
}

}  // namespace crescent::transfer
