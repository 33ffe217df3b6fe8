// The lean control protocol (control_server.h, control_channel.h): hot calls go
// over one kept connection (TCP, or the master's Unix socket on its host), they
// follow the same rules as over gRPC, bad frames get clear errors without
// harming the connection or the master, and a client survives a master restart.
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <thread>

#include "common/clock.h"
#include "master/operation_log.h"
#include "rpc/control_channel.h"
#include "rpc/control_methods.h"
#include "rpc/master.pb.h"
#include "rpc/messages.pb.h"
#include "rpc/rpc_test_util.h"
#include "rpc/server_metrics.h"
#include "transfer/wire.h"

namespace crescent::rpc::testing {
namespace {

namespace wire = transfer::wire;
using Clock = std::chrono::steady_clock;

Clock::time_point In(int ms) { return Clock::now() + std::chrono::milliseconds(ms); }

class ControlTest : public RpcTest {
 protected:
  uint64_t LeanCalls() const { return server_->metrics().lean_calls(); }

  std::unique_ptr<MasterClient> GrpcOnlyClient() {
    MasterClientOptions o;
    o.address = "127.0.0.1:" + std::to_string(server_->port());
    o.lean_control = false;
    // A hang guard only: under ThreadSanitizer a 1 MiB request over gRPC
    // has taken more than the default 5 s on a loaded machine.
    o.rpc_timeout_ms = 60000;
    auto c = MasterClient::Create(o);
    EXPECT_TRUE(c.ok());
    return std::move(c).value();
  }

  // A raw TCP connection to the lean port, for frames no client would send.
  int Raw() { return RawLean(5); }
  static void SendAll(int fd, const std::string& bytes) {
    ASSERT_EQ(::send(fd, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  static std::string Frame(uint8_t method, uint64_t id, const std::string& body) {
    std::string out(wire::kControlHeaderSize, '\0');
    wire::EncodeControl({method, id, static_cast<uint32_t>(body.size())},
                        reinterpret_cast<uint8_t*>(out.data()));
    return out + body;
  }
  // Reads one answer: its header, and its body (reply or error message).
  static StatusOr<std::pair<wire::ResponseHeader, std::string>> ReadAnswer(int fd) {
    uint8_t h[wire::kResponseHeaderSize];
    if (::recv(fd, h, sizeof h, MSG_WAITALL) != static_cast<ssize_t>(sizeof h)) {
      return Status(ErrorCode::kUnavailable, "connection closed");
    }
    auto header = wire::DecodeResponse(h);
    if (!header.ok()) return header.status();
    const size_t n =
        header->code == ErrorCode::kOk ? header->payload_length : header->message_length;
    std::string body(n, '\0');
    if (n > 0 && ::recv(fd, body.data(), n, MSG_WAITALL) != static_cast<ssize_t>(n)) {
      return Status(ErrorCode::kUnavailable, "connection closed mid-answer");
    }
    return std::make_pair(*header, body);
  }
  static bool Closed(int fd) {
    char c;
    return ::recv(fd, &c, 1, 0) == 0;
  }
};

TEST_F(ControlTest, HotCallsGoOverOneKeptLeanConnection) {
  Start();
  Mount();
  EXPECT_EQ(client_->ControlTarget(), "127.0.0.1:" + std::to_string(server_->control_port()));
  const uint64_t before = LeanCalls();
  ASSERT_TRUE(Put("a").ok());  // PutStart + PutEnd
  auto exists = client_->Exists("a");
  ASSERT_TRUE(exists.ok() && *exists);
  auto read = client_->GetReplicaList("a");
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->size, 128u);
  ASSERT_EQ(read->replicas.size(), 1u);
  EXPECT_EQ(read->replicas[0].endpoint, kEndpointA);
  auto prefix = client_->BatchQueryPrefix(Keys("a", 1));
  ASSERT_TRUE(prefix.ok());
  EXPECT_EQ(LeanCalls(), before + 5);
  EXPECT_EQ(server_->metrics().lean_connections(), 1);
  // The rest of the control plane stays on gRPC.
  ASSERT_TRUE(client_->Stats().ok());
  EXPECT_EQ(LeanCalls(), before + 5);
}

TEST_F(ControlTest, AClientOnTheMastersHostUsesItsUnixSocket) {
  const std::string path =
      ::testing::TempDir() + "crescent-control-" + std::to_string(::getpid()) + ".sock";
  MasterServerOptions o = DefaultServerOptions();
  o.control_socket = path;
  Start(o);
  Mount();
  EXPECT_EQ(client_->ControlTarget(), "unix:" + path);
  const uint64_t before = LeanCalls();
  ASSERT_TRUE(Put("k").ok());
  EXPECT_EQ(LeanCalls(), before + 2);
  server_.reset();
  EXPECT_FALSE(std::filesystem::exists(path)) << "the socket file outlived its server";
}

TEST_F(ControlTest, WithoutTheLeanProtocolEverythingGoesOverGrpc) {
  MasterServerOptions o = DefaultServerOptions();
  o.control_port = -1;
  Start(o);
  Mount();
  EXPECT_EQ(server_->control_port(), 0);
  EXPECT_EQ(client_->ControlTarget(), "");
  ASSERT_TRUE(Put("k").ok());
  EXPECT_TRUE(*client_->Exists("k"));
  EXPECT_EQ(LeanCalls(), 0u);

  // And a client that opts out does the same against a master that offers it.
  Start();
  auto grpc_only = GrpcOnlyClient();
  EXPECT_EQ(grpc_only->ControlTarget(), "");
  EXPECT_TRUE(*grpc_only->Exists("k"));
  EXPECT_EQ(LeanCalls(), 0u);
}

// Every refusal the handlers make reaches the client the same way over both
// transports.
TEST_F(ControlTest, RefusalsAreTheSameOverBothTransports) {
  Start();
  Mount();
  auto grpc_only = GrpcOnlyClient();
  ASSERT_TRUE(Put("present").ok());
  for (MasterClient* c : {client_.get(), grpc_only.get()}) {
    SCOPED_TRACE(c == client_.get() ? "lean" : "grpc");
    EXPECT_EQ(c->PutStart("", 10, {}).status().code(), ErrorCode::kInvalidKey);
    EXPECT_EQ(c->PutStart("present", 10, {}).status().code(), ErrorCode::kObjectAlreadyExists);
    EXPECT_EQ(c->PutStart("huge", uint64_t{1} << 40, {}).status().code(), ErrorCode::kInvalidSize);
    EXPECT_EQ(c->PutEnd("never-started", 42).code(), ErrorCode::kPutNotStarted);
    EXPECT_EQ(c->GetReplicaList("absent").status().code(), ErrorCode::kObjectNotFound);
    EXPECT_EQ(c->Exists(std::string(1 << 20, 'k')).status().code(), ErrorCode::kInvalidKey);
    // A batch with a bad key: one status per key.
    std::vector<std::string> keys = {"present", ""};
    auto ex = c->BatchExists(keys);
    ASSERT_TRUE(ex.ok()) << ex.status().ToString();
    ASSERT_EQ(ex->statuses.size(), 2u);
    EXPECT_TRUE(ex->statuses[0].ok());
    EXPECT_EQ(ex->statuses[1].code(), ErrorCode::kInvalidKey);
    // Tokens that do not match the keys.
    std::vector<uint64_t> tokens = {1};
    auto ends = c->BatchPutEnd(keys, tokens);
    ASSERT_EQ(ends.size(), 2u);
    EXPECT_EQ(ends[0].code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_EQ(master_->Stats().pending_puts, 0u);
}

TEST_F(ControlTest, ConcurrentCallersShareTheConnectionAndEachGetsItsOwnAnswer) {
  Start();
  Mount();
  constexpr int kThreads = 8;
  constexpr int kPerThread = 200;
  EXPECT_EQ(CallsFromManyThreads(kThreads, kPerThread, "t"), 0);
  EXPECT_EQ(server_->metrics().lean_connections(), 1);
  EXPECT_EQ(master_->Stats().objects, static_cast<uint64_t>(kThreads * kPerThread));
}

// With --log-sync always a put's end runs on a worker, then its answer goes
// back through the connection's thread, in order with the calls around it.
TEST_F(ControlTest, PutEndsOnWorkersKeepEveryAnswerWithItsCall) {
  MasterServerOptions o = DefaultServerOptions();
  o.acks_wait_for_sync = true;
  Start(o);
  Mount();
  // Connected before the threads start (while a client connects, its other
  // callers use gRPC).
  ASSERT_FALSE(client_->ControlTarget().empty());
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        const std::string key = "w" + std::to_string(t) + "-" + std::to_string(i);
        auto put = client_->PutStart(key, 32 + t, {});
        if (!put.ok() || !client_->PutEnd(key, put->token).ok()) wrong.fetch_add(1);
        // A second end of the same put is answered too (idempotent), and a
        // revoke of a finished put is refused: each answer is its own call's.
        if (put.ok() && !client_->PutEnd(key, put->token).ok()) wrong.fetch_add(1);
        if (put.ok() && client_->PutRevoke(key, put->token).ok()) wrong.fetch_add(1);
        auto read = client_->GetReplicaList(key);
        if (!read.ok() || read->size != static_cast<uint64_t>(32 + t)) wrong.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(master_->Stats().objects, 400u);
  EXPECT_EQ(LeanCalls(), 400u * 5);
}

// An operation log whose waits hold until the test opens its gate (a slow
// fsync, an etcd commit), to see what a waiting call holds up.
class GateLog final : public master::OperationLog {
 public:
  StatusOr<uint64_t> Append(std::string_view record) override {
    std::lock_guard lock(mu_);
    end_ += record.size() + 1;
    return end_;
  }
  Status WaitDurable(uint64_t position) override {
    std::unique_lock lock(mu_);
    ++waiting_;
    cv_.wait(lock, [&] { return open_; });
    --waiting_;
    synced_ = std::max(synced_, position);
    return Status::Ok();
  }
  Status SyncThrough(uint64_t position) override { return WaitDurable(position); }
  uint64_t synced_position() const override {
    std::lock_guard lock(mu_);
    return synced_;
  }
  Status ReadFrom(uint64_t, const RecordFn&) override { return Status::Ok(); }
  Status TruncateBefore(uint64_t) override { return Status::Ok(); }
  uint64_t end_position() const override {
    std::lock_guard lock(mu_);
    return end_;
  }
  void Set(bool open) {
    std::lock_guard lock(mu_);
    open_ = open;
    cv_.notify_all();
  }
  int waiting() const {
    std::lock_guard lock(mu_);
    return waiting_;
  }

 private:
  mutable std::mutex mu_;
  std::condition_variable cv_;
  uint64_t end_ = 0, synced_ = 0;
  bool open_ = true;
  int waiting_ = 0;
};

// A put whose end waits for the log holds a worker, not the I/O thread that
// every lean connection shares (one, here): another client's call is
// answered meanwhile, and waits of many connections can share one sync.
TEST_F(ControlTest, ACallWaitingForTheLogHoldsUpNoOtherConnection) {
  GateLog log;
  auto m = master::MasterService::Create(config_, SteadyClock::Instance(), &log);
  ASSERT_TRUE(m.ok()) << m.status().ToString();
  master_ = std::move(m).value();
  auto signer = transfer::CapabilitySigner::Create(kSecret);
  ASSERT_TRUE(signer.ok());
  signer_ = std::make_unique<transfer::CapabilitySigner>(std::move(signer).value());
  MasterServerOptions o = DefaultServerOptions();
  o.acks_wait_for_sync = true;
  o.threads = 1;
  Start(o);
  Mount();
  ASSERT_FALSE(client_->ControlTarget().empty());
  auto put = client_->PutStart("gate/k", 64, {});
  ASSERT_TRUE(put.ok()) << put.status().ToString();
  log.Set(false);
  Status ended = Status(ErrorCode::kInternal, "not yet");
  std::thread ender([&] { ended = client_->PutEnd("gate/k", put->token); });
  for (int i = 0; i < 500 && log.waiting() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(log.waiting(), 1) << "the put's end never waited for the log";
  MasterClientOptions co;
  co.address = "127.0.0.1:" + std::to_string(server_->port());
  co.attempts = 1;
  co.rpc_timeout_ms = 3000;
  auto other = MasterClient::Create(co);
  ASSERT_TRUE(other.ok());
  ASSERT_FALSE((*other)->ControlTarget().empty());
  StatusOr<bool> there = (*other)->Exists("gate/other");
  EXPECT_TRUE(there.ok()) << there.status().ToString();
  EXPECT_EQ(log.waiting(), 1) << "the put's end stopped waiting before the gate opened";
  log.Set(true);
  ender.join();
  EXPECT_TRUE(ended.ok()) << ended.ToString();
}

TEST_F(ControlTest, BadFramesGetClearErrors) {
  Start();
  // An unknown method and a body that does not parse are answered; the
  // connection goes on.
  int fd = Raw();
  SendAll(fd, Frame(200, 7, ""));
  auto a = ReadAnswer(fd);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->first.request_id, 7u);
  EXPECT_EQ(a->first.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(a->second.find("unknown control method 200"), std::string::npos) << a->second;
  SendAll(fd, Frame(static_cast<uint8_t>(ControlMethod::kExists), 8, "\xff\xff\xff"));
  a = ReadAnswer(fd);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first.code, ErrorCode::kParseError);
  EXPECT_NE(a->second.find("KeyRequest"), std::string::npos) << a->second;
  // Pipelined: two frames in one write, answered in order.
  proto::KeyRequest req;
  req.set_key("x");
  SendAll(fd, Frame(static_cast<uint8_t>(ControlMethod::kExists), 9, req.SerializeAsString()) +
                  Frame(static_cast<uint8_t>(ControlMethod::kHello), 10, ""));
  a = ReadAnswer(fd);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first.request_id, 9u);
  proto::ExistsResponse exists;
  ASSERT_TRUE(exists.ParseFromString(a->second));
  EXPECT_FALSE(exists.exists());
  a = ReadAnswer(fd);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first.request_id, 10u);
  ::close(fd);

  // A frame that is not ours, or a body over the limit: an answer that says
  // why, then the connection is closed.
  fd = Raw();
  SendAll(fd, std::string(wire::kControlHeaderSize, 'G'));
  a = ReadAnswer(fd);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first.code, ErrorCode::kParseError);
  EXPECT_NE(a->second.find("magic"), std::string::npos) << a->second;
  EXPECT_TRUE(Closed(fd));
  ::close(fd);
  fd = Raw();
  std::string huge = Frame(static_cast<uint8_t>(ControlMethod::kExists), 1, "");
  wire::EncodeControl({static_cast<uint8_t>(ControlMethod::kExists), 1, 0xFFFFFFF0u},
                      reinterpret_cast<uint8_t*>(huge.data()));
  SendAll(fd, huge);
  a = ReadAnswer(fd);
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first.code, ErrorCode::kInvalidArgument);
  EXPECT_NE(a->second.find("exceeds the master's limit"), std::string::npos) << a->second;
  EXPECT_TRUE(Closed(fd));
  ::close(fd);

  // The master serves everyone else throughout.
  Mount();
  EXPECT_TRUE(Put("after").ok());
}

TEST_F(ControlTest, ASilentPeerTimesOutAndARefusedOneIsUnavailable) {
  // A listener that accepts and never answers.
  int listener = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(::listen(listener, 4), 0);
  socklen_t len = sizeof a;
  ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
  const std::string target = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  auto silent = ControlChannel::Connect(target, In(200), nullptr);
  EXPECT_EQ(silent.status().code(), ErrorCode::kTimeout) << silent.status().ToString();
  ::close(listener);  // now nothing listens there
  auto refused = ControlChannel::Connect(target, In(1000), nullptr);
  EXPECT_EQ(refused.status().code(), ErrorCode::kUnavailable) << refused.status().ToString();
}

TEST_F(ControlTest, AClientCarriesOnAcrossAMasterRestart) {
  Start();
  Mount();
  ASSERT_TRUE(Put("kept").ok());
  const int port = server_->port();
  const int control = server_->control_port();
  ASSERT_FALSE(client_->ControlTarget().empty());
  server_.reset();  // the kept connection dies with it
  EXPECT_EQ(client_->Exists("kept").status().code(), ErrorCode::kUnavailable);
  // The same engine behind a new server on the same ports: the client's next
  // calls find it again (over gRPC until it reconnects, then lean).
  MasterServerOptions o = DefaultServerOptions();
  o.listen_address = "127.0.0.1:" + std::to_string(port);
  o.control_port = control;
  auto server = MasterServer::Start(o, *master_, *signer_);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  server_ = std::move(server).value();
  auto exists = client_->Exists("kept");
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_TRUE(*exists);
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));  // the lean retry interval
  EXPECT_FALSE(client_->ControlTarget().empty());
  const uint64_t before = LeanCalls();
  EXPECT_TRUE(*client_->Exists("kept"));
  EXPECT_EQ(LeanCalls(), before + 1);
}

// A client never makes room for an answer longer than its message limit,
// whatever length the master's header claims (one near 2^64 would wrap the
// frame's length; a terabyte would throw bad_alloc): the connection fails
// with a clear error instead.
TEST_F(ControlTest, AnAnswerLongerThanTheClientsLimitIsRefused) {
  for (uint64_t claimed : {(uint64_t{1} << 20) + 1, uint64_t{1} << 40, ~uint64_t{0} - 20}) {
    SCOPED_TRACE(claimed);
    int listener = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::bind(listener, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
    ASSERT_EQ(::listen(listener, 1), 0);
    socklen_t len = sizeof a;
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&a), &len);
    // A "master" that answers the Hello with a header claiming `claimed` bytes.
    std::thread fake([&] {
      const int fd = ::accept(listener, nullptr, nullptr);
      char hello[wire::kControlHeaderSize];
      ::recv(fd, hello, sizeof hello, MSG_WAITALL);
      auto h = wire::DecodeControl(reinterpret_cast<const uint8_t*>(hello));
      wire::ResponseBytes answer;
      wire::EncodeResponse(ErrorCode::kOk, h.ok() ? h->request_id : 0, claimed, {}, answer);
      ::send(fd, answer.data(), wire::kResponseHeaderSize, MSG_NOSIGNAL);
      char c;
      ::recv(fd, &c, 1, 0);  // until the client hangs up
      ::close(fd);
    });
    const std::string target = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
    auto channel = ControlChannel::Connect(target, In(10'000), nullptr,
                                           std::chrono::microseconds(0), uint64_t{1} << 20);
    EXPECT_EQ(channel.status().code(), ErrorCode::kUnavailable) << channel.status().ToString();
    EXPECT_NE(channel.status().message().find("exceeds the client's message limit"),
              std::string::npos)
        << channel.status().ToString();
    channel = StatusOr<std::unique_ptr<ControlChannel>>(Status(ErrorCode::kInternal, "closed"));
    fake.join();
    ::close(listener);
  }
}

// Each listener holds at most --max-connections: the next connection is told
// why and closed, a client then uses gRPC, and a freed slot is taken again.
TEST_F(ControlTest, AListenerHoldsAtMostMaxConnections) {
  MasterServerOptions options = DefaultServerOptions();
  options.limits.max_connections = 3;
  Start(options);
  std::vector<int> held;
  for (int i = 0; i < 3; ++i) {
    held.push_back(Raw());
    SendAll(held.back(), Frame(static_cast<uint8_t>(ControlMethod::kHello), 1, ""));
    auto a = ReadAnswer(held.back());
    ASSERT_TRUE(a.ok()) << a.status().ToString();
    EXPECT_EQ(a->first.code, ErrorCode::kOk);
  }
  int extra = Raw();
  auto a = ReadAnswer(extra);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  EXPECT_EQ(a->first.code, ErrorCode::kUnavailable);
  EXPECT_EQ(a->first.request_id, 0u);
  EXPECT_NE(a->second.find("3 connections on this port (--max-connections)"), std::string::npos)
      << a->second;
  EXPECT_TRUE(Closed(extra));
  ::close(extra);
  // The client library says the same, and its calls go over gRPC meanwhile.
  const std::string target = "127.0.0.1:" + std::to_string(server_->control_port());
  auto refused = ControlChannel::Connect(target, In(10'000), nullptr);
  EXPECT_EQ(refused.status().code(), ErrorCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("--max-connections"), std::string::npos)
      << refused.status().ToString();
  Mount();
  EXPECT_TRUE(Put("over-grpc").ok());
  EXPECT_EQ(server_->metrics().lean_connections(), 3);

  ::close(held.back());
  held.pop_back();
  bool admitted = false;
  for (auto until = In(20'000); !admitted && Clock::now() < until;) {
    auto channel = ControlChannel::Connect(target, In(10'000), nullptr);
    admitted = channel.ok();
    if (!admitted) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(admitted) << "a freed slot was never taken again";
  for (int fd : held) ::close(fd);
}

// A connection on which nothing moves for --idle-timeout-ms is closed, between
// frames or inside one; a client whose kept connection was closed so notices
// it before its next call and reconnects.
TEST_F(ControlTest, IdleConnectionsAreClosedAndClientsReconnect) {
  MasterServerOptions options = DefaultServerOptions();
  // Long enough that a fresh connection is not idle before its first call
  // arrives, even under TSan's slowdown (300 ms once closed it first).
  options.limits.idle_timeout = std::chrono::milliseconds(1000);
  MasterClientOptions client_options;
  client_options.attempts = 1;  // no retry may hide a call sent on a closed connection
  Start(options, client_options);
  Mount();
  ASSERT_TRUE(Put("k").ok());
  ASSERT_FALSE(client_->ControlTarget().empty());

  timeval patience{20, 0};
  int silent = Raw();
  ::setsockopt(silent, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  int partial = Raw();
  ::setsockopt(partial, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  std::string claim(wire::kControlHeaderSize, '\0');
  wire::EncodeControl({static_cast<uint8_t>(ControlMethod::kExists), 1, 1000},
                      reinterpret_cast<uint8_t*>(claim.data()));
  SendAll(partial, claim + "abc");  // a body that never comes
  EXPECT_TRUE(Closed(silent)) << "a silent connection stayed open";
  EXPECT_TRUE(Closed(partial)) << "a connection stalled inside a frame stayed open";
  ::close(silent);
  ::close(partial);

  // The client's kept connection went idle as long; its next call still works.
  const uint64_t before = LeanCalls();
  auto exists = client_->Exists("k");
  ASSERT_TRUE(exists.ok()) << exists.status().ToString();
  EXPECT_TRUE(*exists);
  EXPECT_EQ(LeanCalls(), before + 1) << "the call did not go over a new lean connection";
}

// The table of calls (control_methods.h), from which the client's calls and
// the server's methods are made, is master.proto's Master service: the same
// methods, with the same messages, in the same order.
TEST(ControlCallsTest, TheTableIsTheMasterService) {
  // Links master.pb.cc, whose descriptors carry the services.
  const void* volatile linked = &descriptor_table_master_2eproto;
  (void)linked;
  const google::protobuf::ServiceDescriptor* service =
      google::protobuf::DescriptorPool::generated_pool()->FindServiceByName("crescent.rpc.Master");
  ASSERT_NE(service, nullptr);
  ASSERT_EQ(static_cast<size_t>(service->method_count()), kRpcMethodCount);
  int i = 0;
#define CRESCENT_CHECK_ROW(Name, Req, Resp, lean)                      \
  {                                                                    \
    const google::protobuf::MethodDescriptor* m = service->method(i);  \
    EXPECT_EQ(m->name(), #Name);                                       \
    EXPECT_EQ(m->input_type()->full_name(), "crescent.proto." #Req);   \
    EXPECT_EQ(m->output_type()->full_name(), "crescent.proto." #Resp); \
    EXPECT_EQ(RpcMethodName(static_cast<RpcMethod>(i)), #Name);        \
    ++i;                                                               \
  }
  CRESCENT_CONTROL_CALLS(CRESCENT_CHECK_ROW)
#undef CRESCENT_CHECK_ROW
}

}  // namespace
}  // namespace crescent::rpc::testing
