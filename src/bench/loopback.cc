#include "bench/loopback.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "transfer/congestion.h"

namespace crescent::bench {

namespace {
Status Errno(const char* what) {
  return Status(ErrorCode::kInternal, std::string(what) + ": " + std::strerror(errno));
}
}  // namespace

void SocketPair::Shutdown() {
  shutdown(client.get(), SHUT_RDWR);
  shutdown(server.get(), SHUT_RDWR);
}

StatusOr<std::vector<std::unique_ptr<SocketPair>>> LoopbackPairs(int n,
                                                                 const std::string& congestion) {
  const ScopedFd lfd(socket(AF_INET, SOCK_STREAM, 0));
  if (!lfd.valid()) return Errno("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(lfd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      listen(lfd.get(), 64) != 0 ||
      getsockname(lfd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Errno("listen");
  }
  std::vector<std::unique_ptr<SocketPair>> out;
  Status failed = Status::Ok();
  for (int i = 0; i < n && failed.ok(); ++i) {
    auto p = std::make_unique<SocketPair>();
    p->client.reset(socket(AF_INET, SOCK_STREAM, 0));
    if (!p->client.valid() ||
        connect(p->client.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      failed = Errno("connect");
      break;
    }
    p->server.reset(accept(lfd.get(), nullptr, nullptr));
    if (!p->server.valid()) {
      failed = Errno("accept");
      break;
    }
    int one = 1;
    for (int fd : {p->client.get(), p->server.get()}) {
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      if (failed.ok()) failed = transfer::SetCongestionControl(fd, congestion);
    }
    out.push_back(std::move(p));
  }
  if (!failed.ok()) return failed;
  return out;
}

bool ReadAll(int fd, std::byte* p, size_t n) {
  while (n > 0) {
    ssize_t r = read(fd, p, n);
    if (r <= 0) return false;
    p += r;
    n -= static_cast<size_t>(r);
  }
  return true;
}

}  // namespace crescent::bench
