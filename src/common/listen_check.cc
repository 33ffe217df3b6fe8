#include "common/listen_check.h"

#include <netdb.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace crescent {

Status CheckCanListen(const std::string& what, const std::string& host, uint16_t port) {
  if (port == 0) return Status::Ok();
  const std::string where = host + ":" + std::to_string(port);
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* res = nullptr;
  int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), std::to_string(port).c_str(), &hints,
                       &res);
  if (rc != 0) {
    return Status(ErrorCode::kInvalidArgument,
                  what + " cannot listen on " + where + ": " + gai_strerror(rc));
  }
  int err = 0;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    int fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) {
      err = errno;
      continue;
    }
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    const bool bound = bind(fd, a->ai_addr, a->ai_addrlen) == 0;
    err = bound ? 0 : errno;
    close(fd);
    if (bound) break;
  }
  freeaddrinfo(res);
  if (err == 0) return Status::Ok();
  return Status(ErrorCode::kUnavailable,
                what + " cannot listen on " + where + ": " + std::strerror(err));
}

size_t MaxUnixSocketPath() { return sizeof(sockaddr_un{}.sun_path) - 1; }

Status CheckUnixSocketPath(const std::string& what, const std::string& path) {
  if (path.empty()) return Status(ErrorCode::kInvalidArgument, what + " is empty");
  if (path.size() > MaxUnixSocketPath()) {
    return Status(ErrorCode::kInvalidArgument,
                  what + " is " + std::to_string(path.size()) + " bytes long; a Unix socket path " +
                      "can have at most " + std::to_string(MaxUnixSocketPath()) +
                      " (choose a shorter one, e.g. under /run or /tmp)");
  }
  return Status::Ok();
}

}  // namespace crescent
