// Why a TCP listener could not be opened. Servers whose libraries report a
// failed bind without its reason (gRPC logs it to stderr, httplib returns
// false) call this first, so the user reads "Address already in use" in our
// error instead of a bare "cannot listen".
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "crescent/status.h"

struct addrinfo;

namespace crescent {

// Opens a socket for each address of `list` (getaddrinfo's) in turn and hands
// it to `attempt`, which returns 0 or an errno, until one succeeds; the socket
// is closed after each attempt. 0 then, else the errno of the last failure (a
// socket that could not be opened included): the system's reason, for a
// message. How CheckCanListen binds and `crescent top` probes a connection.
int TryEachAddress(const addrinfo* list,
                   const std::function<int(int fd, const addrinfo& a)>& attempt);

// Binds (and at once closes) a socket on host:port the way a server would,
// with SO_REUSEADDR (port 0: any port, which still checks the address). OK
// when that works; otherwise kUnavailable (kInvalidArgument for a host that
// does not resolve) saying "cannot listen on HOST:PORT: <reason>". `what`
// names the server.
Status CheckCanListen(const std::string& what, const std::string& host, uint16_t port);

// Whether a server listening on `host` is reachable from this host only: an
// IPv4 address in 127.0.0.0/8, ::1 (also in brackets), an IPv4-mapped
// 127.x.y.z, or "localhost". Anything else is not, wildcards (0.0.0.0, ::)
// and other names included: a name is not resolved.
bool IsLoopbackHost(std::string_view host);

// The longest path a Unix socket can have (sockaddr_un.sun_path, less its NUL).
size_t MaxUnixSocketPath();
// kInvalidArgument, "WHAT: the path is N bytes; a Unix socket path takes 1 to
// MAX", when `path` is empty or longer than MaxUnixSocketPath() (the kernel
// would refuse it, and gRPC says only "internal error").
Status CheckUnixSocketPath(const std::string& what, const std::string& path);

// The same for "HOST:PORT" or "[V6]:PORT". An address of another form is left
// to the server (OK).
Status CheckCanListenOn(const std::string& what, const std::string& address);

// The same for a Unix socket at `path`, which must not exist (remove a stale
// one first): binds one there and removes it again. kInvalidArgument naming
// the limit for a path too long for a socket address.
Status CheckCanListenUnix(const std::string& what, const std::string& path);

// Removes a leftover socket file at `path` (a dead server's, which would make
// bind fail); OK when there is none. Anything that is not a socket is not ours
// to delete: kInvalidArgument.
Status RemoveStaleSocket(const std::string& path);

}  // namespace crescent
