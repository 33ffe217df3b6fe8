#include "rpc/control_channel.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "common/fd.h"
#include "common/listen_check.h"
#include "rpc/messages.pb.h"
#include "rpc/tls.h"
#include "transfer/frame_buffer.h"
#include "transfer/wire.h"

namespace crescent::rpc {
namespace {

namespace wire = transfer::wire;
using Clock = std::chrono::steady_clock;

// A channel unused this long is checked for a close by the master before
// its next call (ControlChannel::broken): one poll(), which a client calling
// more often than this never pays.
constexpr std::chrono::milliseconds kIdleCheckAfter{10};

Status Unavailable(const std::string& target, const std::string& why) {
  return Status(ErrorCode::kUnavailable, "lean control connection to " + target + ": " + why);
}

// Milliseconds left until `deadline` for poll(), at least 0.
int PollMs(ControlChannel::Deadline deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return left.count() <= 0 ? 0 : static_cast<int>(std::min<int64_t>(left.count() + 1, 1 << 30));
}

// Waits for `events` on `fd`: OK, kTimeout, or kUnavailable with the reason.
Status Wait(int fd, short events, ControlChannel::Deadline deadline, const std::string& target) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int n = ::poll(&p, 1, PollMs(deadline));
    if (n > 0) return Status::Ok();
    if (n == 0) {
      if (Clock::now() >= deadline) {
        return Status(ErrorCode::kTimeout, "no answer from the master at " + target);
      }
      continue;
    }
    if (errno != EINTR) return Unavailable(target, std::string("poll: ") + std::strerror(errno));
  }
}

// A connected non-blocking socket to `target` ("unix:PATH" or "HOST:PORT").
StatusOr<ScopedFd> Dial(const std::string& target, ControlChannel::Deadline deadline) {
  sockaddr_storage addr{};
  socklen_t len = 0;
  int family = AF_UNIX;
  if (target.rfind("unix:", 0) == 0) {
    const std::string path = target.substr(5);
    if (auto s = CheckUnixSocketPath("lean control socket", path); !s.ok()) return s;
    auto* un = reinterpret_cast<sockaddr_un*>(&addr);
    un->sun_family = AF_UNIX;
    std::memcpy(un->sun_path, path.data(), path.size());
    len = static_cast<socklen_t>(sizeof(sockaddr_un));
  } else {
    const size_t colon = target.rfind(':');
    if (colon == std::string::npos || colon == 0) {
      return Status(ErrorCode::kInvalidArgument,
                    "lean control address '" + target + "' is not HOST:PORT");
    }
    std::string host = target.substr(0, colon);
    if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
      host = host.substr(1, host.size() - 2);
    }
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (int rc = ::getaddrinfo(host.c_str(), target.c_str() + colon + 1, &hints, &found);
        rc != 0 || found == nullptr) {
      return Unavailable(target, std::string("cannot resolve: ") + ::gai_strerror(rc));
    }
    std::memcpy(&addr, found->ai_addr, found->ai_addrlen);
    len = found->ai_addrlen;
    family = found->ai_family;
    ::freeaddrinfo(found);
  }
  ScopedFd fd(::socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd.valid()) return Unavailable(target, std::string("socket: ") + std::strerror(errno));
  if (family != AF_UNIX) {
    const int one = 1;
    ::setsockopt(fd.get(), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    if (errno != EINPROGRESS && errno != EAGAIN) {
      return Unavailable(target, std::string("connect: ") + std::strerror(errno));
    }
    if (Status s = Wait(fd.get(), POLLOUT, deadline, target); !s.ok()) return s;
    int err = 0;
    socklen_t err_len = sizeof err;
    ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &err_len);
    if (err != 0) return Unavailable(target, std::string("connect: ") + std::strerror(err));
  }
  return fd;
}

}  // namespace

struct ControlChannel::Impl {
  // A call waiting for its answer.
  struct Waiter {
    bool done = false;
    ErrorCode code = ErrorCode::kOk;
    std::string body;  // the reply, or the error message
  };

  std::string target;
  ScopedFd fd;
  std::chrono::microseconds spin{0};  // ControlChannel::Connect
  uint64_t max_answer = 0;            // likewise
  std::atomic<uint64_t> next_id{1};
  std::mutex write_mu;  // one frame at a time on the socket

  std::mutex mu;  // everything below
  std::condition_variable cv;
  std::unordered_map<uint64_t, Waiter*> waiters;
  bool reading = false;     // a caller is reading the socket
  Status failed;            // not OK: broken
  Clock::time_point last_call = Clock::now();  // when the last call ended
  transfer::FrameBuffer in;  // read but not yet delivered; only the reader touches it
  std::optional<auth::Identity> identity;  // set by Connect, then read-only
  std::unique_ptr<TlsClientSession> tls;   // set by Connect under TLS, else null

  using Io = TlsClientSession::Io;
  // One send or receive on the socket, plain or through TLS: bytes moved, the
  // readiness to wait for, a close (receive: n 0), or why it failed.
  Io SendSome(const char* data, size_t len);
  Io ReceiveSome(char* data, size_t len);
  // The TLS handshake on a connected socket, until `deadline`.
  Status ShakeHands(const TlsClientContext& context, Deadline deadline);
  Status Send(std::string_view frame, Deadline deadline);
  // Sends `frame` (call `id`'s), runs `meanwhile`, and waits for its answer:
  // the reply's bytes into *answer, or the error.
  Status Exchange(uint64_t id, std::string_view frame, Deadline deadline,
                  const std::function<void()>* meanwhile, std::string* answer);
  // Reads what the socket has (waiting until `deadline`) and delivers every
  // complete answer. Called by the one reader, without `mu`.
  Status ReadAndDeliver(Deadline deadline);
  // Breaks the connection: every waiter, now and later, gets `s`. Under `mu`.
  void Fail(Status s);
};

ControlChannel::Impl::Io ControlChannel::Impl::SendSome(const char* data, size_t len) {
  if (tls) return tls->Write(data, len);
  for (;;) {
    const ssize_t n = ::send(fd.get(), data, len, MSG_NOSIGNAL);
    if (n >= 0) return {n, 0, Status::Ok()};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {0, POLLOUT, Status::Ok()};
    return {0, 0, Unavailable(target, std::string("send: ") + std::strerror(errno))};
  }
}

ControlChannel::Impl::Io ControlChannel::Impl::ReceiveSome(char* data, size_t len) {
  if (tls) return tls->Read(data, len);
  for (;;) {
    const ssize_t n = ::recv(fd.get(), data, len, 0);
    if (n >= 0) return {n, 0, Status::Ok()};
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return {0, POLLIN, Status::Ok()};
    return {0, 0, Unavailable(target, std::string("recv: ") + std::strerror(errno))};
  }
}

Status ControlChannel::Impl::ShakeHands(const TlsClientContext& context, Deadline deadline) {
  std::string host = target.substr(0, target.rfind(':'));
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  StatusOr<std::unique_ptr<TlsClientSession>> session = context.Start(fd.get(), host, target);
  if (!session.ok()) return session.status();
  for (;;) {
    const Io io = (*session)->Handshake();
    if (io.n > 0) break;
    if (!io.status.ok()) return io.status;
    if (Status s = Wait(fd.get(), io.want, deadline, target); !s.ok()) {
      return s.code() == ErrorCode::kTimeout
                 ? Unavailable(target,
                               "no TLS handshake from the master (does it serve TLS? "
                               "it needs --tls-cert and --tls-key)")
                 : s;
    }
  }
  tls = std::move(*session);
  return Status::Ok();
}

Status ControlChannel::Impl::Send(std::string_view frame, Deadline deadline) {
  std::lock_guard lock(write_mu);
  for (size_t sent = 0; sent < frame.size();) {
    const Io io = SendSome(frame.data() + sent, frame.size() - sent);
    if (io.n > 0) {
      sent += static_cast<size_t>(io.n);
      continue;
    }
    if (!io.status.ok()) return io.status;
    if (io.want == 0) return Unavailable(target, "the master closed the connection");
    if (Status s = Wait(fd.get(), io.want, deadline, target); !s.ok()) {
      // Part of a frame may be on the stream: it cannot be used again.
      return sent == 0 ? s : Unavailable(target, "send stalled mid-frame: " + s.message());
    }
  }
  return Status::Ok();
}

Status ControlChannel::Impl::ReadAndDeliver(Deadline deadline) {
  const std::span<char> room = in.Room();
  const auto spin_until = Clock::now() + spin;
  for (;;) {
    const Io io = ReceiveSome(room.data(), room.size());
    if (io.n > 0) {
      in.Filled(static_cast<size_t>(io.n));
      break;
    }
    if (!io.status.ok()) return io.status;
    if (io.want == 0) return Unavailable(target, "the master closed the connection");
    if (io.want == POLLIN && Clock::now() < spin_until) {
      sched_yield();  // the master may be waiting for this CPU (control_server.cc)
      continue;
    }
    if (Status s = Wait(fd.get(), io.want, deadline, target); !s.ok()) return s;
  }
  std::lock_guard lock(mu);
  for (;;) {
    const std::string_view pending = in.Pending();
    if (pending.size() < wire::kResponseHeaderSize) break;
    StatusOr<wire::ResponseHeader> h =
        wire::DecodeResponse(reinterpret_cast<const uint8_t*>(pending.data()));
    if (!h.ok()) return Unavailable(target, h.status().message());
    StatusOr<uint64_t> body = wire::ControlAnswerBody(*h, max_answer);
    if (!body.ok()) return Unavailable(target, body.status().message());
    const size_t frame = wire::kResponseHeaderSize + static_cast<size_t>(*body);
    if (pending.size() < frame) break;
    const std::string_view text = pending.substr(wire::kResponseHeaderSize, *body);
    if (h->request_id == 0 && h->code != ErrorCode::kOk) {
      // For no call: the master refuses the connection itself, and says why.
      return Unavailable(target, std::string(text));
    }
    if (auto it = waiters.find(h->request_id); it != waiters.end()) {
      Waiter& w = *it->second;
      w.code = h->code;
      w.body.assign(text);
      w.done = true;
    }  // else: the answer to a call that timed out
    in.Consume(frame);
  }
  return Status::Ok();
}

void ControlChannel::Impl::Fail(Status s) {
  if (failed.ok()) failed = std::move(s);
  cv.notify_all();
}

StatusOr<std::unique_ptr<ControlChannel>> ControlChannel::Connect(
    const std::string& target, Deadline deadline, uint64_t* instance,
    std::chrono::microseconds spin, uint64_t max_answer, const auth::Token* token,
    const TlsClientContext* tls) {
  StatusOr<ScopedFd> fd = Dial(target, deadline);
  if (!fd.ok()) return fd.status();
  auto impl = std::make_unique<Impl>();
  impl->target = target;
  impl->fd = std::move(fd).value();
  impl->spin = spin;
  impl->max_answer = max_answer;
  if (tls != nullptr) {
    if (target.rfind("unix:", 0) == 0) {
      return Status(ErrorCode::kInvalidArgument,
                    "the lean control protocol's Unix socket " + target + " serves no TLS");
    }
    if (Status s = impl->ShakeHands(*tls, deadline); !s.ok()) return s;
  }
  std::unique_ptr<ControlChannel> channel(new ControlChannel(std::move(impl)));
  proto::ControlEndpointsResponse hello;
  if (Status s = channel->Call(ControlMethod::kHello, proto::Empty(), &hello, deadline); !s.ok()) {
    return s;
  }
  if (instance != nullptr) *instance = hello.instance();
  if (token != nullptr) {
    auth::ClientHandshake handshake(*token);
    std::string answer;
    if (Status s =
            channel->CallRaw(ControlMethod::kAuthenticate, handshake.Start(), &answer, deadline);
        !s.ok()) {
      return s;
    }
    StatusOr<std::string> proof = handshake.OnServerFirst(answer);
    if (!proof.ok()) return proof.status();
    if (Status s = channel->CallRaw(ControlMethod::kAuthenticate, *proof, &answer, deadline);
        !s.ok()) {
      return s;
    }
    StatusOr<auth::Identity> who = handshake.OnServerFinal(answer);
    if (!who.ok()) return who.status();
    channel->impl_->identity = std::move(*who);
  }
  return channel;
}

ControlChannel::ControlChannel(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ControlChannel::~ControlChannel() = default;

bool ControlChannel::broken() const {
  Impl& c = *impl_;
  std::lock_guard lock(c.mu);
  if (!c.failed.ok()) return true;
  if (!c.waiters.empty() || c.reading || Clock::now() - c.last_call < kIdleCheckAfter) {
    return false;
  }
  // No call is waiting, so nothing should be readable: data, a hang-up or an
  // error means the master closed the connection (or refused it, saying why).
  pollfd p{c.fd.get(), POLLIN, 0};
  if (::poll(&p, 1, 0) == 0) return false;
  if (c.tls) {
    // TLS records of its own (a session ticket) are no data and no close.
    const Impl::Io io = c.tls->Peek();
    if (io.n == 0 && io.want != 0 && io.status.ok()) return false;
    c.Fail(Unavailable(c.target, io.n > 0 ? "unexpected bytes from the master on an idle connection"
                                          : "the master closed the idle connection"));
    return true;
  }
  char byte;
  const ssize_t n = ::recv(c.fd.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
  c.Fail(Unavailable(c.target, n == 0 ? "the master closed the idle connection"
                                      : "unexpected bytes from the master on an idle connection"));
  return true;
}

const std::string& ControlChannel::target() const { return impl_->target; }

const std::optional<auth::Identity>& ControlChannel::identity() const { return impl_->identity; }

Status ControlChannel::Call(ControlMethod method, const google::protobuf::MessageLite& request,
                            google::protobuf::MessageLite* reply, Deadline deadline,
                            const std::function<void()>* meanwhile) {
  Impl& c = *impl_;
  const uint64_t id = c.next_id.fetch_add(1, std::memory_order_relaxed);
  const size_t body = request.ByteSizeLong();
  if (body > UINT32_MAX) {
    return Status(ErrorCode::kInvalidArgument, "control call body too large");
  }
  thread_local std::string frame;
  frame.resize(wire::kControlHeaderSize + body);
  wire::EncodeControl({static_cast<uint8_t>(method), id, static_cast<uint32_t>(body)},
                      reinterpret_cast<uint8_t*>(frame.data()));
  request.SerializeWithCachedSizesToArray(
      reinterpret_cast<uint8_t*>(frame.data() + wire::kControlHeaderSize));
  thread_local std::string answer;
  if (Status s = c.Exchange(id, frame, deadline, meanwhile, &answer); !s.ok()) return s;
  if (!reply->ParseFromString(answer)) {
    return Status(ErrorCode::kInternal, "the master's answer to a control call does not parse");
  }
  return Status::Ok();
}

Status ControlChannel::CallRaw(ControlMethod method, std::string_view request, std::string* answer,
                               Deadline deadline) {
  Impl& c = *impl_;
  const uint64_t id = c.next_id.fetch_add(1, std::memory_order_relaxed);
  if (request.size() > UINT32_MAX) {
    return Status(ErrorCode::kInvalidArgument, "control call body too large");
  }
  std::string frame(wire::kControlHeaderSize, '\0');
  wire::EncodeControl({static_cast<uint8_t>(method), id, static_cast<uint32_t>(request.size())},
                      reinterpret_cast<uint8_t*>(frame.data()));
  frame.append(request);
  return c.Exchange(id, frame, deadline, nullptr, answer);
}

Status ControlChannel::Impl::Exchange(uint64_t id, std::string_view frame, Deadline deadline,
                                      const std::function<void()>* meanwhile, std::string* answer) {
  Impl& c = *this;
  Impl::Waiter w;
  {
    std::lock_guard lock(c.mu);
    if (!c.failed.ok()) return c.failed;
    c.waiters.emplace(id, &w);
  }
  Status s = c.Send(frame, deadline);
  if (!s.ok()) {
    std::lock_guard lock(c.mu);
    c.waiters.erase(id);
    if (s.code() != ErrorCode::kTimeout) c.Fail(s);
    return s;
  }
  if (meanwhile != nullptr && *meanwhile) (*meanwhile)();

  std::unique_lock lock(c.mu);
  while (!w.done) {
    if (!c.failed.ok()) {
      s = c.failed;
      break;
    }
    if (!c.reading) {
      c.reading = true;
      lock.unlock();
      Status r = c.ReadAndDeliver(deadline);
      lock.lock();
      c.reading = false;
      c.cv.notify_all();  // answers for others, or the socket for the next reader
      if (!r.ok()) {
        if (r.code() != ErrorCode::kTimeout) c.Fail(r);
        if (!w.done) s = r;
        break;
      }
      continue;
    }
    if (c.cv.wait_until(lock, deadline) == std::cv_status::timeout && !w.done &&
        Clock::now() >= deadline) {
      s = Status(ErrorCode::kTimeout, "no answer from the master at " + c.target);
      break;
    }
  }
  c.waiters.erase(id);
  c.last_call = Clock::now();
  lock.unlock();
  if (!w.done) return s;
  if (w.code != ErrorCode::kOk) return Status(w.code, w.body);
  answer->swap(w.body);
  return Status::Ok();
}

}  // namespace crescent::rpc
