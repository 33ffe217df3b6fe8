#include "bench/redis.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <thread>

#include "common/fd.h"

namespace crescent::bench {

using Clock = std::chrono::steady_clock;

redisContext* ConnectRedis(int port) {
  timeval tv{5, 0};
  return redisConnectWithTimeout("127.0.0.1", port, tv);
}

void RedisReplyDeleter::operator()(redisReply* r) const { freeReplyObject(r); }

StatusOr<int> FreeLoopbackPort() {
  const ScopedFd fd(socket(AF_INET, SOCK_STREAM, 0));
  if (!fd.valid()) return Status(ErrorCode::kInternal, "socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    return Status(ErrorCode::kInternal, "cannot bind a loopback port");
  }
  return int(ntohs(addr.sin_port));
}

StatusOr<std::unique_ptr<RedisServer>> RedisServer::Start(const std::string& binary) {
  std::unique_ptr<RedisServer> server(new RedisServer());
  for (int attempt = 0; attempt < 3; ++attempt) {
    StatusOr<int> port = FreeLoopbackPort();
    if (!port.ok()) return port.status();
    const std::string p = std::to_string(port.value());
    const pid_t parent = getpid();
    pid_t pid = fork();
    if (pid < 0) return Status(ErrorCode::kInternal, "fork failed");
    if (pid == 0) {
      // The server dies with us, even if we crash.
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      setpgid(0, 0);  // no terminal Ctrl-C: we stop it ourselves
      int devnull = open("/dev/null", O_RDWR);
      if (devnull >= 0) {
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
        dup2(devnull, STDERR_FILENO);
      }
      execlp(binary.c_str(), binary.c_str(), "--port", p.c_str(), "--bind", "127.0.0.1", "--save",
             "", "--appendonly", "no", "--protected-mode", "no", "--daemonize", "no",
             static_cast<char*>(nullptr));
      _exit(127);
    }
    server->pid_ = pid;
    server->port_ = port.value();
    // Wait up to 5 s for PING.
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < deadline) {
      int status = 0;
      if (waitpid(pid, &status, WNOHANG) == pid) {
        server->pid_ = -1;
        if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
          return Status(ErrorCode::kUnsupported, "cannot run '" + binary + "' (not installed?)");
        break;  // exited: perhaps the port was taken; try another
      }
      redisContext* ctx = ConnectRedis(server->port_);
      if (ctx != nullptr && ctx->err == 0) {
        RedisReply r(static_cast<redisReply*>(redisCommand(ctx, "PING")));
        if (r && r->type == REDIS_REPLY_STATUS) {
          RedisReply info(static_cast<redisReply*>(redisCommand(ctx, "INFO server")));
          if (info && info->type == REDIS_REPLY_STRING) {
            std::string text(info->str, info->len);
            size_t at = text.find("redis_version:");
            if (at != std::string::npos) {
              at += 14;
              server->version_ = text.substr(at, text.find_first_of("\r\n", at) - at);
            }
          }
          redisFree(ctx);
          return server;
        }
      }
      if (ctx != nullptr) redisFree(ctx);
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (server->pid_ > 0) {
      kill(server->pid_, SIGKILL);
      waitpid(server->pid_, nullptr, 0);
      server->pid_ = -1;
    }
  }
  return Status(ErrorCode::kUnavailable, "redis-server did not answer PING");
}

RedisServer::~RedisServer() {
  if (pid_ <= 0) return;
  kill(pid_, SIGTERM);
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    if (waitpid(pid_, nullptr, WNOHANG) == pid_) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
}

}  // namespace crescent::bench
