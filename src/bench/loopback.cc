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

SocketPair::~SocketPair() {
  if (client >= 0) close(client);
  if (server >= 0) close(server);
}

void SocketPair::Shutdown() {
  shutdown(client, SHUT_RDWR);
  shutdown(server, SHUT_RDWR);
}

StatusOr<std::vector<std::unique_ptr<SocketPair>>> LoopbackPairs(int n,
                                                                 const std::string& congestion) {
  int lfd = socket(AF_INET, SOCK_STREAM, 0);
  if (lfd < 0) return Errno("socket");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(lfd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 || listen(lfd, 64) != 0 ||
      getsockname(lfd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    Status s = Errno("listen");
    close(lfd);
    return s;
  }
  std::vector<std::unique_ptr<SocketPair>> out;
  Status failed = Status::Ok();
  for (int i = 0; i < n && failed.ok(); ++i) {
    auto p = std::make_unique<SocketPair>();
    p->client = socket(AF_INET, SOCK_STREAM, 0);
    if (p->client < 0 ||
        connect(p->client, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
      failed = Errno("connect");
      break;
    }
    p->server = accept(lfd, nullptr, nullptr);
    if (p->server < 0) {
      failed = Errno("accept");
      break;
    }
    int one = 1;
    for (int fd : {p->client, p->server}) {
      setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
      if (failed.ok()) failed = transfer::SetCongestionControl(fd, congestion);
    }
    out.push_back(std::move(p));
  }
  close(lfd);
  if (!failed.ok()) return failed;
  return out;
}

bool WriteAll(int fd, const std::byte* p, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, p, n);
    if (w <= 0) return false;
    p += w;
    n -= static_cast<size_t>(w);
  }
  return true;
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
