#include "transfer/congestion.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "common/fd.h"

namespace crescent::transfer {

Status SetCongestionControl(int fd, const std::string& name) {
  if (name.empty()) return Status::Ok();
  const std::string what = "TCP congestion control '" + name + "'";
  // TCP_CA_NAME_MAX is 16, the terminating NUL included.
  if (name.size() >= 16) {
    return Status(ErrorCode::kInvalidArgument, what + ": name too long (at most 15 characters)");
  }
  if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(),
                   static_cast<socklen_t>(name.size())) == 0) {
    return Status::Ok();
  }
  const int err = errno;
  if (err == ENOENT) {
    return Status(ErrorCode::kInvalidArgument, what +
                                                   " is not available (see /proc/sys/net/ipv4/"
                                                   "tcp_available_congestion_control)");
  }
  if (err == EPERM) {
    return Status(ErrorCode::kInvalidArgument,
                  what +
                      " is not allowed for this user (see /proc/sys/net/ipv4/"
                      "tcp_allowed_congestion_control)");
  }
  return Status(ErrorCode::kInternal, "cannot set " + what + ": " + std::strerror(err));
}

Status CheckCongestionControl(const std::string& name) {
  if (name.empty()) return Status::Ok();
  const ScopedFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) {
    return Status(ErrorCode::kInternal,
                  std::string("cannot open a socket to check TCP congestion control: ") +
                      std::strerror(errno));
  }
  return SetCongestionControl(fd.get(), name);
}

}  // namespace crescent::transfer
