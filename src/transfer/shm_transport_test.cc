#include "transfer/shm_transport.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>
#include <vector>

#include "common/value_hash.h"
#include "transfer/segment_memory.h"
#include "transfer/shm_protocol.h"
#include "transfer/shm_server.h"

extern char** environ;

namespace crescent::transfer {
namespace {

constexpr uint64_t kSegmentBytes = 8 << 20;
constexpr const char* kSecret = "0123456789abcdef-secret";
constexpr const char* kChildEnv = "CRESCENT_SHM_TEST_CHILD";
constexpr const char* kChildUidEnv = "CRESCENT_SHM_TEST_CHILD_UID";
constexpr const char* kChildNofileEnv = "CRESCENT_SHM_TEST_CHILD_NOFILE";
// Longer than the server's 2 s handshake cut-off (SilentClientDoesNotBlockOthersForever).
constexpr int64_t kTimeoutMs = 5000;

std::string UniqueName() {
  static std::atomic<int> counter{0};
  return "crescent-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
}

// A raw client socket connected to abstract socket `name` (-1 on failure).
int RawConnect(const std::string& name) {
  sockaddr_un addr;
  socklen_t len = 0;
  if (!shm::AbstractAddress(name, addr, len)) return -1;
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), len) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

std::vector<std::byte> Pattern(size_t n, uint8_t seed) {
  std::vector<std::byte> out(n);
  for (size_t i = 0; i < n; ++i) out[i] = std::byte(static_cast<uint8_t>(i * 31 + seed));
  return out;
}

class ShmTransportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    name_ = UniqueName();
    endpoint_ = "127.0.0.1:1;shm=" + name_;
    auto seg = SegmentMemory::Create("shm-test", kSegmentBytes);
    ASSERT_TRUE(seg.ok()) << seg.status().ToString();
    segment_ = std::move(*seg);
    segment_->SetBinding(endpoint_);
    segment_->SetId(3);
    auto signer = CapabilitySigner::Create(kSecret);
    ASSERT_TRUE(signer.ok());
    signer_.emplace(std::move(*signer));
    auto server = ShmServer::Start(name_, *segment_, *signer_);
    ASSERT_TRUE(server.ok()) << server.status().ToString();
    server_ = std::move(*server);
    transport_ = MakeShmTransport();
  }

  Capability Cap(uint64_t offset, uint64_t length, AccessOp op, uint32_t id = 3,
                 int64_t ttl_ms = 60'000) {
    return signer_->Sign(endpoint_, id, offset, length, op, UnixNowMs() + ttl_ms);
  }
  Status Run(const Capability& cap, std::byte* buffer) {
    TransferOp op{endpoint_, cap, buffer};
    std::vector<Status> out = transport_->Execute({&op, 1}, kTimeoutMs);
    EXPECT_EQ(out.size(), 1u);
    return out.empty() ? Status(ErrorCode::kInternal, "no result") : out[0];
  }
  void WriteReadBack(uint64_t offset, size_t n, uint8_t seed, uint32_t id = 3) {
    std::vector<std::byte> data = Pattern(n, seed);
    Status w = Run(Cap(offset, n, AccessOp::kWrite, id), data.data());
    ASSERT_TRUE(w.ok()) << w.ToString();
    // The bytes are in the node's own segment: the same memory, not a copy.
    ASSERT_EQ(std::memcmp(segment_->data() + offset, data.data(), n), 0);
    std::vector<std::byte> back(n);
    Status r = Run(Cap(offset, n, AccessOp::kRead, id), back.data());
    ASSERT_TRUE(r.ok()) << r.ToString();
    ASSERT_EQ(back, data);
  }

  std::string name_;
  std::string endpoint_;
  std::unique_ptr<SegmentMemory> segment_;
  std::optional<CapabilitySigner> signer_;
  std::unique_ptr<ShmServer> server_;
  std::unique_ptr<Transport> transport_;
};

TEST_F(ShmTransportTest, NameIsShm) { EXPECT_STREQ(transport_->Name(), "shm"); }

TEST_F(ShmTransportTest, CanReachOnlyAListeningShmEndpoint) {
  EXPECT_TRUE(transport_->CanReach(endpoint_));
  EXPECT_TRUE(transport_->CanReach(endpoint_));  // cached
  EXPECT_FALSE(transport_->CanReach("127.0.0.1:1"));
  EXPECT_FALSE(transport_->CanReach("127.0.0.1:1;shm=" + UniqueName()));
  EXPECT_FALSE(transport_->CanReach("not an endpoint"));
}

TEST_F(ShmTransportTest, WriteThenReadSmall) { WriteReadBack(128, 100, 1); }

TEST_F(ShmTransportTest, WriteThenReadFourMiB) { WriteReadBack(4096, 4 << 20, 2); }

// The mapping a handshake makes is read once, page by page, in the
// background (page_warmer.h); Mapped() reports it, and reads go on meanwhile.
TEST_F(ShmTransportTest, AMappingIsWarmedInTheBackground) {
  EXPECT_EQ(transport_->Mapped().mapped, 0u);
  WriteReadBack(0, 4096, 5);
  for (int i = 0; i < 2000 && transport_->Mapped().warmed < kSegmentBytes; ++i) {
    WriteReadBack(4096, 64, 6);  // reads work while the warmer runs
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  const Transport::MappedMemory m = transport_->Mapped();
  EXPECT_EQ(m.mapped, kSegmentBytes);
  EXPECT_EQ(m.warmed, kSegmentBytes);
}

TEST_F(ShmTransportTest, NodeWritesAreVisibleToTheClient) {
  std::memcpy(segment_->data() + 10, "hello", 5);
  char out[5];
  Status r = Run(Cap(10, 5, AccessOp::kRead), reinterpret_cast<std::byte*>(out));
  ASSERT_TRUE(r.ok()) << r.ToString();
  EXPECT_EQ(std::memcmp(out, "hello", 5), 0);
}

// A verified read hashes what it copies, chunk by chunk; so does a copy
// ahead. The hash is of the bytes delivered: after the node's memory changes,
// the same read reports another checksum.
TEST_F(ShmTransportTest, ReadsAndCopiesAheadHashTheBytesTheyDeliver) {
  const size_t n = (size_t{3} << 20) + 11;
  std::vector<std::byte> data = Pattern(n, 9);
  ASSERT_TRUE(Run(Cap(0, n, AccessOp::kWrite), data.data()).ok());
  const uint64_t want = HashValue(data.data(), n);
  std::vector<std::byte> back(n);
  uint64_t sum = 0;
  TransferOp read{endpoint_, Cap(0, n, AccessOp::kRead), back.data()};
  read.checksum_out = &sum;
  ASSERT_TRUE(transport_->Execute({&read, 1}, kTimeoutMs)[0].ok());
  EXPECT_EQ(back, data);
  EXPECT_EQ(sum, want);

  std::vector<std::byte> ahead(n);
  uint64_t ahead_sum = 0;
  const BufferSlice whole{ahead.data(), n};
  ASSERT_TRUE(transport_->CopyAhead(endpoint_, 3, 0, n, {&whole, 1}, &ahead_sum));
  EXPECT_EQ(ahead, data);
  EXPECT_EQ(ahead_sum, want);

  segment_->data()[n / 2] ^= std::byte{0x40};
  ASSERT_TRUE(transport_->Execute({&read, 1}, kTimeoutMs)[0].ok());
  EXPECT_EQ(sum, HashValue(back.data(), n));
  EXPECT_NE(sum, want);
}

// A write with checksum_out hashes the caller's bytes while the node copies
// them: the checksum is the one-shot hash of what landed.
TEST_F(ShmTransportTest, WritesHashTheBytesTheyWrite) {
  const size_t n = (size_t{2} << 20) + 5;
  std::vector<std::byte> data = Pattern(n, 21);
  uint64_t sum = 0;
  TransferOp write{endpoint_, Cap(4096, n, AccessOp::kWrite), data.data()};
  write.checksum_out = &sum;
  ASSERT_TRUE(transport_->Execute({&write, 1}, kTimeoutMs)[0].ok());
  EXPECT_EQ(sum, HashValue(data.data(), n));
  EXPECT_EQ(sum, HashValue(segment_->data() + 4096, n));
}

// An op in slices: the node reads a write's 64 slices from the client's
// memory in order (kWriteV), one after another on a kept connection; a read
// copies into other slices; both checksums are those of the bytes joined.
TEST_F(ShmTransportTest, SlicedOpsMoveAndHashTheirSlicesInOrder) {
  constexpr size_t kSlices = 64, kSlice = 20'001;
  std::vector<std::byte> whole = Pattern(kSlices * kSlice, 33);
  std::vector<std::byte> spread(whole.size() + kSlices * 64), back(whole.size() + 256);
  std::vector<transfer::BufferSlice> out, in;
  for (size_t j = 0; j < kSlices; ++j) {
    std::memcpy(spread.data() + j * (kSlice + 64), whole.data() + j * kSlice, kSlice);
    out.push_back({spread.data() + j * (kSlice + 64), kSlice});
  }
  in.push_back({back.data(), 7});
  in.push_back({back.data() + 100, whole.size() - 7});
  for (int round = 0; round < 2; ++round) {
    uint64_t sent = 0, got = 0;
    TransferOp write{endpoint_, Cap(8192, whole.size(), AccessOp::kWrite), nullptr};
    write.slices = out;
    write.checksum_out = &sent;
    ASSERT_TRUE(transport_->Execute({&write, 1}, kTimeoutMs)[0].ok());
    EXPECT_EQ(std::memcmp(segment_->data() + 8192, whole.data(), whole.size()), 0);
    TransferOp read{endpoint_, Cap(8192, whole.size(), AccessOp::kRead), nullptr};
    read.slices = in;
    read.checksum_out = &got;
    ASSERT_TRUE(transport_->Execute({&read, 1}, kTimeoutMs)[0].ok());
    EXPECT_EQ(sent, HashValue(whole.data(), whole.size()));
    EXPECT_EQ(got, sent);
    EXPECT_EQ(std::memcmp(back.data(), whole.data(), 7), 0);
    EXPECT_EQ(std::memcmp(back.data() + 100, whole.data() + 7, whole.size() - 7), 0);
  }
  // Slices that do not cover the range are refused before any I/O.
  TransferOp bad{endpoint_, Cap(8192, whole.size() + 1, AccessOp::kWrite), nullptr};
  bad.slices = out;
  EXPECT_EQ(transport_->Execute({&bad, 1}, kTimeoutMs)[0].code(), ErrorCode::kInvalidArgument);
}

TEST_F(ShmTransportTest, BatchReturnsOneStatusPerOpInOrder) {
  std::vector<std::byte> a = Pattern(64, 3), b(64);
  std::vector<TransferOp> ops = {{endpoint_, Cap(0, 64, AccessOp::kWrite), a.data()},
                                 {endpoint_, Cap(0, 64, AccessOp::kRead), nullptr},
                                 {endpoint_, Cap(0, 64, AccessOp::kRead), b.data()}};
  std::vector<Status> out = transport_->Execute(ops, kTimeoutMs);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_TRUE(out[0].ok()) << out[0].ToString();
  EXPECT_EQ(out[1].code(), ErrorCode::kInvalidArgument);
  EXPECT_TRUE(out[2].ok()) << out[2].ToString();
  EXPECT_EQ(a, b);
}

TEST_F(ShmTransportTest, ForgedCapabilityIsRefusedAtHandshakeThenAValidOneWorks) {
  Capability forged = Cap(0, 16, AccessOp::kRead);
  forged.tag[0] ^= 1;
  std::byte buf[16];
  EXPECT_EQ(Run(forged, buf).code(), ErrorCode::kCapabilityInvalid);
  WriteReadBack(0, 16, 4);
}

TEST_F(ShmTransportTest, ExpiredCapabilityIsLeaseExpired) {
  std::byte buf[16];
  // Refused by the server at handshake...
  EXPECT_EQ(Run(Cap(0, 16, AccessOp::kRead, 3, -1), buf).code(), ErrorCode::kLeaseExpired);
  // ...and by the client once it holds the mapping.
  WriteReadBack(0, 16, 5);
  EXPECT_EQ(Run(Cap(0, 16, AccessOp::kRead, 3, -1), buf).code(), ErrorCode::kLeaseExpired);
  EXPECT_EQ(Run(Cap(0, 16, AccessOp::kWrite, 3, -1), buf).code(), ErrorCode::kLeaseExpired);
}

TEST_F(ShmTransportTest, OutOfBoundsIsRefused) {
  std::vector<std::byte> buf(64);
  // At handshake (server-side Resolve)...
  EXPECT_EQ(Run(Cap(kSegmentBytes - 8, 64, AccessOp::kRead), buf.data()).code(),
            ErrorCode::kInvalidArgument);
  // ...and client-side once mapped, including a range whose end wraps.
  WriteReadBack(0, 64, 6);
  EXPECT_EQ(Run(Cap(kSegmentBytes - 8, 64, AccessOp::kRead), buf.data()).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(Run(Cap(UINT64_MAX - 8, 64, AccessOp::kWrite), buf.data()).code(),
            ErrorCode::kInvalidArgument);
  EXPECT_EQ(Run(Cap(0, 0, AccessOp::kRead), buf.data()).code(), ErrorCode::kInvalidArgument);
}

TEST_F(ShmTransportTest, RemountedNodeIsReHandshaken) {
  WriteReadBack(0, 32, 7);
  segment_->SetId(4);
  WriteReadBack(32, 32, 8, 4);  // capabilities for id 4: a fresh handshake
  // A capability for the old id no longer passes the server.
  std::byte buf[32];
  EXPECT_EQ(Run(Cap(0, 32, AccessOp::kRead, 3), buf).code(), ErrorCode::kSegmentNotFound);
  WriteReadBack(64, 32, 9, 4);  // the id-4 mapping survived the refused handshake
}

// Fencing across a remount: the node takes the same id again (the worst case:
// a restarted master numbers from 1 again) under a new epoch. A client that
// still maps the memory and holds capabilities of the earlier mount must not
// read or write the new mount's objects through them.
TEST_F(ShmTransportTest, ARemountRefusesTheEarlierMountsCapabilities) {
  WriteReadBack(0, 64, 30);
  const std::string old_endpoint = endpoint_;
  Capability old_read = Cap(0, 64, AccessOp::kRead);
  Capability old_write = Cap(64, 64, AccessOp::kWrite);

  server_->DropMappings();  // what StoreNode::Mount does before it remounts
  endpoint_ = old_endpoint + ";epoch=2";
  segment_->SetMount(3, endpoint_);
  std::vector<std::byte> theirs = Pattern(128, 31);  // the new mount's object
  std::memcpy(segment_->data(), theirs.data(), theirs.size());

  std::vector<std::byte> back(64);
  TransferOp read{old_endpoint, old_read, back.data()};
  Status r = transport_->Execute({&read, 1}, kTimeoutMs).at(0);
  EXPECT_EQ(r.code(), ErrorCode::kUnavailable) << r.ToString();
  std::vector<std::byte> data = Pattern(64, 32);
  TransferOp write{old_endpoint, old_write, data.data()};
  Status w = transport_->Execute({&write, 1}, kTimeoutMs).at(0);
  EXPECT_FALSE(w.ok());
  EXPECT_EQ(std::memcmp(segment_->data(), theirs.data(), theirs.size()), 0)
      << "an old capability changed the new mount's bytes";
  // A fresh handshake under the new mount's capabilities works.
  WriteReadBack(256, 64, 33);
}

// The client's mapping is read-only: only the node writes its segment.
TEST_F(ShmTransportTest, TheClientMapsTheSegmentReadOnly) {
  WriteReadBack(0, 64, 34);
  std::ifstream maps("/proc/self/maps");
  int read_only = 0, writable = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("memfd:shm-test") == std::string::npos) continue;
    std::string perms = line.substr(line.find(' ') + 1, 4);
    if (perms == "r--s") ++read_only;
    if (perms == "rw-s") ++writable;
  }
  EXPECT_EQ(read_only, 1);  // the transport's
  EXPECT_EQ(writable, 1);   // the node's own (this test process is both)
}

// A write whose capability has expired is refused by the node before any byte.
TEST_F(ShmTransportTest, TheNodeRefusesAnExpiredWrite) {
  std::memset(segment_->data(), 0, 64);
  std::vector<std::byte> data = Pattern(64, 35);
  Capability cap = signer_->Sign(endpoint_, 3, 0, 64, AccessOp::kWrite, UnixNowMs() - 1);
  EXPECT_EQ(Run(cap, data.data()).code(), ErrorCode::kLeaseExpired);
  EXPECT_EQ(segment_->data()[0], std::byte{0});
}

// A node that stops serving (shut down, or exited) closes the connections of
// its handshakes; a copy through such a mapping fails and the mapping goes.
TEST_F(ShmTransportTest, StoppedServerEndsItsMappings) {
  WriteReadBack(0, 32, 10);
  server_->Stop();
  server_->Stop();  // idempotent
  std::vector<std::byte> back(32);
  Status s = Run(Cap(0, 32, AccessOp::kRead), back.data());
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  EXPECT_NE(s.message().find("no longer serves"), std::string::npos) << s.ToString();
  EXPECT_FALSE(transport_->CanReach(endpoint_));
  // A write goes to the node itself, which no longer answers.
  std::vector<std::byte> data = Pattern(32, 11);
  EXPECT_EQ(Run(Cap(32, 32, AccessOp::kWrite), data.data()).code(), ErrorCode::kUnavailable);
}

TEST_F(ShmTransportTest, ConcurrentExecuteSharesOneMapping) {
  constexpr int kThreads = 4;
  constexpr size_t kBytes = 64 << 10;
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        uint64_t offset = static_cast<uint64_t>(t) * kBytes;
        std::vector<std::byte> data = Pattern(kBytes, static_cast<uint8_t>(t * 50 + i));
        std::vector<std::byte> back(kBytes);
        if (!Run(Cap(offset, kBytes, AccessOp::kWrite), data.data()).ok() ||
            !Run(Cap(offset, kBytes, AccessOp::kRead), back.data()).ok() || back != data) {
          failures++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

TEST_F(ShmTransportTest, StopWhileAClientIsConnectedReturnsPromptly) {
  int fd = RawConnect(name_);  // connects, then says nothing
  ASSERT_GE(fd, 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // server now waits on us
  auto start = std::chrono::steady_clock::now();
  server_->Stop();
  auto took = std::chrono::steady_clock::now() - start;
  close(fd);
  EXPECT_LT(took, std::chrono::milliseconds(500));
}

TEST_F(ShmTransportTest, SilentClientDoesNotBlockOthersForever) {
  int fd = RawConnect(name_);
  ASSERT_GE(fd, 0);
  // The server cuts the silent client off after its handshake timeout (~2 s).
  WriteReadBack(0, 16, 12);
  close(fd);
}

TEST_F(ShmTransportTest, DeadServerYieldsTimeoutNotAHang) {
  // A listener that never accepts: connect succeeds (backlog), nobody replies.
  std::string name = UniqueName();
  sockaddr_un addr;
  socklen_t len = 0;
  ASSERT_TRUE(shm::AbstractAddress(name, addr, len));
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(listener, 0);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), len), 0);
  ASSERT_EQ(listen(listener, 4), 0);
  std::string endpoint = "127.0.0.1:1;shm=" + name;
  std::byte buf[16];
  TransferOp op{endpoint, Cap(0, 16, AccessOp::kRead), buf};
  auto start = std::chrono::steady_clock::now();
  std::vector<Status> out = transport_->Execute({&op, 1}, 200);
  auto took = std::chrono::steady_clock::now() - start;
  close(listener);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code(), ErrorCode::kTimeout) << out[0].ToString();
  EXPECT_LT(took, std::chrono::milliseconds(1500));
}

// A store node's shared-memory side in a process of its own: this binary run
// again with only ShmChild.DISABLED_Serve and $CRESCENT_SHM_TEST_CHILD naming
// the socket. With `uid`, it first switches to that uid (root only); with
// `nofile`, it lowers its fd limit to that. It prints READY once it serves
// (NOUID if it could not switch uid), then waits to be killed.
class ChildNode {
 public:
  explicit ChildNode(std::string name, int uid = -1, int nofile = -1) : name_(std::move(name)) {
    int out[2];
    if (pipe2(out, O_CLOEXEC) != 0) return;
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    std::string env_entry = std::string(kChildEnv) + "=" + name_;
    std::string uid_entry = std::string(kChildUidEnv) + "=" + std::to_string(uid);
    std::string nofile_entry = std::string(kChildNofileEnv) + "=" + std::to_string(nofile);
    std::vector<char*> env;
    for (char** e = environ; *e != nullptr; ++e) {
      // A sharding or filtering runner's GTEST_* settings could skip the child's test.
      if (std::strncmp(*e, "GTEST_", 6) != 0) env.push_back(*e);
    }
    env.push_back(env_entry.data());
    if (uid >= 0) env.push_back(uid_entry.data());
    if (nofile >= 0) env.push_back(nofile_entry.data());
    env.push_back(nullptr);
    std::string self = std::filesystem::read_symlink("/proc/self/exe");
    std::string also = "--gtest_also_run_disabled_tests";
    std::string filter = "--gtest_filter=ShmChild.DISABLED_Serve";
    char* argv[] = {self.data(), also.data(), filter.data(), nullptr};
    if (posix_spawn(&pid_, self.c_str(), &actions, nullptr, argv, env.data()) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    // Read its output until READY (the child dies with the test's timeout at worst).
    std::string seen;
    char buf[256];
    ssize_t n;
    while (pid_ > 0 && seen.find("READY") == std::string::npos &&
           seen.find("NOUID") == std::string::npos && (n = read(out[0], buf, sizeof buf)) > 0) {
      seen.append(buf, static_cast<size_t>(n));
    }
    close(out[0]);
    ready_ = seen.find("READY") != std::string::npos;
    no_uid_ = seen.find("NOUID") != std::string::npos;
  }
  ~ChildNode() { Kill(); }
  bool ready() const { return ready_; }
  bool could_not_switch_uid() const { return no_uid_; }
  std::string endpoint() const { return "127.0.0.1:1;shm=" + name_; }
  // SIGKILL, then reaps it: its memory now lives on only in our mappings.
  void Kill() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
    pid_ = -1;
  }

 private:
  std::string name_;
  pid_t pid_ = -1;
  bool ready_ = false;
  bool no_uid_ = false;
};

TEST(ShmChild, DISABLED_Serve) {
  const char* name = std::getenv(kChildEnv);
  if (name == nullptr) GTEST_SKIP() << "runs only as ShmTransportTest's child node";
  prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive a parent that crashed
  if (const char* nofile = std::getenv(kChildNofileEnv); nofile != nullptr) {
    rlimit lim{};
    ASSERT_EQ(getrlimit(RLIMIT_NOFILE, &lim), 0);
    lim.rlim_cur = static_cast<rlim_t>(std::atoi(nofile));
    ASSERT_EQ(setrlimit(RLIMIT_NOFILE, &lim), 0);
  }
  if (const char* uid_text = std::getenv(kChildUidEnv); uid_text != nullptr) {
    const auto uid = static_cast<uid_t>(std::atoi(uid_text));
    if (setresgid(uid, uid, uid) != 0 || setresuid(uid, uid, uid) != 0) {
      std::printf("NOUID\n");
      std::fflush(stdout);
      return;
    }
  }
  auto seg = SegmentMemory::Create("shm-child", kSegmentBytes);
  ASSERT_TRUE(seg.ok()) << seg.status().ToString();
  (*seg)->SetBinding(std::string("127.0.0.1:1;shm=") + name);
  (*seg)->SetId(3);
  auto signer = CapabilitySigner::Create(kSecret);
  ASSERT_TRUE(signer.ok());
  auto server = ShmServer::Start(name, **seg, *signer);
  ASSERT_TRUE(server.ok()) << server.status().ToString();
  std::printf("READY\n");
  std::fflush(stdout);
  std::this_thread::sleep_for(std::chrono::seconds(60));
}

size_t OpenFds() {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

// Mappings of the test segment's memfd in this process (the node's own included).
size_t SegmentMappings() {
  std::ifstream maps("/proc/self/maps");
  size_t n = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("memfd:shm-test") != std::string::npos) ++n;
  }
  return n;
}

// Mappings in this process of a memfd named `name`.
size_t MappingsOf(const std::string& name) {
  std::ifstream maps("/proc/self/maps");
  size_t n = 0;
  for (std::string line; std::getline(maps, line);) {
    if (line.find("memfd:" + name + " ") != std::string::npos) ++n;
  }
  return n;
}

// A copy into the mapping of a node that has exited (kill -9, so nothing of
// its own code ran) "succeeds" in memory nobody serves: the op must fail
// instead, and the mapping (the dead node's memory) must go, also when nothing
// touches that node again.
TEST_F(ShmTransportTest, CopiesThroughTheMappingOfAnExitedNodeFail) {
  ChildNode a(UniqueName()), b(UniqueName());
  ASSERT_TRUE(a.ready() && b.ready());
  std::vector<std::byte> data = Pattern(4096, 20), back(4096);
  auto op = [&](const ChildNode& node, AccessOp access, std::byte* buf) {
    Capability cap = signer_->Sign(node.endpoint(), 3, 0, 4096, access, UnixNowMs() + 60'000);
    TransferOp one{node.endpoint(), cap, buf};
    return transport_->Execute({&one, 1}, kTimeoutMs).at(0);
  };
  ASSERT_TRUE(op(a, AccessOp::kWrite, data.data()).ok());
  ASSERT_TRUE(op(b, AccessOp::kWrite, data.data()).ok());
  ASSERT_TRUE(op(a, AccessOp::kRead, back.data()).ok());
  EXPECT_EQ(back, data);
  ASSERT_TRUE(op(b, AccessOp::kRead, back.data()).ok());
  EXPECT_EQ(MappingsOf("shm-child"), 2u);

  a.Kill();
  b.Kill();
  Status read = op(a, AccessOp::kRead, back.data());
  EXPECT_EQ(read.code(), ErrorCode::kUnavailable) << read.ToString();
  EXPECT_NE(read.message().find("exited"), std::string::npos) << read.ToString();
  // Its mapping is gone, so a retry handshakes with nobody and fails as well,
  // and a write (which the node performs) finds nobody to perform it.
  EXPECT_EQ(op(a, AccessOp::kRead, back.data()).code(), ErrorCode::kUnavailable);
  EXPECT_EQ(op(a, AccessOp::kWrite, data.data()).code(), ErrorCode::kUnavailable);

  // b is never touched again; the sweep of a later batch elsewhere drops it.
  std::this_thread::sleep_for(std::chrono::milliseconds(1100));
  WriteReadBack(0, 64, 21);
  EXPECT_EQ(MappingsOf("shm-child"), 0u);
}

// The node hands its memory only to processes of its own uid. Another uid is
// refused as a failure of the path (UNAVAILABLE), so the client goes over TCP.
TEST_F(ShmTransportTest, ANodeOfAnotherUidRefusesTheHandshakeAsUnavailable) {
  if (geteuid() == 65534) GTEST_SKIP() << "this test runs the node as uid 65534";
  ChildNode other(UniqueName(), 65534);
  if (other.could_not_switch_uid()) GTEST_SKIP() << "switching uid needs root";
  ASSERT_TRUE(other.ready());
  std::vector<std::byte> data = Pattern(64, 22);
  Capability cap =
      signer_->Sign(other.endpoint(), 3, 0, 64, AccessOp::kWrite, UnixNowMs() + 60'000);
  TransferOp op{other.endpoint(), cap, data.data()};
  Status s = transport_->Execute({&op, 1}, kTimeoutMs).at(0);
  EXPECT_EQ(s.code(), ErrorCode::kUnavailable) << s.ToString();
  EXPECT_TRUE(IsShmPathFailure(s.code()));
  EXPECT_NE(s.message().find("uid 65534"), std::string::npos) << s.ToString();
  EXPECT_EQ(MappingsOf("shm-child"), 0u);
}

// A node holds each handshake's connection open, so it caps how many it holds
// (a quarter of its fd limit): past that, clients are sent to TCP. (Reads: a
// client that reads holds one map connection; one that writes holds a write
// connection and maps too.)
TEST_F(ShmTransportTest, ANodeHoldsAtMostAQuarterOfItsFdLimitInClients) {
  ChildNode node(UniqueName(), -1, /*nofile=*/80);  // room for 20 clients
  ASSERT_TRUE(node.ready());
  std::vector<std::unique_ptr<Transport>> clients;
  std::vector<std::byte> data = Pattern(64, 23);
  auto write = [&](Transport& t) {
    Capability cap =
        signer_->Sign(node.endpoint(), 3, 0, 64, AccessOp::kRead, UnixNowMs() + 60'000);
    TransferOp op{node.endpoint(), cap, data.data()};
    return t.Execute({&op, 1}, kTimeoutMs).at(0);
  };
  for (int i = 0; i < 20; ++i) {
    clients.push_back(MakeShmTransport());
    Status s = write(*clients.back());
    ASSERT_TRUE(s.ok()) << "client " << i << ": " << s.ToString();
  }
  auto extra = MakeShmTransport();
  Status refused = write(*extra);
  EXPECT_EQ(refused.code(), ErrorCode::kUnavailable) << refused.ToString();
  EXPECT_NE(refused.message().find("already serves 20"), std::string::npos) << refused.ToString();
  // A client that leaves frees its place (the node notices the closed connection).
  clients.pop_back();
  auto late = MakeShmTransport();
  Status s;
  for (int i = 0; i < 100; ++i) {
    if ((s = write(*late)).ok()) break;
    late = MakeShmTransport();  // a fresh one: the refusal is remembered for a while
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(ShmTransportTest, NoFdOrMappingOutlivesItsUse) {
  size_t before = OpenFds();
  size_t mappings_before = SegmentMappings();
  {
    std::unique_ptr<Transport> transport = MakeShmTransport();
    std::swap(transport, transport_);
    Capability forged = Cap(0, 16, AccessOp::kRead);
    forged.tag[0] ^= 1;
    std::byte buf[16];
    EXPECT_EQ(Run(forged, buf).code(), ErrorCode::kCapabilityInvalid);
    EXPECT_TRUE(transport_->CanReach(endpoint_));
    WriteReadBack(0, 16, 13);
    segment_->SetId(4);
    WriteReadBack(0, 16, 14, 4);
    EXPECT_GT(SegmentMappings(), mappings_before);
    std::swap(transport, transport_);
  }
  // The server closes each connection right after replying; give it a moment.
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(OpenFds(), before);
  EXPECT_EQ(SegmentMappings(), mappings_before);
}

TEST_F(ShmTransportTest, EndpointWithoutShmIsUnavailable) {
  std::byte buf[16];
  TransferOp op{"127.0.0.1:1", Cap(0, 16, AccessOp::kRead), buf};
  std::vector<Status> out = transport_->Execute({&op, 1}, kTimeoutMs);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].code(), ErrorCode::kUnavailable);
}

}  // namespace
}  // namespace crescent::transfer
