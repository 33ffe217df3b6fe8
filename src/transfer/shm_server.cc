// ShmServer: one accept thread serves map handshakes inline, one at a time. A
// handshake is a 74-byte request and a 222-byte reply (shm_protocol.h), so
// serving it inline is cheap; a client that stalls is cut off after
// kHandshakeTimeoutMs, and Stop() interrupts even that wait through the eventfd
// every blocking poll in this file also watches.
//
// After a successful map handshake the connection stays open, idle, until the
// client closes it, the server stops, or the node remounts (DropMappings): it
// is how the client tells that the memory it maps still belongs to a running
// node and to the mount its capabilities name (shm_transport.cc). The accept
// thread polls these connections with the listener and closes each one whose
// client went away.
//
// A connection whose first request is a write gets a thread of its own, which
// performs that write and every later one on the connection (WriteLoop): a
// write copies up to the whole object, too long to serve inline. At most
// MaxClients() connections of both kinds are held (a quarter of the process's
// fd limit, at most 1024: the data port's connections need fds too); past that
// a request is refused as UNAVAILABLE and the client uses TCP.
#include "transfer/shm_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include "common/fd.h"
#include "transfer/shm_protocol.h"

namespace crescent::transfer {
namespace {

constexpr int kHandshakeTimeoutMs = 2000;

// How many handshake connections a server holds open at most.
size_t MaxClients() {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return 1024;
  return std::clamp<size_t>(static_cast<size_t>(lim.rlim_cur / 4), 16, 1024);
}

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct ShmServer::Impl {
  Impl(SegmentSet segs, const CapabilitySigner& sig) : segments(std::move(segs)), signer(sig) {}

  SegmentSet segments;
  CapabilitySigner signer;  // a copy: the caller's may not outlive us
  TransferMetrics* metrics = nullptr;
  ScopedFd listen_fd;
  ScopedFd wake_fd;  // eventfd; readable once Stop() has been called
  ScopedFd drop_fd;  // eventfd; readable while a DropMappings() waits
  std::thread thread;
  std::mutex stop_mu;
  bool stopped = false;

  // Map connections, held open (the accept thread's; Stop's after).
  std::vector<ScopedFd> clients;
  const size_t max_clients = MaxClients();

  // DropMappings() handshake with the accept thread.
  std::mutex drop_mu;
  std::condition_variable drop_cv;
  uint64_t drops_asked = 0, drops_done = 0;
  bool thread_exited = false;

  struct Writer {
    std::thread thread;
    std::atomic<bool> done{false};
  };
  std::mutex writers_mu;
  std::list<Writer> writers;  // guarded by writers_mu; finished ones are reaped by Run

  void Run();
  // What became of a connection after its first request (kHandedOff: `conn`
  // was moved to a writer thread).
  enum class Outcome { kClose, kHeld, kHandedOff };
  Outcome Serve(ScopedFd& conn);
  // Serves `first` and every later write request on `conn`, then closes it.
  void WriteLoop(ScopedFd conn, pid_t pid, shm::Request first, std::atomic<bool>* done);
  // Copies the write's bytes out of process `pid`, chunk by chunk.
  Status Write(const shm::Request& req, pid_t pid);
  size_t HeldCount();
  void ReapWriters(bool all);
  void CloseMappings();
  // Waits until `fd` is readable, the deadline passes or Stop() is called.
  bool WaitReadable(int fd, int64_t deadline_ms);
  // Reads exactly n bytes before the deadline; false on EOF, error, timeout, stop.
  bool ReadFull(int fd, uint8_t* buf, size_t n, int64_t deadline_ms);
  // A kWriteV's slice table after its request (nothing for other kinds).
  bool ReadSlices(int conn, shm::Request& req);
  void SendReply(int conn, const shm::Reply& reply, int attach_fd = -1);  // fd: SCM_RIGHTS
};

bool ShmServer::Impl::WaitReadable(int fd, int64_t deadline_ms) {
  for (;;) {
    int64_t left = deadline_ms - SteadyMs();
    if (left <= 0) return false;
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd.get(), POLLIN, 0}};
    int rc = poll(fds, 2, static_cast<int>(std::min<int64_t>(left, 60'000)));
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0) return false;
    if (fds[1].revents != 0) return false;  // stopping
    if (fds[0].revents != 0) return true;   // data, EOF or error: the read tells
  }
}

bool ShmServer::Impl::ReadFull(int fd, uint8_t* buf, size_t n, int64_t deadline_ms) {
  size_t got = 0;
  while (got < n) {
    if (!WaitReadable(fd, deadline_ms)) return false;
    ssize_t r = recv(fd, buf + got, n - got, MSG_DONTWAIT);
    if (r < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)) continue;
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

void ShmServer::Impl::SendReply(int conn, const shm::Reply& reply, int attach_fd) {
  uint8_t buf[shm::kReplyBytes];
  shm::EncodeReply(reply, buf);
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (attach_fd >= 0) {
    std::memset(control, 0, sizeof control);
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &attach_fd, sizeof attach_fd);
  }
  // The reply fits an empty socket buffer, so one sendmsg normally sends it all;
  // a short send (the client vanished) only costs that client its handshake.
  ssize_t r;
  do {
    r = sendmsg(conn, &msg, MSG_NOSIGNAL);
  } while (r < 0 && errno == EINTR);
  if (r > 0 && static_cast<size_t>(r) < sizeof buf) {
    size_t sent = static_cast<size_t>(r);
    while (sent < sizeof buf) {
      ssize_t w = send(conn, buf + sent, sizeof buf - sent, MSG_NOSIGNAL);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) return;
      sent += static_cast<size_t>(w);
    }
  }
}

namespace {

// The client's memory for the bytes [offset, offset + n) of a kWriteV's
// slices, as up to `max` iovecs; the count filled.
size_t RemoteIovecs(const std::vector<shm::Request::Slice>& slices, uint64_t offset, uint64_t n,
                    iovec* out, size_t max) {
  size_t filled = 0;
  for (const shm::Request::Slice& s : slices) {
    if (n == 0 || filled == max) break;
    if (offset >= s.length) {
      offset -= s.length;
      continue;
    }
    const uint64_t take = std::min(s.length - offset, n);
    out[filled++] = iovec{reinterpret_cast<void*>(static_cast<uintptr_t>(s.address + offset)),
                          static_cast<size_t>(take)};
    n -= take;
    offset = 0;
  }
  return filled;
}

}  // namespace

ShmServer::Impl::Outcome ShmServer::Impl::Serve(ScopedFd& owned) {
  const int conn = owned.get();
  // Belt and braces under the poll deadline: no blocking call may outlast it.
  timeval tv{kHandshakeTimeoutMs / 1000, 0};
  setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);

  // The request is read before any refusal: a socket closed with unread data
  // would reset the client's end, and the client could lose the reply.
  uint8_t buf[shm::kRequestBytes];
  // A client that only probes reachability (CanReach) closes without a request.
  if (!ReadFull(conn, buf, sizeof buf, SteadyMs() + kHandshakeTimeoutMs)) return Outcome::kClose;
  shm::Reply reply;
  // Only the node's own uid may map its memory (read-only) or have the node
  // read its memory (a write). Another uid is refused as UNAVAILABLE, a
  // failure of the path, so that client uses TCP.
  ucred cred{};
  socklen_t cred_len = sizeof cred;
  if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || cred.uid != geteuid()) {
    reply.code = ErrorCode::kUnavailable;
    reply.message = "shared memory is only for the node's uid " + std::to_string(geteuid()) +
                    ", not uid " + std::to_string(cred.uid) + " (use TCP)";
    SendReply(conn, reply);
    return Outcome::kClose;
  }
  shm::Request req;
  if (!shm::DecodeRequest(buf, req) || !ReadSlices(conn, req)) {
    reply.code = ErrorCode::kInvalidArgument;
    reply.message = "malformed shm request";
    SendReply(conn, reply);
    return Outcome::kClose;
  }
  if (size_t held = HeldCount(); held >= max_clients) {
    reply.code = ErrorCode::kUnavailable;
    reply.message = "the node already serves " + std::to_string(held) +
                    " shared-memory connections (use TCP)";
    SendReply(conn, reply);
    return Outcome::kClose;
  }
  if (req.kind == shm::Kind::kWrite || req.kind == shm::Kind::kWriteV) {
    std::lock_guard lock(writers_mu);
    Writer& w = writers.emplace_back();
    w.thread =
        std::thread([this, fd = std::move(owned), pid = cred.pid, req, done = &w.done]() mutable {
          WriteLoop(std::move(fd), pid, req, done);
        });
    return Outcome::kHandedOff;
  }
  StatusOr<SegmentSet::Resolved> range =
      segments.Resolve(req.cap, req.cap.op, signer, UnixNowMs());
  if (!range.ok()) {
    if (metrics) metrics->RecordRefusal(DataPath::kShm, RefusalReasonOf(range.status().code()));
    reply.code = range.status().code();
    reply.message = range.status().message();
    SendReply(conn, reply);
    return Outcome::kClose;
  }
  reply.segment = range->segment->id();
  reply.size = range->segment->size();
  if (metrics) metrics->RecordShmMap();
  SendReply(conn, reply, range->segment->fd());
  return Outcome::kHeld;
}

bool ShmServer::Impl::ReadSlices(int conn, shm::Request& req) {
  if (req.kind != shm::Kind::kWriteV) return true;
  std::vector<uint8_t> table(req.address * shm::kSliceBytes);
  return ReadFull(conn, table.data(), table.size(), SteadyMs() + kHandshakeTimeoutMs) &&
         shm::DecodeSlices(table.data(), table.size(), req);
}

Status ShmServer::Impl::Write(const shm::Request& req, pid_t pid) {
  const Capability& cap = req.cap;
  const auto start = std::chrono::steady_clock::now();
  SegmentMemory::Fence fence;
  StatusOr<SegmentSet::Resolved> range =
      segments.Resolve(cap, AccessOp::kWrite, signer, UnixNowMs(), &fence);
  if (!range.ok()) {
    if (metrics) metrics->RecordRefusal(DataPath::kShm, RefusalReasonOf(range.status().code()));
    return range.status();
  }
  // Fencing: the space is the put's only until its capability expires (or the
  // node remounts); the master may give it to another object after that. So
  // the capability is checked again before every chunk, and the rest of the
  // write is abandoned once it fails. The client cannot write late itself:
  // its mapping is read-only.
  uint64_t done = 0;
  while (done < cap.length) {
    if (!fence.Holds()) {
      if (metrics) metrics->RecordRefusal(DataPath::kShm, RefusalReason::kExpired);
      return Status(ErrorCode::kLeaseExpired,
                    "write capability expired (or the segment was remounted) after " +
                        std::to_string(done) + " of " + std::to_string(cap.length) + " bytes");
    }
    uint64_t n = FenceStep(cap.length - done);
    iovec local{range->data + done, n};
    iovec remote[64];
    size_t remotes = 1;
    if (req.kind == shm::Kind::kWriteV) {
      remotes = RemoteIovecs(req.slices, done, n, remote, std::size(remote));
    } else {
      remote[0] = iovec{reinterpret_cast<void*>(static_cast<uintptr_t>(req.address + done)), n};
    }
    ssize_t r = process_vm_readv(pid, &local, 1, remote, remotes, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0 && errno == EFAULT) {
      return Status(ErrorCode::kInvalidArgument,
                    "the client's buffer is not readable at byte " + std::to_string(done));
    }
    if (r < 0) {
      // EPERM (a ptrace policy or seccomp forbids it), ESRCH (client gone),
      // ENOSYS: a failure of the path; the client then writes over TCP.
      return Status(ErrorCode::kUnavailable,
                    std::string("process_vm_readv from the client failed: ") + std::strerror(errno) +
                        " (use TCP)");
    }
    if (r == 0) {
      return Status(ErrorCode::kInvalidArgument,
                    "the client's buffer ends at byte " + std::to_string(done));
    }
    done += static_cast<uint64_t>(r);
  }
  // Acknowledged only once durable (a persistent segment; DRAM: no-op).
  range->segment->Persist(range->data, cap.length);
  if (metrics) {
    metrics->RecordTransfer(
        DataPath::kShm, DataOp::kWrite, cap.length,
        static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                  std::chrono::steady_clock::now() - start)
                                  .count()));
  }
  return Status::Ok();
}

void ShmServer::Impl::WriteLoop(ScopedFd owned, pid_t pid, shm::Request req,
                                std::atomic<bool>* done) {
  const int conn = owned.get();
  for (;;) {
    Status s = Write(req, pid);
    shm::Reply reply;
    reply.code = s.code();
    reply.message = s.message();
    SendReply(conn, reply);
    // Idle until the client's next request, its hang-up, or Stop().
    if (!WaitReadable(conn, INT64_MAX)) break;
    uint8_t buf[shm::kRequestBytes];
    if (!ReadFull(conn, buf, sizeof buf, SteadyMs() + kHandshakeTimeoutMs)) break;
    if (!shm::DecodeRequest(buf, req) || req.kind == shm::Kind::kMap || !ReadSlices(conn, req)) {
      reply = shm::Reply{};
      reply.code = ErrorCode::kInvalidArgument;
      reply.message = "malformed shm write request";
      SendReply(conn, reply);
      break;
    }
  }
  owned.reset();
  done->store(true, std::memory_order_release);
}

size_t ShmServer::Impl::HeldCount() {
  std::lock_guard lock(writers_mu);
  return clients.size() + writers.size();  // clients: the accept thread's own
}

void ShmServer::Impl::ReapWriters(bool all) {
  std::list<Writer> finished;
  {
    std::lock_guard lock(writers_mu);
    for (auto it = writers.begin(); it != writers.end();) {
      auto next = std::next(it);
      if (all || it->done.load(std::memory_order_acquire)) {
        finished.splice(finished.end(), writers, it);
      }
      it = next;
    }
  }
  for (Writer& w : finished) w.thread.join();
}

void ShmServer::Impl::CloseMappings() { clients.clear(); }

void ShmServer::Impl::Run() {
  for (;;) {
    ReapWriters(false);
    if (metrics) metrics->SetShmClients(HeldCount());
    std::vector<pollfd> fds = {
        {listen_fd.get(), POLLIN, 0}, {wake_fd.get(), POLLIN, 0}, {drop_fd.get(), POLLIN, 0}};
    for (const ScopedFd& c : clients) fds.push_back({c.get(), POLLIN, 0});
    // Finished writers are reaped at the next wake-up; a second's timeout
    // bounds how long their threads linger when nothing else happens.
    int rc = poll(fds.data(), fds.size(), 1000);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 || fds[1].revents != 0) break;
    if (fds[2].revents != 0) {
      uint64_t n;
      ssize_t r = read(drop_fd.get(), &n, sizeof n);
      (void)r;
      uint64_t asked;
      {
        std::lock_guard lock(drop_mu);
        asked = drops_asked;
      }
      CloseMappings();
      {
        std::lock_guard lock(drop_mu);
        drops_done = asked;
      }
      drop_cv.notify_all();
      continue;  // the held fds in `fds` are closed now
    }
    // A held connection only ever turns readable when its client closed it (or
    // sent what the protocol never sends): either way it is done.
    for (size_t i = fds.size(); i-- > 3;) {
      if (fds[i].revents == 0) continue;
      clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(i - 3));  // and closed
    }
    if (fds[0].revents == 0) continue;
    ScopedFd conn(accept4(listen_fd.get(), nullptr, nullptr, SOCK_CLOEXEC));
    if (!conn.valid()) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of resources: back off instead of spinning on a ready listener.
        pollfd wake{wake_fd.get(), POLLIN, 0};
        if (poll(&wake, 1, 100) > 0) break;
      }
      continue;  // EINTR, EAGAIN (client gone), ECONNABORTED, ...
    }
    switch (Serve(conn)) {
      case Outcome::kHeld: clients.push_back(std::move(conn)); break;
      case Outcome::kHandedOff:
      case Outcome::kClose:  // closed here
        break;
    }
  }
  std::lock_guard lock(drop_mu);
  thread_exited = true;
  drop_cv.notify_all();
}

ShmServer::ShmServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ShmServer::~ShmServer() { Stop(); }

StatusOr<std::unique_ptr<ShmServer>> ShmServer::Start(const std::string& name,
                                                      SegmentSet segments,
                                                      const CapabilitySigner& signer,
                                                      TransferMetrics* metrics) {
  sockaddr_un addr;
  socklen_t addr_len = 0;
  if (!shm::AbstractAddress(name, addr, addr_len)) {
    return Status(ErrorCode::kInvalidArgument, "shm socket name must be 1.." +
                                                   std::to_string(sizeof(addr.sun_path) - 1) +
                                                   " bytes, got " + std::to_string(name.size()));
  }
  auto impl = std::make_unique<Impl>(std::move(segments), signer);
  impl->metrics = metrics;
  // Non-blocking listener: a client that disconnects between poll and accept
  // must not block the loop.
  // On a failure `impl` goes, and its fds with it.
  impl->listen_fd.reset(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
  if (!impl->listen_fd.valid()) return IoError("shm socket", errno);
  if (bind(impl->listen_fd.get(), reinterpret_cast<sockaddr*>(&addr), addr_len) != 0) {
    Status s = IoError("shm bind", errno);
    return Status(s.code(), s.message() + " (abstract name '" + name + "')");
  }
  if (listen(impl->listen_fd.get(), 64) != 0) return IoError("shm listen", errno);
  impl->wake_fd.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl->wake_fd.valid()) return IoError("shm eventfd", errno);
  impl->drop_fd.reset(eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK));
  if (!impl->drop_fd.valid()) return IoError("shm eventfd", errno);
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->Run(); });
  return std::unique_ptr<ShmServer>(new ShmServer(std::move(impl)));
}

void ShmServer::Stop() {
  std::lock_guard<std::mutex> lock(impl_->stop_mu);
  if (impl_->stopped) return;
  impl_->stopped = true;
  uint64_t one = 1;
  ssize_t r;
  do {
    r = write(impl_->wake_fd.get(), &one, sizeof one);
  } while (r < 0 && errno == EINTR);
  if (impl_->thread.joinable()) impl_->thread.join();
  // Writers see the eventfd too: each finishes its chunk, replies, and exits.
  impl_->ReapWriters(true);
  // Closing the held connections tells their clients this memory is no longer
  // served.
  impl_->CloseMappings();
  impl_->listen_fd.reset();
  impl_->wake_fd.reset();
  impl_->drop_fd.reset();
}

void ShmServer::DropMappings() {
  std::unique_lock lock(impl_->drop_mu);
  if (impl_->thread_exited) return;
  uint64_t ticket = ++impl_->drops_asked;
  uint64_t one = 1;
  ssize_t r;
  do {
    r = write(impl_->drop_fd.get(), &one, sizeof one);
  } while (r < 0 && errno == EINTR);
  impl_->drop_cv.wait(lock, [&] { return impl_->drops_done >= ticket || impl_->thread_exited; });
}

}  // namespace crescent::transfer
