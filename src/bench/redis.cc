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

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

namespace crescent::bench {

using Clock = std::chrono::steady_clock;

namespace {

double Micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

redisContext* ConnectTo(int port) {
  timeval tv{5, 0};
  return redisConnectWithTimeout("127.0.0.1", port, tv);
}

void NoteError(RepSample& s, const std::string& message) {
  ++s.errors;
  if (s.first_error.empty()) s.first_error = message;
}

}  // namespace

StatusOr<int> FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return Status(ErrorCode::kInternal, "socket failed");
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return Status(ErrorCode::kInternal, "cannot bind a loopback port");
  }
  close(fd);
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
      redisContext* ctx = ConnectTo(server->port_);
      if (ctx != nullptr && ctx->err == 0) {
        Reply r(static_cast<redisReply*>(redisCommand(ctx, "PING")));
        if (r && r->type == REDIS_REPLY_STATUS) {
          Reply info(static_cast<redisReply*>(redisCommand(ctx, "INFO server")));
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

struct RedisWorkload::Conn {
  redisContext* ctx = nullptr;
  ~Conn() {
    if (ctx != nullptr) redisFree(ctx);
  }
};

StatusOr<std::unique_ptr<RedisWorkload>> RedisWorkload::Connect(int port,
                                                                const WorkloadOptions& options) {
  std::unique_ptr<RedisWorkload> w(new RedisWorkload());
  w->o_ = options;
  w->prefix_ = RunPrefix();
  uint64_t max_size = 8;
  for (uint64_t s : options.sizes) max_size = std::max(max_size, s);
  for (int c = 0; c < options.clients; ++c) {
    auto conn = std::make_unique<Conn>();
    conn->ctx = ConnectTo(port);
    if (conn->ctx == nullptr || conn->ctx->err != 0) {
      return Status(ErrorCode::kUnavailable,
                    std::string("redis connect: ") + (conn->ctx ? conn->ctx->errstr : "oom"));
    }
    w->conns_.push_back(std::move(conn));
    if (!options.sizes.empty())
      w->buffers_.push_back(
          std::make_unique<Buffer>(size_t(max_size) * size_t(std::max(1, options.batch()))));
  }
  return w;
}

RedisWorkload::~RedisWorkload() = default;

StatusOr<std::vector<PhaseResult>> RedisWorkload::RunPutGet() {
  std::vector<PhaseResult> out;
  const int batch = std::max(1, o_.batch());
  for (uint64_t size : o_.sizes) {
    const uint64_t n = o_.OpsFor(size);
    const uint64_t nb = std::max<uint64_t>(kMinBatchCalls, n / uint64_t(batch));
    std::vector<RepSample> reps[kPutGetPhases];
    for (int rep = 0; rep < o_.reps; ++rep) {
      const std::string base = prefix_ + "/s" + std::to_string(size) + "/r" + std::to_string(rep);
      const auto [single, batched] = MakePutGetKeys(base, o_.clients, n, nb * uint64_t(batch));
      for (int phase = 0; phase < kPutGetPhases; ++phase) {
        std::vector<RepSample> per(size_t(o_.clients));
        const bool is_batch = phase >= 2;
        const bool is_put = phase % 2 == 0;
        const double secs = RunParallel(o_.clients, [&](int c) {
          RepSample& s = per[size_t(c)];
          redisContext* ctx = conns_[size_t(c)]->ctx;
          std::byte* buf = buffers_[size_t(c)]->data();
          const bool stamp = size >= 8;
          const int per_call = is_batch ? batch : 1;
          const uint64_t calls = is_batch ? nb : n;
          const auto& keys = is_batch ? batched[size_t(c)] : single[size_t(c)];
          s.latency.Reserve(calls);
          for (uint64_t call = 0; call < calls; ++call) {
            const uint64_t first = call * uint64_t(per_call);
            if (is_put && stamp) {
              for (int j = 0; j < per_call; ++j) {
                const uint64_t want = Stamp(size, rep, c, first + uint64_t(j), is_batch);
                std::memcpy(buf + size_t(j) * size, &want, 8);
              }
            }
            const auto t0 = Clock::now();
            for (int j = 0; j < per_call; ++j) {
              const std::string& k = keys[first + uint64_t(j)];
              if (is_put) {
                redisAppendCommand(ctx, "SET %b %b", k.data(), k.size(),
                                   static_cast<const void*>(buf + size_t(j) * size), size_t(size));
              } else {
                redisAppendCommand(ctx, "GET %b", k.data(), k.size());
              }
            }
            std::vector<Reply> replies;
            for (int j = 0; j < per_call; ++j) {
              void* raw = nullptr;
              if (redisGetReply(ctx, &raw) != REDIS_OK) {
                NoteError(s, std::string("redis: ") + ctx->errstr);
                return;
              }
              Reply r(static_cast<redisReply*>(raw));
              if (!is_put && r->type == REDIS_REPLY_STRING && r->len == size) {
                std::memcpy(buf + size_t(j) * size, r->str, size);  // into the caller's buffer
              }
              replies.push_back(std::move(r));
            }
            s.latency.Add(Micros(t0, Clock::now()));
            for (int j = 0; j < per_call; ++j) {
              const Reply& r = replies[size_t(j)];
              if (is_put) {
                if (r->type == REDIS_REPLY_STATUS)
                  s.bytes_moved += size;
                else
                  NoteError(s, "SET failed");
                continue;
              }
              const uint64_t want = Stamp(size, rep, c, first + uint64_t(j), is_batch);
              uint64_t seen = want;
              if (stamp) std::memcpy(&seen, buf + size_t(j) * size, 8);
              if (r->type == REDIS_REPLY_STRING && r->len == size && seen == want)
                s.bytes_moved += size;
              else
                NoteError(s, "GET returned the wrong value");
            }
          }
          s.calls += calls;
          s.items += calls * uint64_t(per_call);
          s.bytes_requested += calls * uint64_t(per_call) * size;
        });
        RepSample total;
        for (const RepSample& s : per) total.Merge(s);
        total.seconds = secs;
        reps[phase].push_back(std::move(total));
        if (o_.on_phase) {
          static const char* kNames[] = {"SET", "GET", "pipelined SET", "pipelined GET"};
          o_.on_phase(std::string("redis ") + kNames[phase] + " " + SizeLabel(size) + " rep " +
                      std::to_string(rep + 1));
        }
      }
      // Untimed cleanup.
      Reply r(static_cast<redisReply*>(redisCommand(conns_[0]->ctx, "FLUSHALL")));
    }
    AppendPutGetRows("redis", size, o_.clients, batch, reps, out);
  }
  return out;
}

StatusOr<std::vector<PhaseResult>> RedisWorkload::RunExists() {
  std::vector<PhaseResult> out;
  const uint64_t pool = ExistsPoolSize(o_);
  {
    redisContext* ctx = conns_[0]->ctx;
    std::string value(o_.exists_value_size, 'B');
    for (uint64_t i = 0; i < pool; ++i) {
      const std::string k = ExistsPoolKey(prefix_, i);
      redisAppendCommand(ctx, "SET %b %b", k.data(), k.size(), value.data(), value.size());
    }
    for (uint64_t i = 0; i < pool; ++i) {
      void* raw = nullptr;
      if (redisGetReply(ctx, &raw) != REDIS_OK)
        return Status(ErrorCode::kUnavailable, std::string("redis: ") + ctx->errstr);
      freeReplyObject(raw);
    }
  }
  for (int batch : o_.batches) {
    for (double miss : o_.misses) {
      const int hits = ExistsHits(batch, miss);
      const uint64_t calls = o_.CallsFor(uint64_t(batch));
      const auto plans = ExistsPlans(prefix_, pool, batch, hits, o_.clients, calls);
      const uint64_t distinct = plans[0].size();
      std::vector<RepSample> reps;
      for (int rep = 0; rep < o_.reps; ++rep) {
        std::vector<RepSample> per(size_t(o_.clients));
        const double secs = RunParallel(o_.clients, [&](int c) {
          RepSample& s = per[size_t(c)];
          redisContext* ctx = conns_[size_t(c)]->ctx;
          s.latency.Reserve(calls);
          std::vector<bool> present(static_cast<size_t>(batch));
          for (uint64_t k = 0; k < calls; ++k) {
            const auto& keys = plans[size_t(c)][k % distinct];
            const auto t0 = Clock::now();
            for (const std::string& key : keys)
              redisAppendCommand(ctx, "EXISTS %b", key.data(), key.size());
            for (int j = 0; j < batch; ++j) {
              void* raw = nullptr;
              if (redisGetReply(ctx, &raw) != REDIS_OK) {
                NoteError(s, std::string("redis: ") + ctx->errstr);
                return;
              }
              Reply r(static_cast<redisReply*>(raw));
              present[size_t(j)] = r->type == REDIS_REPLY_INTEGER && r->integer == 1;
            }
            s.latency.Add(Micros(t0, Clock::now()));
            s.items_expected += uint64_t(hits);
            bool right = true;
            for (int j = 0; j < batch; ++j) {
              s.items_found += present[size_t(j)];
              right = right && present[size_t(j)] == (j < hits);
            }
            if (!right) NoteError(s, "wrong EXISTS answer");
          }
          s.calls += calls;
          s.items += calls * uint64_t(batch);
        });
        RepSample total;
        for (const RepSample& s : per) total.Merge(s);
        total.seconds = secs;
        reps.push_back(std::move(total));
        if (o_.on_phase)
          o_.on_phase("redis EXISTS batch " + std::to_string(batch) + " miss " + Fixed(miss, 2) +
                      " rep " + std::to_string(rep + 1));
      }
      PhaseResult r;
      r.system = "redis";
      r.op = "exists";
      r.clients = o_.clients;
      r.batch = batch;
      r.miss = miss;
      out.push_back(Summarize(r, reps));
    }
  }
  Reply r(static_cast<redisReply*>(redisCommand(conns_[0]->ctx, "FLUSHALL")));
  return out;
}

}  // namespace crescent::bench
