// `crescent replay` end to end at tiny sizes: the embedded cluster and a real
// `crescent serve` process. Each test writes its own trace and reads no other.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "integration/process.h"

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

struct CliResult {
  int rc = -1;
  std::string out, err;
};

std::string Slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class ReplayCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("crescent-replay-test-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (serve_pid_ > 0) {
      ::kill(serve_pid_, SIGTERM);
      int status = 0;
      ::waitpid(serve_pid_, &status, 0);
    }
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Runs `crescent ARGS` with stdout and stderr captured (in files named after
  // TAG: runs with different tags may run side by side).
  CliResult Run(const std::string& args, const std::string& tag = "") {
    const fs::path out = dir_ / (tag + "stdout"), err = dir_ / (tag + "stderr");
    const std::string cmd = crescent::itest::CrescentBin() + " " + args + " >" + out.string() +
                            " 2>" + err.string() + " </dev/null";
    const int status = std::system(cmd.c_str());
    CliResult r;
    r.rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = Slurp(out);
    r.err = Slurp(err);
    return r;
  }

  fs::path WriteTrace(const std::string& name, const std::vector<std::vector<int>>& requests,
                      const std::vector<std::pair<size_t, std::string>>& bad_lines = {}) {
    const fs::path p = dir_ / name;
    std::ofstream f(p);
    size_t line = 1;
    size_t bad = 0;
    for (size_t r = 0; r < requests.size(); ++r) {
      while (bad < bad_lines.size() && bad_lines[bad].first == line) {
        f << bad_lines[bad++].second << "\n";
        ++line;
      }
      f << "{\"timestamp\": " << r * 10 << ", \"input_length\": " << requests[r].size() * 512
        << ", \"output_length\": 8, \"hash_ids\": [";
      for (size_t i = 0; i < requests[r].size(); ++i) f << (i ? ", " : "") << requests[r][i];
      f << "]}\n";
      ++line;
    }
    return p;
  }

  json RunJson(const std::string& args, CliResult* result = nullptr, const std::string& tag = "") {
    const fs::path j = dir_ / (tag + "report.json");
    fs::remove(j);
    CliResult r = Run(args + " --json " + j.string(), tag);
    if (result) *result = r;
    EXPECT_EQ(r.rc, 0) << r.out << r.err;
    if (r.rc != 0 || !fs::exists(j)) return json::object();
    return json::parse(Slurp(j));
  }

  fs::path dir_;
  pid_t serve_pid_ = -1;
};

// Requests over a handful of shared prefixes (system prompts), each followed by
// private pages: the shape of the Mooncake traces.
std::vector<std::vector<int>> PrefixWorkload(int requests, int private_pages) {
  std::vector<std::vector<int>> out;
  int next_private = 1000;
  for (int r = 0; r < requests; ++r) {
    const int group = r % 4;
    std::vector<int> ids;
    for (int i = 0; i < 3 + group; ++i) ids.push_back(group * 100 + i);
    for (int i = 0; i < private_pages; ++i) ids.push_back(next_private++);
    out.push_back(ids);
  }
  return out;
}

// The hit ratio (README.md, "The hit ratio") of an unbounded cache.
double UnboundedHitRatio(const std::vector<std::vector<int>>& reqs, uint64_t* refs,
                         uint64_t* distinct) {
  std::set<int> cached;
  uint64_t hits = 0;
  *refs = 0;
  for (const auto& r : reqs) {
    size_t h = 0;
    while (h < r.size() && cached.count(r[h])) ++h;
    hits += h;
    *refs += r.size();
    cached.insert(r.begin(), r.end());
  }
  *distinct = cached.size();
  return static_cast<double>(hits) / static_cast<double>(*refs);
}

void ExpectSaneReport(const json& j, uint64_t requests, uint64_t page_refs, uint64_t page_size) {
  ASSERT_TRUE(j.is_object()) << j.dump();
  EXPECT_EQ(j["requests"].get<uint64_t>(), requests);
  EXPECT_EQ(j["page_refs"].get<uint64_t>(), page_refs);
  EXPECT_EQ(j["page_size"].get<uint64_t>(), page_size);
  const double hr = j["hit_ratio"].get<double>();
  EXPECT_GE(hr, 0.0);
  EXPECT_LE(hr, 1.0);
  EXPECT_LE(j["loaded_hit_ratio"].get<double>(), hr + 1e-12);
  EXPECT_LE(j["hit_pages"].get<uint64_t>(), page_refs);
  EXPECT_EQ(j["pages_got"].get<uint64_t>(),
            j["prefix_pages_got"].get<uint64_t>() + j["beyond_pages_read"].get<uint64_t>());
  EXPECT_EQ(j["bytes_got"].get<uint64_t>(), j["pages_got"].get<uint64_t>() * page_size);
  EXPECT_EQ(j["bytes_put"].get<uint64_t>(), j["pages_put"].get<uint64_t>() * page_size);
  // Every referenced page is got, read beyond the prefix, put, found present, or failed.
  EXPECT_LE(j["pages_got"].get<uint64_t>() + j["pages_put"].get<uint64_t>(), page_refs);
  ASSERT_TRUE(j["errors"].is_object());
  uint64_t errors = 0;
  for (auto& [code, n] : j["errors"].items()) errors += n.get<uint64_t>();
  EXPECT_EQ(errors, j["error_count"].get<uint64_t>());
  EXPECT_EQ(j["corrupt_pages"].get<uint64_t>(), 0u);
  EXPECT_GT(j["seconds"].get<double>(), 0.0);
  EXPECT_GT(j["requests_per_s"].get<double>(), 0.0);
  for (const char* p : {"lookup", "get", "touch", "put"}) {
    ASSERT_TRUE(j["phases"].contains(p)) << p;
    const json& ph = j["phases"][p];
    EXPECT_LE(ph["latency_us"]["p50"].get<double>(), ph["latency_us"]["p99"].get<double>());
  }
  EXPECT_EQ(j["phases"]["lookup"]["calls"].get<uint64_t>(), requests);
}

TEST_F(ReplayCli, EmbeddedUnboundedCacheMatchesTheExactHitRatio) {
  auto reqs = PrefixWorkload(40, 3);
  uint64_t refs = 0, distinct = 0;
  const double expected = UnboundedHitRatio(reqs, &refs, &distinct);
  fs::path trace = WriteTrace("t.jsonl", reqs);
  json j = RunJson("replay --trace " + trace.string() +
                   " --page-size 4096 --capacity-pages 1000 --max-rate --streams 1");
  ExpectSaneReport(j, reqs.size(), refs, 4096);
  EXPECT_NEAR(j["hit_ratio"].get<double>(), expected, 1e-9);
  EXPECT_EQ(j["pages_put"].get<uint64_t>(), distinct);  // each page stored exactly once
  EXPECT_EQ(j["prefix_pages_got"].get<uint64_t>(), j["hit_pages"].get<uint64_t>());
  EXPECT_EQ(j["error_count"].get<uint64_t>(), 0u);
  EXPECT_EQ(j["distinct_pages"].get<uint64_t>(), distinct);
}

// The persistent tier (docs/persistent-tier.md): DRAM at 5% of the distinct
// pages with a file-backed tier of 20% scores at least DRAM alone at 25%,
// minus kTierSlack: the two tiers act as one cache. A promotion keeps the
// persistent copy (the default), so promoted pages are held twice; on this
// machine mixed scored 0.650-0.654 with two tiers (0.652 moving the only copy
// instead) against 0.666 with DRAM alone. Traces of two shapes,
// generated (seeded) by scripts/gen_trace.py and replayed as fast as they go,
// and the fixture tests/data/small_trace.jsonl (DRAM at 5%: 88 pages), replayed
// at its own timestamps (15 s). The nine replays run side by side: each is
// mostly waiting (on the trace's timestamps, or on puts whose eviction waits
// out a lease), about 13 s of CPU together, and no figure moved by more than
// 0.002 for it (small_trace with two tiers: 0.6593 against 0.6606 alone).
// At the fastest rate this machine reaches, so many of its pages were read
// within the last lease and fencing grace that demotions wait for them
// (docs/persistent-tier.md), and the figure then depends on the machine's
// speed: 0.661-0.680 against 0.668-0.684.
// Under lru, the property this was written for: with the default, adaptive,
// the two tiers score at least lru's two tiers, but one adaptive DRAM cache of
// the same total does better still (chat: 0.480 against 0.485-0.496), since
// the persistent tier's policy learns only from the pages demoted to it.
constexpr double kTierSlack = 0.03;

TEST_F(ReplayCli, TwoTiersActAsOneCache) {
  std::vector<std::pair<std::string, fs::path>> traces;
  for (const std::string shape : {"mixed", "chat"}) {
    const fs::path trace = dir_ / (shape + ".jsonl");
    const std::string gen = "python3 " + std::string(CRESCENT_SOURCE_DIR) +
                            "/scripts/gen_trace.py --requests 2000 --seed 7 --shape " + shape +
                            " > " + trace.string();
    ASSERT_EQ(std::system(gen.c_str()), 0) << gen;
    traces.emplace_back(shape, trace);
  }
  traces.emplace_back("small_trace",
                      fs::path(CRESCENT_SOURCE_DIR) / "tests" / "data" / "small_trace.jsonl");
  const std::vector<std::pair<std::string, std::string>> caches = {
      {"tiers", "--capacity-pages 5% --pmem-capacity-pages 20% --pmem-dir " + dir_.string()},
      {"dram", "--capacity-pages 25%"},
      {"small", "--capacity-pages 5%"}};
  std::map<std::string, std::future<json>> runs;  // by "<trace>.<cache>."
  for (const auto& [name, trace] : traces) {
    const std::string pace = name == "small_trace" ? "" : "--max-rate ";
    const std::string common = "replay --trace " + trace.string() + " --page-size 4KiB " + pace +
                               "--streams 1 --eviction-policy lru ";
    for (const auto& [cache, flags] : caches) {
      const std::string tag = name + "." + cache + ".";
      runs[tag] = std::async(std::launch::async, [this, args = common + flags, tag] {
        return RunJson(args, nullptr, tag);
      });
    }
  }
  for (const auto& [name, trace] : traces) {
    json tiers = runs[name + ".tiers."].get();
    json dram = runs[name + ".dram."].get();
    json small = runs[name + ".small."].get();
    ASSERT_TRUE(tiers.contains("hit_ratio") && dram.contains("hit_ratio")) << name;
    const double two = tiers["hit_ratio"].get<double>();
    EXPECT_GE(two, dram["hit_ratio"].get<double>() - kTierSlack) << name;
    EXPECT_GT(two, small["hit_ratio"].get<double>() + 0.05) << name << ": the tier adds hits";
    // No error but a prefix that shrank between the query and the get (a page
    // of it evicted meanwhile: the replays run side by side, so a slow one
    // gives the maintenance pass that gap), and never wrong bytes.
    json errors = tiers["errors"];
    const uint64_t shortened = errors.value("PREFIX_SHORTENED", uint64_t{0});
    errors.erase("PREFIX_SHORTENED");
    EXPECT_TRUE(errors.empty()) << name << ": " << tiers["errors"].dump();
    EXPECT_LE(shortened * 100, tiers["prefix_pages_got"].get<uint64_t>()) << name;
    EXPECT_EQ(tiers["corrupt_pages"].get<uint64_t>(), 0u) << name;
    EXPECT_NE(tiers["cluster"].get<std::string>().find("persistent tier"), std::string::npos);
  }
  // The file's directory is gone after the run.
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().rfind("crescent-replay-pmem-", 0), std::string::npos);
  }
}

TEST_F(ReplayCli, ConcurrentStreamsAndTheTableOutput) {
  auto reqs = PrefixWorkload(60, 2);
  uint64_t refs = 0, distinct = 0;
  UnboundedHitRatio(reqs, &refs, &distinct);
  fs::path trace = WriteTrace("t.jsonl", reqs);
  CliResult r;
  json j = RunJson("replay --trace " + trace.string() +
                       " --page-size 8KiB --capacity-pages 1000 --max-rate --streams 4",
                   &r);
  ExpectSaneReport(j, reqs.size(), refs, 8192);
  // Streams may race to store a shared page; each is stored once either way.
  EXPECT_EQ(j["pages_put"].get<uint64_t>(), distinct);
  EXPECT_EQ(j["error_count"].get<uint64_t>(), 0u);
  EXPECT_NE(r.out.find("hit ratio"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("lookup"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("errors       none"), std::string::npos) << r.out;
}

TEST_F(ReplayCli, JsonToStdoutAndSpeedMode) {
  fs::path trace = WriteTrace("t.jsonl", PrefixWorkload(5, 1));
  // Timestamps 0..40 ms at 4x: done in ~10 ms of schedule.
  CliResult r = Run("replay --trace " + trace.string() +
                    " --page-size 4096 --capacity-pages 100 --speed 4 --json -");
  ASSERT_EQ(r.rc, 0) << r.err;
  json j = json::parse(r.out);
  EXPECT_EQ(j["requests"].get<uint64_t>(), 5u);
  EXPECT_FALSE(j["max_rate"].get<bool>());
  EXPECT_DOUBLE_EQ(j["speed"].get<double>(), 4.0);
}

// --session-hints 1: the last turns (the second request extends the first;
// the second and third are last turns) are hinted right after they are
// served, and the master marks each of their pages, all still cached.
TEST_F(ReplayCli, SessionHintsReachTheMaster) {
  fs::path trace = WriteTrace("t.jsonl", {{1, 2, 3}, {1, 2, 4, 5}, {6}});
  CliResult r;
  json j = RunJson("replay --trace " + trace.string() +
                       " --page-size 4096 --capacity-pages 100 --max-rate --streams 1"
                       " --session-hints 1",
                   &r);
  EXPECT_EQ(j["hinted_requests"].get<uint64_t>(), 2u);
  EXPECT_EQ(j["pages_hinted"].get<uint64_t>(), 5u);
  EXPECT_EQ(j["error_count"].get<uint64_t>(), 0u);
  EXPECT_NE(r.out.find("2 request(s) hinted as ended (--session-hints 1), 5 page(s) marked"),
            std::string::npos)
      << r.out;
  CliResult bad = Run("replay --trace " + trace.string() + " --session-hints 1.5");
  EXPECT_NE(bad.rc, 0);
  EXPECT_NE(bad.err.find("--session-hints"), std::string::npos) << bad.err;
}

TEST_F(ReplayCli, LimitReplaysTheFirstRequests) {
  fs::path trace = WriteTrace("t.jsonl", PrefixWorkload(20, 1));
  json j = RunJson("replay --trace " + trace.string() +
                   " --page-size 4096 --capacity-pages 100 --max-rate --limit 7");
  EXPECT_EQ(j["requests"].get<uint64_t>(), 7u);
}

TEST_F(ReplayCli, BadLineFailsWithItsNumberUnlessSkipped) {
  auto reqs = PrefixWorkload(6, 1);
  fs::path trace = WriteTrace("bad.jsonl", reqs, {{3, "{\"hash_ids\": [1, \"x\"]}"}});
  CliResult r = Run("replay --trace " + trace.string() + " --capacity-pages 100 --max-rate");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("bad.jsonl:3"), std::string::npos) << r.err;
  EXPECT_TRUE(r.out.empty()) << r.out;

  CliResult skipped;
  json j = RunJson("replay --trace " + trace.string() +
                       " --page-size 4096 --capacity-pages 100 --max-rate --skip-bad",
                   &skipped);
  EXPECT_EQ(j["skipped_lines"].get<uint64_t>(), 1u);
  EXPECT_EQ(j["requests"].get<uint64_t>(), reqs.size());
  EXPECT_NE(skipped.err.find("skipped 1 malformed line"), std::string::npos) << skipped.err;

  CliResult missing = Run("replay --trace " + (dir_ / "nope.jsonl").string());
  EXPECT_EQ(missing.rc, 2);
  EXPECT_FALSE(missing.err.empty());
}

TEST_F(ReplayCli, TraceLargerThanTheClusterRunsAndCountsPutErrors) {
  // 40 requests × 6 private pages, and one request of 24 pages, on a 16-page segment.
  auto reqs = PrefixWorkload(40, 6);
  std::vector<int> huge;
  for (int i = 0; i < 24; ++i) huge.push_back(50'000 + i);
  reqs.insert(reqs.begin() + 20, huge);
  uint64_t refs = 0, distinct = 0;
  UnboundedHitRatio(reqs, &refs, &distinct);
  fs::path trace = WriteTrace("big.jsonl", reqs);
  json j = RunJson("replay --trace " + trace.string() +
                   " --page-size 4096 --capacity-pages 16 --max-rate --streams 2");
  ExpectSaneReport(j, reqs.size(), refs, 4096);
  // Eviction made room for far more pages than fit at once...
  EXPECT_GT(j["pages_put"].get<uint64_t>(), 16u);
  // ...and the request bigger than the whole segment failed some puts, counted.
  EXPECT_GT(j["error_count"].get<uint64_t>(), 0u);
  EXPECT_TRUE(j["errors"].contains("NO_SPACE")) << j["errors"].dump();
}

TEST_F(ReplayCli, EmbeddedFlagsAreRefusedWithMaster) {
  fs::path trace = WriteTrace("t.jsonl", PrefixWorkload(2, 1));
  CliResult r =
      Run("replay --trace " + trace.string() + " --master 127.0.0.1:1 --capacity-pages 10");
  EXPECT_EQ(r.rc, 2);
  EXPECT_NE(r.err.find("--capacity-pages"), std::string::npos) << r.err;
}

TEST_F(ReplayCli, AgainstCrescentServe) {
  const fs::path log = dir_ / "serve.log";
  const char* bin = crescent::itest::CrescentBin().c_str();  // before fork: no allocation after it
  serve_pid_ = ::fork();
  ASSERT_GE(serve_pid_, 0);
  if (serve_pid_ == 0) {
    FILE* f = std::freopen(log.c_str(), "w", stdout);
    (void)f;
    ::dup2(::fileno(stdout), 2);
    // Port 0: the address is read back from the log, so no port is raced.
    ::execl(bin, bin, "serve", "--port", "0", "--http-port", "0", "--segment-size", "128KiB",
            "--lease-ms", "100", "--high-watermark", "1.0", "--evict-ratio", "0.001",
            static_cast<char*>(nullptr));
    ::_exit(127);
  }
  bool ready = false;
  for (int i = 0; i < 300 && !ready; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    ready = Slurp(log).find("ready") != std::string::npos;
  }
  ASSERT_TRUE(ready) << Slurp(log);
  std::smatch m;
  const std::string text = Slurp(log);
  ASSERT_TRUE(std::regex_search(text, m, std::regex(R"(listening on ([0-9.]+:[0-9]+))"))) << text;
  const std::string master = m[1];

  auto reqs = PrefixWorkload(30, 4);  // 130+ distinct pages on a 32-page segment
  uint64_t refs = 0, distinct = 0;
  UnboundedHitRatio(reqs, &refs, &distinct);
  fs::path trace = WriteTrace("t.jsonl", reqs);
  json j = RunJson("replay --trace " + trace.string() + " --master " + master +
                   " --page-size 4096 --max-rate --streams 2");
  ExpectSaneReport(j, reqs.size(), refs, 4096);
  EXPECT_GT(j["pages_put"].get<uint64_t>(), 32u);  // eviction made room
  EXPECT_GT(j["hit_pages"].get<uint64_t>(), 0u);   // the shared prefixes were found
  EXPECT_EQ(j["master"].get<std::string>(), master);
}

}  // namespace
