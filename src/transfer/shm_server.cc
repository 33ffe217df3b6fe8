// ShmServer: one accept thread serves handshakes inline, one at a time. A
// handshake is a 69-byte request and a 222-byte reply (shm_protocol.h), so
// serving it inline is cheap; a client that stalls is cut off after
// kHandshakeTimeoutMs, and Stop() interrupts even that wait through the eventfd
// every blocking poll in this file also watches.
//
// After a successful handshake the connection stays open, idle, until the
// client closes it or the server stops: it is how the client tells that the
// memory it maps still belongs to a running node (shm_transport.cc). The same
// thread polls these connections with the listener and closes each one whose
// client went away. At most MaxClients() are held (a quarter of the process's
// fd limit, at most 1024: the data port's connections need fds too); past that
// a handshake is refused as UNAVAILABLE and the client uses TCP.
#include "transfer/shm_server.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

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

Status Errno(const char* what, int err) {
  return Status(ErrorCode::kIoError, std::string(what) + ": " + std::strerror(err));
}

void CloseFd(int fd) {
  // close() is not retried on EINTR: on Linux the fd is released regardless.
  if (fd >= 0) close(fd);
}

int64_t SteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct ShmServer::Impl {
  Impl(SegmentMemory& seg, const CapabilitySigner& sig) : segment(seg), signer(sig) {}

  SegmentMemory& segment;
  CapabilitySigner signer;  // a copy: the caller's may not outlive us
  int listen_fd = -1;
  int wake_fd = -1;  // eventfd; readable once Stop() has been called
  std::thread thread;
  std::mutex stop_mu;
  bool stopped = false;

  std::vector<int> clients;  // handshaken connections, held open (server thread only)
  const size_t max_clients = MaxClients();

  void Run();
  // True when the handshake succeeded: the caller then holds `conn` open.
  bool Serve(int conn);
  // Waits until `fd` is readable, the deadline passes or Stop() is called.
  bool WaitReadable(int fd, int64_t deadline_ms);
  // Reads exactly n bytes before the deadline; false on EOF, error, timeout, stop.
  bool ReadFull(int fd, uint8_t* buf, size_t n, int64_t deadline_ms);
  void SendReply(int conn, const shm::Reply& reply, bool attach_fd);
};

bool ShmServer::Impl::WaitReadable(int fd, int64_t deadline_ms) {
  for (;;) {
    int64_t left = deadline_ms - SteadyMs();
    if (left <= 0) return false;
    pollfd fds[2] = {{fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    int rc = poll(fds, 2, static_cast<int>(left));
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

void ShmServer::Impl::SendReply(int conn, const shm::Reply& reply, bool attach_fd) {
  uint8_t buf[shm::kReplyBytes];
  shm::EncodeReply(reply, buf);
  iovec iov{buf, sizeof buf};
  msghdr msg{};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))];
  if (attach_fd) {
    std::memset(control, 0, sizeof control);
    msg.msg_control = control;
    msg.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    int fd = segment.fd();
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
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

bool ShmServer::Impl::Serve(int conn) {
  // Belt and braces under the poll deadline: no blocking call may outlast it.
  timeval tv{kHandshakeTimeoutMs / 1000, 0};
  setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(conn, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);

  // The request is read before any refusal: a socket closed with unread data
  // would reset the client's end, and the client could lose the reply.
  uint8_t req[shm::kRequestBytes];
  // A client that only probes reachability (CanReach) closes without a request.
  if (!ReadFull(conn, req, sizeof req, SteadyMs() + kHandshakeTimeoutMs)) return false;
  shm::Reply reply;
  // The uid check is the real gate: after the handshake the client touches the
  // whole segment without further capability checks by us. A client of another
  // uid is refused as UNAVAILABLE, a failure of the path, so it uses TCP.
  ucred cred{};
  socklen_t cred_len = sizeof cred;
  if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &cred_len) != 0 || cred.uid != geteuid()) {
    reply.code = ErrorCode::kUnavailable;
    reply.message = "shared memory is only for the node's uid " + std::to_string(geteuid()) +
                    ", not uid " + std::to_string(cred.uid) + " (use TCP)";
    SendReply(conn, reply, false);
    return false;
  }
  Capability cap;
  if (!shm::DecodeRequest(req, cap)) {
    reply.code = ErrorCode::kInvalidArgument;
    reply.message = "malformed shm handshake request";
    SendReply(conn, reply, false);
    return false;
  }
  StatusOr<std::byte*> range = segment.Resolve(cap, cap.op, signer, UnixNowMs());
  if (!range.ok()) {
    reply.code = range.status().code();
    reply.message = range.status().message();
    SendReply(conn, reply, false);
    return false;
  }
  if (clients.size() >= max_clients) {
    reply.code = ErrorCode::kUnavailable;
    reply.message = "the node already serves " + std::to_string(clients.size()) +
                    " shared-memory clients (use TCP)";
    SendReply(conn, reply, false);
    return false;
  }
  reply.segment = segment.id();
  reply.size = segment.size();
  SendReply(conn, reply, true);
  return true;
}

void ShmServer::Impl::Run() {
  for (;;) {
    std::vector<pollfd> fds = {{listen_fd, POLLIN, 0}, {wake_fd, POLLIN, 0}};
    for (int c : clients) fds.push_back({c, POLLIN, 0});
    int rc = poll(fds.data(), fds.size(), -1);
    if (rc < 0 && errno == EINTR) continue;
    if (rc < 0 || fds[1].revents != 0) return;
    // A held connection only ever turns readable when its client closed it (or
    // sent what the protocol never sends): either way it is done.
    for (size_t i = fds.size(); i-- > 2;) {
      if (fds[i].revents == 0) continue;
      CloseFd(fds[i].fd);
      clients.erase(clients.begin() + static_cast<std::ptrdiff_t>(i - 2));
    }
    if (fds[0].revents == 0) continue;
    int conn = accept4(listen_fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (conn < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // Out of resources: back off instead of spinning on a ready listener.
        pollfd wake{wake_fd, POLLIN, 0};
        if (poll(&wake, 1, 100) > 0) return;
      }
      continue;  // EINTR, EAGAIN (client gone), ECONNABORTED, ...
    }
    if (Serve(conn)) {
      clients.push_back(conn);
    } else {
      CloseFd(conn);
    }
  }
}

ShmServer::ShmServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ShmServer::~ShmServer() { Stop(); }

StatusOr<std::unique_ptr<ShmServer>> ShmServer::Start(const std::string& name,
                                                      SegmentMemory& segment,
                                                      const CapabilitySigner& signer) {
  sockaddr_un addr;
  socklen_t addr_len = 0;
  if (!shm::AbstractAddress(name, addr, addr_len)) {
    return Status(ErrorCode::kInvalidArgument, "shm socket name must be 1.." +
                                                   std::to_string(sizeof(addr.sun_path) - 1) +
                                                   " bytes, got " + std::to_string(name.size()));
  }
  auto impl = std::make_unique<Impl>(segment, signer);
  // Non-blocking listener: a client that disconnects between poll and accept
  // must not block the loop.
  impl->listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  if (impl->listen_fd < 0) return Errno("shm socket", errno);
  auto fail = [&](const char* what) {
    Status s = Errno(what, errno);
    CloseFd(impl->listen_fd);
    CloseFd(impl->wake_fd);
    return s;
  };
  if (bind(impl->listen_fd, reinterpret_cast<sockaddr*>(&addr), addr_len) != 0) {
    Status s = fail("shm bind");
    return Status(s.code(), s.message() + " (abstract name '" + name + "')");
  }
  if (listen(impl->listen_fd, 64) != 0) return fail("shm listen");
  impl->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (impl->wake_fd < 0) return fail("shm eventfd");
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
    r = write(impl_->wake_fd, &one, sizeof one);
  } while (r < 0 && errno == EINTR);
  if (impl_->thread.joinable()) impl_->thread.join();
  // Closing the held connections tells their clients this memory is no longer
  // served.
  for (int c : impl_->clients) CloseFd(c);
  impl_->clients.clear();
  CloseFd(impl_->listen_fd);
  CloseFd(impl_->wake_fd);
  impl_->listen_fd = impl_->wake_fd = -1;
}

}  // namespace crescent::transfer
