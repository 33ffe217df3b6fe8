#include "common/listen_check.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <string_view>

#include "common/endpoint.h"
#include "common/fd.h"

namespace crescent {

int TryEachAddress(const addrinfo* list,
                   const std::function<int(int fd, const addrinfo& a)>& attempt) {
  int err = 0;
  for (const addrinfo* a = list; a != nullptr; a = a->ai_next) {
    const ScopedFd fd(socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol));
    err = fd.valid() ? attempt(fd.get(), *a) : errno;
    if (err == 0) break;
  }
  return err;
}

bool IsLoopbackHost(std::string_view host) {
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  }
  if (host == "localhost") return true;
  const std::string h(host);
  in_addr v4;
  if (inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  if (inet_pton(AF_INET6, h.c_str(), &v6) == 1) {
    return IN6_IS_ADDR_LOOPBACK(&v6) || (IN6_IS_ADDR_V4MAPPED(&v6) && v6.s6_addr[12] == 127);
  }
  return false;
}

Status CheckCanListen(const std::string& what, const std::string& host, uint16_t port) {
  const std::string where = HostPort(host, port);
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
  const int err = TryEachAddress(res, [](int fd, const addrinfo& a) {
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    return bind(fd, a.ai_addr, a.ai_addrlen) == 0 ? 0 : errno;
  });
  freeaddrinfo(res);
  if (err == 0) return Status::Ok();
  return Status(ErrorCode::kUnavailable,
                what + " cannot listen on " + where + ": " + std::strerror(err));
}

size_t MaxUnixSocketPath() { return sizeof(sockaddr_un{}.sun_path) - 1; }

Status CheckUnixSocketPath(const std::string& what, const std::string& path) {
  if (path.empty() || path.size() > MaxUnixSocketPath()) {
    return Status(ErrorCode::kInvalidArgument, what + ": the path is " +
                                                   std::to_string(path.size()) +
                                                   " bytes; a Unix socket path takes 1 to " +
                                                   std::to_string(MaxUnixSocketPath()));
  }
  return Status::Ok();
}

Status CheckCanListenOn(const std::string& what, const std::string& address) {
  const size_t colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0) return Status::Ok();
  std::string_view host(address.data(), colon);
  if (host.size() > 2 && host.front() == '[' && host.back() == ']') {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    return Status::Ok();  // an IPv6 address without brackets: not HOST:PORT
  }
  const std::string_view port(address.data() + colon + 1, address.size() - colon - 1);
  unsigned value = 0;
  auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value > 65535) return Status::Ok();
  return CheckCanListen(what, std::string(host), static_cast<uint16_t>(value));
}

Status CheckCanListenUnix(const std::string& what, const std::string& path) {
  if (Status s = CheckUnixSocketPath(what + " cannot listen on unix:" + path, path); !s.ok()) {
    return s;
  }
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::memcpy(addr.sun_path, path.data(), path.size());
  ScopedFd fd(socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return Status(ErrorCode::kUnavailable,
                  what + " cannot listen on unix:" + path + ": " + std::strerror(errno));
  }
  const bool bound = bind(fd.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof addr) == 0;
  const int err = bound ? 0 : errno;
  fd.reset();
  if (bound) {
    unlink(path.c_str());
    return Status::Ok();
  }
  return Status(ErrorCode::kUnavailable,
                what + " cannot listen on unix:" + path + ": " + std::strerror(err));
}

Status RemoveStaleSocket(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::file_status st = fs::symlink_status(path, ec);
  if (ec || !fs::exists(st)) return Status::Ok();
  if (!fs::is_socket(st)) {
    return Status(ErrorCode::kInvalidArgument,
                  "unix socket path " + path + " exists and is not a socket");
  }
  if (!fs::remove(path, ec) || ec) {
    return Status(ErrorCode::kIoError, "cannot remove stale socket " + path + ": " + ec.message());
  }
  return Status::Ok();
}

}  // namespace crescent
