// `crescent bench` end to end at tiny sizes: every subcommand against an
// embedded cluster, put-get and exists against a real `crescent serve` and
// against a master plus two store nodes. The assertions are about structure and
// sanity (bytes moved == bytes requested, counts match, ratios positive), never
// about time.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "integration/process.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct BenchRun {
  int rc = -1;
  std::string out;
  std::string err;
  json doc;
};

fs::path TempDir() {
  static fs::path dir = [] {
    std::string tmpl = (fs::temp_directory_path() / "bench_cli_test.XXXXXX").string();
    char* made = mkdtemp(tmpl.data());
    return fs::path(made ? made : "/tmp");
  }();
  return dir;
}

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Runs `crescent bench ARGS --json FILE`, capturing stdout, stderr and the JSON.
BenchRun Bench(const std::string& args) {
  static int n = 0;
  const fs::path json_file = TempDir() / ("run" + std::to_string(++n) + ".json");
  const fs::path out_file = TempDir() / ("run" + std::to_string(n) + ".out");
  const fs::path err_file = TempDir() / ("run" + std::to_string(n) + ".err");
  const std::string cmd = crescent::itest::CrescentBin() + " bench " + args + " --json " +
                          json_file.string() + " >" + out_file.string() + " 2>" + err_file.string();
  BenchRun r;
  const int status = std::system(cmd.c_str());
  r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  r.out = Slurp(out_file);
  r.err = Slurp(err_file);
  if (fs::exists(json_file)) r.doc = json::parse(Slurp(json_file), nullptr, false);
  return r;
}

// A child process whose stdout we read until it prints a line containing "ready".
class Child {
 public:
  Child(const std::vector<std::string>& argv) {
    int fds[2];
    if (pipe(fds) != 0) return;
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (getppid() != parent) _exit(127);
      dup2(fds[1], STDOUT_FILENO);
      close(fds[0]);
      close(fds[1]);
      std::vector<char*> args;
      for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
      args.push_back(nullptr);
      execv(args[0], args.data());
      _exit(127);
    }
    close(fds[1]);
    out_ = fds[0];
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGTERM);
      for (int i = 0; i < 500; ++i) {
        if (waitpid(pid_, nullptr, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
      }
      if (pid_ > 0) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
      }
    }
    if (out_ >= 0) close(out_);
  }
  // True once the child printed "ready" (within 20 s).
  bool WaitReady() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (std::chrono::steady_clock::now() < deadline) {
      pollfd p{out_, POLLIN, 0};
      if (poll(&p, 1, 100) > 0) {
        char buf[4096];
        ssize_t n = read(out_, buf, sizeof(buf));
        if (n <= 0) return false;
        text_.append(buf, size_t(n));
        if (text_.find("ready") != std::string::npos) return true;
      }
    }
    return false;
  }
  const std::string& text() const { return text_; }
  // HOST:PORT from the "listening on HOST:PORT" line a master prints ("" when
  // absent): the servers bind port 0, so no port is picked here and raced.
  std::string ListenAddress() const {
    std::smatch m;
    if (!std::regex_search(text_, m, std::regex(R"(listening on ([0-9.]+:[0-9]+))"))) return "";
    return m[1];
  }

 private:
  pid_t pid_ = -1;
  int out_ = -1;
  std::string text_;
};

bool HaveRedis() { return std::system("command -v redis-server >/dev/null 2>&1") == 0; }

// The fields every row carries, and the sanity of a data-moving row.
void CheckRow(const json& row) {
  for (const char* k :
       {"system", "op", "size", "clients", "batch", "reps", "calls", "items", "bytes_requested",
        "bytes_moved", "errors", "seconds", "gb_per_s", "items_per_s", "p50_us", "p99_us"}) {
    ASSERT_TRUE(row.contains(k)) << k << " missing in " << row.dump();
  }
  EXPECT_EQ(row["errors"].get<uint64_t>(), 0u) << row.dump();
  EXPECT_GT(row["items"].get<uint64_t>(), 0u) << row.dump();
  EXPECT_GT(row["seconds"].get<double>(), 0) << row.dump();
  EXPECT_GT(row["items_per_s"].get<double>(), 0) << row.dump();
  EXPECT_LE(row["p50_us"].get<double>(), row["p99_us"].get<double>()) << row.dump();
}

// The put-get rows of one system, per size: put, get, batch_put, batch_get,
// and the references measured beside them: for shm the memcpy beside its gets
// (copy_as_get, copy_as_batch_get), each get row carrying its ratio to that
// memcpy; for tcp the raw loopback streams beside its batches
// (stream_as_batch_put, stream_as_batch_get).
void CheckPutGetRows(const json& rows, const std::vector<uint64_t>& sizes, int clients, int batch,
                     const std::string& system) {
  const bool beside = system == "crescent-shm";
  std::vector<const char*> ops = {"put", "get", "batch_put", "batch_get"};
  if (beside) ops.insert(ops.end(), {"copy_as_get", "copy_as_batch_get"});
  if (system == "crescent-tcp") ops.insert(ops.end(), {"stream_as_batch_put", "stream_as_batch_get"});
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), sizes.size() * ops.size()) << rows.dump();
  size_t i = 0;
  for (uint64_t size : sizes) {
    for (const char* op : ops) {
      const json& r = rows[i++];
      CheckRow(r);
      const std::string o = op;
      const bool copy = o.rfind("copy", 0) == 0;
      const bool stream = o.rfind("stream_as_batch", 0) == 0;
      EXPECT_EQ(r["system"], copy ? std::string("memcpy") : stream ? std::string("tcp") : system);
      // Every row of a put-get run was measured beside a reference (or is one).
      EXPECT_TRUE(r["side_by_side"].get<bool>()) << r.dump();
      EXPECT_EQ(r["rep_gb_per_s"].size(), r["reps"].get<size_t>()) << r.dump();
      EXPECT_EQ(r["op"], op);
      if (beside && (o == "get" || o == "batch_get")) {
        EXPECT_GT(r["paired_ratio"].get<double>(), 0) << r.dump();
      } else {
        EXPECT_FALSE(r.contains("paired_ratio")) << r.dump();
      }
      EXPECT_EQ(r["size"].get<uint64_t>(), size);
      EXPECT_EQ(r["clients"].get<int>(), clients);
      const int b = o.find("batch") != std::string::npos && !stream ? batch : 1;
      EXPECT_EQ(r["batch"].get<int>(), b);
      const uint64_t reps = r["reps"].get<uint64_t>();
      const uint64_t items = r["items"].get<uint64_t>();
      EXPECT_EQ(items % uint64_t(clients * b), 0u) << r.dump();
      EXPECT_EQ(r["calls"].get<uint64_t>() * uint64_t(b), items) << r.dump();
      EXPECT_EQ(r["bytes_requested"].get<uint64_t>(), reps * items * size) << r.dump();
      EXPECT_EQ(r["bytes_moved"].get<uint64_t>(), r["bytes_requested"].get<uint64_t>());
      EXPECT_GT(r["gb_per_s"].get<double>(), 0);
    }
  }
}

// Rows of the exists workload, or of the prefix one (op "prefix"): its answer,
// the stored keys leading each call, counts as found.
void CheckExistsRows(const json& rows, const std::vector<int>& batches,
                     const std::vector<double>& misses, int clients, const std::string& system,
                     const std::string& op = "exists") {
  ASSERT_TRUE(rows.is_array());
  ASSERT_EQ(rows.size(), batches.size() * misses.size()) << rows.dump();
  size_t i = 0;
  for (int b : batches) {
    for (double m : misses) {
      const json& r = rows[i++];
      CheckRow(r);
      EXPECT_EQ(r["system"], system);
      EXPECT_EQ(r["op"], op);
      EXPECT_EQ(r["batch"].get<int>(), b);
      EXPECT_DOUBLE_EQ(r["miss"].get<double>(), m);
      EXPECT_EQ(r["clients"].get<int>(), clients);
      const uint64_t calls = r["calls"].get<uint64_t>();
      const uint64_t reps = r["reps"].get<uint64_t>();
      EXPECT_EQ(r["items"].get<uint64_t>(), calls * uint64_t(b));
      const uint64_t hits = uint64_t(b - std::llround(b * m));
      EXPECT_EQ(r["items_expected"].get<uint64_t>(), reps * calls * hits) << r.dump();
      EXPECT_EQ(r["items_found"].get<uint64_t>(), r["items_expected"].get<uint64_t>());
    }
  }
}

TEST(BenchCli, PutGetTcpEmbedded) {
  BenchRun r = Bench("put-get --quick --size 4KiB,64KiB --batch 4 --clients 2");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("put-get: crescent over tcp"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GB/s"), std::string::npos);
  EXPECT_NE(r.out.find("p99 µs"), std::string::npos);
  ASSERT_FALSE(r.doc.is_discarded());
  EXPECT_EQ(r.doc["cluster"]["kind"], "embedded");
  EXPECT_TRUE(r.doc["machine"].contains("nproc"));
  EXPECT_TRUE(r.doc["command"].get<std::string>().find("put-get") != std::string::npos);
  CheckPutGetRows(r.doc["put_get"], {4096, 65536}, 2, 4, "crescent-tcp");
  EXPECT_EQ(r.doc["errors"].get<uint64_t>(), 0u);
}

TEST(BenchCli, PutGetShmTwoEmbeddedNodes) {
  BenchRun r =
      Bench("put-get --quick --size 64KiB,1MiB --batch 3 --transport shm --nodes 2 --reps 2");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_EQ(r.doc["cluster"]["store_nodes"].get<int>(), 2);
  CheckPutGetRows(r.doc["put_get"], {65536, 1 << 20}, 1, 3, "crescent-shm");
  // --quick forces one repetition.
  EXPECT_EQ(r.doc["put_get"][0]["reps"].get<int>(), 1);
  // The memcpy beside the gets says how it was measured, and the shm gets are
  // judged against it.
  EXPECT_NE(r.out.find("how measured: each memcpy row"), std::string::npos) << r.out;
  EXPECT_TRUE(r.doc["references"].contains("memcpy_beside_shm_gets"));
  // 1MiB {get, batch_get} vs the memcpy beside them (64KiB has no target).
  ASSERT_EQ(r.doc["targets"].size(), 2u) << r.doc["targets"].dump();
  for (const json& t : r.doc["targets"]) {
    EXPECT_NE(t["name"].get<std::string>().find("memcpy beside it"), std::string::npos) << t.dump();
  }
}

TEST(BenchCli, ExistsEmbedded) {
  BenchRun r = Bench("exists --quick --batch 1,8,128 --miss 0,0.5 --clients 2");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("keys/s"), std::string::npos) << r.out;
  CheckExistsRows(r.doc["exists"], {1, 8, 128}, {0, 0.5}, 2, "crescent");
  EXPECT_FALSE(r.doc.contains("put_get"));
}

TEST(BenchCli, PrefixEmbedded) {
  BenchRun r = Bench("prefix --quick --batch 1,128 --miss 0,0.9 --clients 2");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("prefix: crescent BatchQueryPrefix"), std::string::npos) << r.out;
  CheckExistsRows(r.doc["prefix"], {1, 128}, {0, 0.9}, 2, "crescent", "prefix");
  EXPECT_FALSE(r.doc.contains("exists"));
}

TEST(BenchCli, PrefixGetCacheOffAndOn) {
  BenchRun r = Bench("prefix-get --quick --size 4KiB,16KiB --pages 8 --transport tcp,shm");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  // Per transport and page size: the master side's row, then the cached side's.
  const json& rows = r.doc["prefix_get"];
  ASSERT_EQ(rows.size(), 8u) << rows.dump();
  EXPECT_NE(r.out.find("prefix-get: GetPrefixInto"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("on ÷ off"), std::string::npos) << r.out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const json& row = rows[i];
    const bool cached = i % 2 == 1;
    EXPECT_EQ(row["system"], i < 4 ? "crescent-tcp" : "crescent-shm") << row.dump();
    EXPECT_EQ(row["op"], cached ? "prefix_get_cached" : "prefix_get") << row.dump();
    EXPECT_EQ(row["size"].get<uint64_t>(), (i / 2) % 2 == 0 ? 4096u : 16384u) << row.dump();
    EXPECT_EQ(row["batch"].get<int>(), 8);
    EXPECT_EQ(row["errors"].get<uint64_t>(), 0u) << row.dump();
    EXPECT_GT(row["bytes_requested"].get<uint64_t>(), 0u);
    EXPECT_EQ(row["bytes_moved"], row["bytes_requested"]) << row.dump();
    EXPECT_EQ(row["items_expected"].get<uint64_t>(), 8u * row["calls"].get<uint64_t>());
    // Pages the location cache served: none without it, some with it.
    if (cached)
      EXPECT_GT(row["items_found"].get<uint64_t>(), 0u) << row.dump();
    else
      EXPECT_EQ(row["items_found"].get<uint64_t>(), 0u) << row.dump();
  }
  ASSERT_EQ(r.doc["targets"].size(), 4u) << r.doc["targets"].dump();
  for (const json& t : r.doc["targets"]) {
    EXPECT_NE(t["name"].get<std::string>().find("location cache on vs off"), std::string::npos);
    EXPECT_GT(t["ratio"].get<double>(), 0) << t.dump();
  }
  EXPECT_EQ(r.doc["errors"].get<uint64_t>(), 0u);
}

TEST(BenchCli, Baseline) {
  BenchRun r = Bench("baseline --quick --size 64KiB,1MiB --clients 2");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("loopback TCP"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("memcpy"), std::string::npos) << r.out;
  const json& rows = r.doc["baseline"];
  ASSERT_EQ(rows.size(), 8u) << rows.dump();  // {tcp, memcpy} × 2 sizes × {1, 2} streams
  int tcp = 0, copy = 0;
  for (const json& row : rows) {
    CheckRow(row);
    EXPECT_EQ(row["bytes_moved"].get<uint64_t>(), row["bytes_requested"].get<uint64_t>());
    EXPECT_EQ(
        row["bytes_requested"].get<uint64_t>(),
        row["reps"].get<uint64_t>() * row["items"].get<uint64_t>() * row["size"].get<uint64_t>());
    EXPECT_GT(row["gb_per_s"].get<double>(), 0);
    tcp += row["system"] == "tcp";
    copy += row["system"] == "memcpy";
  }
  EXPECT_EQ(tcp, 4);
  EXPECT_EQ(copy, 4);
  EXPECT_FALSE(r.doc.contains("cluster"));  // no cluster needed
}

TEST(BenchCli, Floors) {
  // reno: built into every kernel and allowed to every user.
  BenchRun r = Bench("floors --quick --size 64KiB,1MiB --tcp-congestion reno");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  for (const char* text :
       {"floors: one object per call", "put: ctl, data, ctl", "get: ctl, data",
        "floors: one round trip", "raw TCP ping-pong, 64 B", "crescent Exists, 1 key"}) {
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " missing in " << r.out;
  }
  const json& rows = r.doc["floors"];
  ASSERT_EQ(rows.size(), 2u * 2u + 4u) << rows.dump();  // {put, get} × 2 sizes, 4 round trips
  for (const json& row : rows) CheckRow(row);
  size_t i = 0;
  for (uint64_t size : {65536u, 1u << 20}) {
    for (const char* op : {"put", "get"}) {
      const json& row = rows[i++];
      EXPECT_EQ(row["system"], "raw-tcp");
      EXPECT_EQ(row["op"], op);
      EXPECT_EQ(row["size"].get<uint64_t>(), size);
      EXPECT_EQ(row["bytes_moved"].get<uint64_t>(), row["bytes_requested"].get<uint64_t>());
      EXPECT_EQ(row["bytes_requested"].get<uint64_t>(),
                row["reps"].get<uint64_t>() * row["items"].get<uint64_t>() * size);
    }
  }
  for (double busy : {0.0, 300.0}) {
    for (const char* op : {"ping_pong", "exists_one"}) {
      const json& row = rows[i++];
      EXPECT_EQ(row["op"], op);
      EXPECT_EQ(row.value("busy_us", 0.0), busy) << row.dump();
    }
  }
  EXPECT_EQ(r.doc["cluster"]["kind"], "embedded");  // Exists needs one
  EXPECT_EQ(r.doc["options"]["tcp_congestion"], "reno");
  EXPECT_FALSE(r.doc.contains("put_get"));
}

TEST(BenchCli, VsRedis) {
  if (!HaveRedis()) GTEST_SKIP() << "redis-server is not installed";
  BenchRun r =
      Bench("vs-redis --quick --size 64KiB,1MiB --batch 2 --exists-batch 4,128 --miss 0.5");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("crescent vs redis"), std::string::npos) << r.out;
  // put-get over tcp then shm, 2 sizes × 4 ops each, tcp's raw streams beside
  // its batches (2 per size) and shm's memcpy beside its gets (2 per size).
  ASSERT_EQ(r.doc["put_get"].size(), 24u);
  {
    json tcp = json::array(), shm = json::array();
    for (const json& row : r.doc["put_get"]) {
      const std::string sys = row["system"];
      (sys == "crescent-tcp" || sys == "tcp" ? tcp : shm).push_back(row);
    }
    CheckPutGetRows(tcp, {65536, 1 << 20}, 1, 2, "crescent-tcp");
    CheckPutGetRows(shm, {65536, 1 << 20}, 1, 2, "crescent-shm");
  }
  CheckExistsRows(r.doc["exists"], {4, 128}, {0.5}, 1, "crescent");
  const json& redis = r.doc["redis"];
  EXPECT_FALSE(redis["version"].get<std::string>().empty());
  ASSERT_EQ(redis["rows"].size(), 8u + 2u);
  for (const json& row : redis["rows"]) {
    CheckRow(row);
    EXPECT_EQ(row["system"], "redis");
    EXPECT_TRUE(row["side_by_side"].get<bool>()) << row.dump();
    EXPECT_EQ(row["bytes_moved"].get<uint64_t>(), row["bytes_requested"].get<uint64_t>());
    if (row["op"] == "exists") {
      EXPECT_EQ(row["items_found"].get<uint64_t>(), row["items_expected"].get<uint64_t>());
    }
  }
  // Targets: 1MiB tcp {put, get, batch_put, batch_get} vs the raw stream beside
  // them and vs redis, shm {get, batch_get} vs the memcpy beside them and vs
  // redis, exists ×128 vs redis, 64KiB tcp {put, get} vs redis (no exists ×1, no
  // prefix run). Every reference ran side by side, so each ratio is per rep.
  const json& targets = r.doc["targets"];
  ASSERT_EQ(targets.size(), 8u + 4u + 1u + 2u) << targets.dump();
  EXPECT_NE(r.out.find("how measured: redis-server"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("how measured: each tcp stream_as_batch_put row"), std::string::npos) << r.out;
  for (const json& t : targets) {
    EXPECT_EQ(t["ratio_of"], "per rep") << t.dump();
    EXPECT_GT(t["ratio"].get<double>(), 0) << t.dump();
    EXPECT_GT(t["ours"].get<double>(), 0);
    EXPECT_GT(t["reference"].get<double>(), 0);
  }
  // The redis-server we started is gone.
  const int port = redis["port"].get<int>();
  EXPECT_NE(std::system(("redis-cli -p " + std::to_string(port) + " ping >/dev/null 2>&1").c_str()),
            0);
}

TEST(BenchCli, AllQuick) {
  if (!HaveRedis()) GTEST_SKIP() << "redis-server is not installed";
  BenchRun r = Bench("all --quick --size 1MiB --batch 2 --exists-batch 128 --miss 0");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("== targets"), std::string::npos) << r.out;
  EXPECT_EQ(r.doc["baseline"].size(), 2u);  // tcp 1 stream, memcpy 1 thread
  // Each reference says how it was measured.
  for (const char* ref : {"baseline", "memcpy_beside_shm_gets", "redis"}) {
    EXPECT_TRUE(r.doc["references"].contains(ref)) << ref;
  }
  EXPECT_EQ(r.doc["floors"].size(), 2u + 4u);  // raw put and get of 1MiB, 4 round trips
  EXPECT_EQ(r.doc["prefix"].size(), 1u);       // batch 128, miss 0
  // tcp {put,get,batch_put,batch_get} × {raw, redis} + shm {get,batch_get} × {memcpy, redis}
  // + exists ×128 + the prefix query's p50.
  EXPECT_EQ(r.doc["targets"].size(), 8u + 4u + 1u + 1u) << r.doc["targets"].dump();
  bool prefix_checked = false;
  for (const json& t : r.doc["targets"])
    prefix_checked = prefix_checked || t["name"].get<std::string>().starts_with("prefix ×128");
  EXPECT_TRUE(prefix_checked) << r.doc["targets"].dump();
  for (const json& t : r.doc["targets"]) {
    EXPECT_TRUE(t.contains("met"));
    EXPECT_GT(t["ratio"].get<double>(), 0);
  }
}

// Two client processes per workload (and one), each row their sum: both
// clients made calls, none failed, and the embedded servers' CPU was measured.
TEST(BenchCli, ClientsProcessesAggregate) {
  BenchRun r = Bench(
      "clients --clients 1,2 --seconds 0.2 --reps 1 --keys 16 --size 4KiB "
      "--get-keys 4 --segment-size 64MiB");
  ASSERT_EQ(r.rc, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("== many clients"), std::string::npos) << r.out;
  ASSERT_FALSE(r.doc.is_discarded());
  const json& rows = r.doc["rows"];
  ASSERT_EQ(rows.size(), 8u) << rows.dump();  // {exists, prefix, put, get} × {1, 2}
  size_t i = 0;
  for (const char* workload : {"exists", "prefix", "put", "get"}) {
    for (int clients : {1, 2}) {
      const json& row = rows[i++];
      EXPECT_EQ(row["workload"], workload) << row.dump();
      EXPECT_EQ(row["clients"].get<int>(), clients) << row.dump();
      EXPECT_EQ(row["errors"].get<uint64_t>(), 0u) << row.dump();
      const double min = row["client_min_ops_per_s"].get<double>();
      const double max = row["client_max_ops_per_s"].get<double>();
      EXPECT_GT(min, 0) << row.dump();
      EXPECT_LE(min, max) << row.dump();
      // The sum of the clients' rates lies between clients × the slowest and
      // clients × the fastest.
      const double sum = row["ops_per_s"].get<double>();
      EXPECT_GE(sum, clients * min * 0.999) << row.dump();
      EXPECT_LE(sum, clients * max * 1.001) << row.dump();
      EXPECT_LE(row["p50_us"].get<double>(), row["p99_us"].get<double>()) << row.dump();
      EXPECT_GT(row["server_cores"].get<double>(), 0) << row.dump();
      const bool data = std::string(workload) == "put" || std::string(workload) == "get";
      if (data) {
        EXPECT_GT(row["gb_per_s"].get<double>(), 0) << row.dump();
      } else {
        EXPECT_NEAR(row["items_per_s"].get<double>(), sum * 16, sum * 1e-6) << row.dump();
      }
    }
  }
  // A worker that cannot connect fails the run, naming it.
  BenchRun down =
      Bench("clients --clients 2 --seconds 0.1 --reps 1 --workload exists --master 127.0.0.1:1");
  EXPECT_EQ(down.rc, 2);
  EXPECT_NE(down.err.find("exists with 2 clients"), std::string::npos) << down.err;
}

TEST(BenchCli, UsageErrors) {
  EXPECT_EQ(Bench("put-get --size 0").rc, 2);
  EXPECT_EQ(Bench("put-get --transport rdma").rc, 2);
  EXPECT_EQ(Bench("exists --miss 1.5").rc, 2);
  EXPECT_EQ(Bench("baseline --quick --tcp-congestion no-such-algorithm").rc, 2);
  // An unreachable master is found before any phase runs, not by a phase
  // whose every call failed.
  BenchRun unreachable = Bench("put-get --quick --master 127.0.0.1:1");
  EXPECT_EQ(unreachable.rc, 2);
  EXPECT_NE(unreachable.err.find("master at 127.0.0.1:1 unreachable"), std::string::npos)
      << unreachable.err;
  EXPECT_EQ(unreachable.err.find("phase failed"), std::string::npos) << unreachable.err;
}

TEST(BenchCli, AgainstCrescentServe) {
  Child serve({crescent::itest::CrescentBin(), "serve", "--port", "0", "--http-port", "0",
               "--segment-size", "256MiB"});
  ASSERT_TRUE(serve.WaitReady()) << serve.text();
  ASSERT_FALSE(serve.ListenAddress().empty()) << serve.text();
  const std::string master = " --master " + serve.ListenAddress();
  BenchRun pg = Bench("put-get --quick --size 64KiB,1MiB --batch 2 --transport shm" + master);
  ASSERT_EQ(pg.rc, 0) << pg.out << pg.err;
  EXPECT_EQ(pg.doc["cluster"]["kind"], "external");
  CheckPutGetRows(pg.doc["put_get"], {65536, 1 << 20}, 1, 2, "crescent-shm");
  EXPECT_EQ(pg.err.find("warning"), std::string::npos) << pg.err;
  BenchRun ex = Bench("exists --quick --batch 16 --miss 0.5 --clients 2" + master);
  ASSERT_EQ(ex.rc, 0) << ex.out << ex.err;
  CheckExistsRows(ex.doc["exists"], {16}, {0.5}, 2, "crescent");
  // More than the cluster holds (160 MiB of single puts, then at least that in
  // batches, on 256 MiB): said up front, before the evictions make gets fail.
  BenchRun big = Bench("put-get --reps 1 --size 4MiB --bytes-per-client 160MiB" + master);
  EXPECT_NE(big.err.find("warning: the put-get phases hold up to "), std::string::npos) << big.err;
  EXPECT_NE(big.err.find(" free of 256.0 MiB; eviction will remove objects"), std::string::npos)
      << big.err;
}

TEST(BenchCli, AgainstMasterAndTwoStores) {
  const fs::path secret = TempDir() / "secret";
  { std::ofstream(secret) << "bench-cli-test-secret-0123456789abcdef\n"; }
  Child master({crescent::itest::CrescentBin(), "master", "--port", "0", "--http-port", "0",
                "--secret-file", secret.string()});
  ASSERT_TRUE(master.WaitReady()) << master.text();
  const std::string addr = master.ListenAddress();
  ASSERT_FALSE(addr.empty()) << master.text();
  Child s1({crescent::itest::CrescentBin(), "store", "--master", addr, "--segment-size", "128MiB",
            "--node-id", "bench-a", "--secret-file", secret.string()});
  Child s2({crescent::itest::CrescentBin(), "store", "--master", addr, "--segment-size", "128MiB",
            "--node-id", "bench-b", "--secret-file", secret.string()});
  ASSERT_TRUE(s1.WaitReady()) << s1.text();
  ASSERT_TRUE(s2.WaitReady()) << s2.text();
  for (const char* transport : {"tcp", "shm"}) {
    BenchRun pg = Bench(std::string("put-get --quick --size 64KiB,1MiB --batch 4 --clients 2 ") +
                        "--transport " + transport + " --master " + addr);
    ASSERT_EQ(pg.rc, 0) << pg.out << pg.err;
    CheckPutGetRows(pg.doc["put_get"], {65536, 1 << 20}, 2, 4,
                    std::string("crescent-") + transport);
  }
  BenchRun ex = Bench("exists --quick --batch 1,128 --miss 0,0.9 --master " + addr);
  ASSERT_EQ(ex.rc, 0) << ex.out << ex.err;
  CheckExistsRows(ex.doc["exists"], {1, 128}, {0, 0.9}, 1, "crescent");
}

}  // namespace
