#include "bench/redis_backend.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <cstring>

namespace crescent::bench {

namespace {
// Commands per untimed pipeline, so loading and removal buffer little.
constexpr size_t kChunk = 512;
}  // namespace

struct RedisBackend::Conn {
  redisContext* ctx = nullptr;
  std::vector<RedisReply> replies;  // of the last pipeline, until Release
  ~Conn() {
    if (ctx != nullptr) redisFree(ctx);
  }
  Status Broken() const {
    return Status(ErrorCode::kUnavailable, std::string("redis: ") + ctx->errstr);
  }
  // Reads the replies of `n` appended commands; on a failed read, fewer.
  Status Read(size_t n) {
    replies.clear();
    for (size_t j = 0; j < n; ++j) {
      void* raw = nullptr;
      if (redisGetReply(ctx, &raw) != REDIS_OK) return Broken();
      replies.emplace_back(static_cast<redisReply*>(raw));
    }
    return Status::Ok();
  }
};

StatusOr<std::unique_ptr<RedisBackend>> RedisBackend::Connect(int port,
                                                              const WorkloadOptions& options) {
  std::unique_ptr<RedisBackend> b(new RedisBackend());
  const size_t buffer_size = ClientBufferSize(options);
  for (int c = 0; c < options.clients; ++c) {
    auto conn = std::make_unique<Conn>();
    conn->ctx = ConnectRedis(port);
    if (conn->ctx == nullptr || conn->ctx->err != 0) {
      return Status(ErrorCode::kUnavailable,
                    std::string("redis connect: ") + (conn->ctx ? conn->ctx->errstr : "oom"));
    }
    b->conns_.push_back(std::move(conn));
    if (buffer_size > 0) b->buffers_.push_back(std::make_unique<Buffer>(buffer_size));
  }
  return b;
}

RedisBackend::~RedisBackend() = default;

std::string RedisBackend::Label(Op op) const {
  // No prefix query: QueryPrefix is never asked of Redis.
  static const char* kNames[] = {"SET", "GET", "pipelined SET", "pipelined GET", "EXISTS", "-"};
  return std::string("redis ") + kNames[static_cast<int>(op)];
}

std::vector<Status> RedisBackend::Put(int c, std::span<const std::string> keys,
                                      std::span<void* const> bufs, uint64_t size, bool) {
  Conn& conn = *conns_[size_t(c)];
  if (conn.ctx->err != 0) return std::vector<Status>(keys.size(), conn.Broken());
  for (size_t j = 0; j < keys.size(); ++j) {
    redisAppendCommand(conn.ctx, "SET %b %b", keys[j].data(), keys[j].size(),
                       static_cast<const void*>(bufs[j]), size_t(size));
  }
  const Status read = conn.Read(keys.size());
  std::vector<Status> out(keys.size(), read);
  for (size_t j = 0; j < conn.replies.size(); ++j) {
    out[j] = conn.replies[j]->type == REDIS_REPLY_STATUS
                 ? Status::Ok()
                 : Status(ErrorCode::kInternal, "SET failed");
  }
  return out;
}

std::vector<StatusOr<size_t>> RedisBackend::Get(int c, std::span<const std::string> keys,
                                                std::span<void* const> bufs, uint64_t size, bool) {
  Conn& conn = *conns_[size_t(c)];
  if (conn.ctx->err != 0) return std::vector<StatusOr<size_t>>(keys.size(), conn.Broken());
  for (const std::string& k : keys) redisAppendCommand(conn.ctx, "GET %b", k.data(), k.size());
  const Status read = conn.Read(keys.size());
  std::vector<StatusOr<size_t>> out(keys.size(), read);
  for (size_t j = 0; j < conn.replies.size(); ++j) {
    const redisReply& r = *conn.replies[j];
    if (r.type == REDIS_REPLY_NIL) {
      out[j] = Status(ErrorCode::kObjectNotFound, "GET found no value");
    } else if (r.type != REDIS_REPLY_STRING || r.len > size) {
      out[j] = Status(ErrorCode::kCorruptData, "GET returned the wrong value");
    } else {
      std::memcpy(bufs[j], r.str, r.len);  // into the caller's buffer
      out[j] = size_t(r.len);
    }
  }
  return out;
}

Status RedisBackend::Exists(int c, std::span<const std::string> keys, std::vector<bool>& present) {
  Conn& conn = *conns_[size_t(c)];
  if (conn.ctx->err != 0) return conn.Broken();
  for (const std::string& k : keys) redisAppendCommand(conn.ctx, "EXISTS %b", k.data(), k.size());
  if (Status s = conn.Read(keys.size()); !s.ok()) return s;
  present.resize(keys.size());
  for (size_t j = 0; j < keys.size(); ++j) {
    present[j] = conn.replies[j]->type == REDIS_REPLY_INTEGER && conn.replies[j]->integer == 1;
  }
  conn.replies.clear();  // timed, as a client that reads EXISTS replies frees them
  return Status::Ok();
}

void RedisBackend::Release(int c) { conns_[size_t(c)]->replies.clear(); }

Status RedisBackend::Store(std::span<const std::string> keys, uint64_t value_size) {
  Conn& conn = *conns_[0];
  const std::string value(value_size, 'B');
  for (size_t start = 0; start < keys.size(); start += kChunk) {
    const size_t n = std::min(kChunk, keys.size() - start);
    for (const std::string& k : keys.subspan(start, n)) {
      redisAppendCommand(conn.ctx, "SET %b %b", k.data(), k.size(), value.data(), value.size());
    }
    if (Status s = conn.Read(n); !s.ok()) return s;
  }
  return Status::Ok();
}

void RedisBackend::Remove(int c, std::span<const std::string> keys) {
  Conn& conn = *conns_[size_t(c)];
  for (size_t start = 0; start < keys.size() && conn.ctx->err == 0; start += kChunk) {
    const size_t n = std::min(kChunk, keys.size() - start);
    for (const std::string& k : keys.subspan(start, n))
      redisAppendCommand(conn.ctx, "DEL %b", k.data(), k.size());
    (void)conn.Read(n);
  }
}

}  // namespace crescent::bench
