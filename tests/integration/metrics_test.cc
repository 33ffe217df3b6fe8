// The metrics contract against a live `crescent serve` under a small load:
// every family docs/metrics.md lists is exported (by the server, or by the
// client's Client::Metrics()) with the documented type; histogram buckets are
// cumulative with +Inf equal to _count; and counts equal the operations this
// test performed.
#include <gtest/gtest.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "integration/cluster.h"
#include "integration/raw_socket.h"

namespace crescent::itest {
namespace {

struct Documented {
  std::string name;
  std::string type;
};

// The rows of docs/metrics.md's table: | `name` | type | labels | meaning |.
std::vector<Documented> DocumentedFamilies() {
  std::ifstream f(std::string(CRESCENT_SOURCE_DIR) + "/docs/metrics.md");
  std::vector<Documented> out;
  std::regex row(R"(^\| `(crescent_[a-z0-9_]+)` \| (counter|gauge|histogram) \|)");
  for (std::string line; std::getline(f, line);) {
    std::smatch m;
    if (std::regex_search(line, m, row)) out.push_back({m[1], m[2]});
  }
  return out;
}

// name{labels} -> value, and family -> type, of one exposition.
struct Exposition {
  std::map<std::string, std::string> types;
  std::vector<std::pair<std::string, double>> samples;  // in order

  explicit Exposition(const std::string& text) {
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
      if (line.rfind("# TYPE ", 0) == 0) {
        std::istringstream t(line.substr(7));
        std::string name, type;
        t >> name >> type;
        types[name] = type;
      } else if (!line.empty() && line[0] != '#') {
        size_t sp = line.rfind(' ');
        samples.emplace_back(line.substr(0, sp), std::stod(line.substr(sp + 1)));
      }
    }
  }
  std::optional<double> Value(const std::string& sample) const {
    for (const auto& [n, v] : samples) {
      if (n == sample) return v;
    }
    return std::nullopt;
  }
};

// Every histogram series of `family` has non-decreasing buckets ending in +Inf,
// and +Inf equals _count.
void CheckHistograms(const Exposition& e, const std::string& family) {
  std::map<std::string, std::vector<double>> buckets;  // series (labels without le) -> counts
  std::map<std::string, double> inf;
  const std::regex bucket("^" + family + R"re(_bucket\{(.*)le="([^"]+)"\}$)re");
  for (const auto& [name, v] : e.samples) {
    std::smatch m;
    if (!std::regex_match(name, m, bucket)) continue;
    std::string series = m[1].str();
    if (!series.empty() && series.back() == ',') series.pop_back();
    buckets[series].push_back(v);
    if (m[2] == "+Inf") inf[series] = v;
  }
  ASSERT_FALSE(buckets.empty()) << family << " has no buckets";
  for (const auto& [series, counts] : buckets) {
    for (size_t i = 1; i < counts.size(); ++i) {
      EXPECT_LE(counts[i - 1], counts[i]) << family << "{" << series << "} bucket " << i;
    }
    ASSERT_TRUE(inf.count(series)) << family << "{" << series << "} has no +Inf bucket";
    const std::string count =
        family + "_count" + (series.empty() ? std::string() : "{" + series + "}");
    std::optional<double> c = e.Value(count);
    ASSERT_TRUE(c.has_value()) << count;
    EXPECT_EQ(*c, inf[series]) << count;
    const std::string sum = family + "_sum" + (series.empty() ? std::string() : "{" + series + "}");
    EXPECT_TRUE(e.Value(sum).has_value()) << sum;
  }
}

class MetricsTest : public testing::Test {
 protected:
  void SetUp() override {
    // A tenant, so that the per-tenant families have samples (the client's
    // keys are its).
    const std::string auth = dir_.File("auth");
    CommandResult r =
        RunCrescent({"tenant", "set", "--auth-file", auth, "m", "--quota", "1GiB"}, dir_.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    r = RunCrescent(
        {"token", "add", "--auth-file", auth, "--name", "app", "--role", "client", "--tenant", "m"},
        dir_.path());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    token_ = r.out.substr(0, r.out.find('\n'));
    ServeProcess serve;
    ASSERT_TRUE(StartServe(dir_, {"--auth-file", auth}, &serve));
    serve_ = std::move(serve.proc);
    master_ = serve.master;
    http_port_ = serve.http_port;
  }
  void TearDown() override {
    if (HasFailure()) {
      dir_.keep();
      std::cerr << "---- serve log:\n" << serve_->Output() << "\n";
    }
  }
  std::string Scrape(const std::string& path = "/metrics") {
    httplib::Client http("127.0.0.1", http_port_);
    http.set_read_timeout(10);
    auto r = http.Get(path);
    EXPECT_TRUE(r && r->status == 200) << path;
    return r ? r->body : std::string();
  }

  TempDir dir_;
  int http_port_ = 0;
  std::unique_ptr<Process> serve_;
  std::string master_;
  std::string token_;  // a client of tenant "m"
};

TEST_F(MetricsTest, EveryDocumentedFamilyIsExportedAndCountsMatchTheLoad) {
  const std::vector<Documented> documented = DocumentedFamilies();
  ASSERT_GT(documented.size(), 40u) << "docs/metrics.md's table was not found or parsed";

  ClientConfig config;
  config.master_address = master_;
  config.use_shared_memory = false;  // every transfer crosses the node's TCP server
  config.token = token_;
  auto connected = Client::Connect(config);
  ASSERT_TRUE(connected.ok()) << connected.status().ToString();
  Client& client = *connected.value();

  constexpr int kPuts = 20, kGets = 15, kMisses = 5, kExists = 7, kPrefix = 3;
  constexpr size_t kValue = 5000;
  std::vector<std::byte> value(kValue, std::byte{0x5a});
  std::vector<std::string> keys;
  for (int i = 0; i < kPuts; ++i) {
    keys.push_back("m/" + std::to_string(i));
    ASSERT_TRUE(client.Put(keys.back(), value).ok());
  }
  for (int i = 0; i < kGets; ++i) ASSERT_TRUE(client.Get(keys[i]).ok());
  for (int i = 0; i < kMisses; ++i) {
    EXPECT_EQ(client.Get("absent/" + std::to_string(i)).status().code(),
              ErrorCode::kObjectNotFound);
  }
  for (int i = 0; i < kExists; ++i) ASSERT_TRUE(client.Exists(keys[i]).ok());
  for (int i = 0; i < kPrefix; ++i) ASSERT_TRUE(client.BatchQueryPrefix(keys).ok());

  const Exposition server(Scrape());
  const Exposition own(client.Metrics());
  for (const Documented& d : documented) {
    const bool is_client = d.name.rfind("crescent_client_", 0) == 0;
    const Exposition& e = is_client ? own : server;
    auto t = e.types.find(d.name);
    ASSERT_NE(t, e.types.end()) << d.name << " is documented but not exported";
    EXPECT_EQ(t->second, d.type) << d.name;
    if (d.type == "histogram") CheckHistograms(e, d.name);
  }
  // And nothing exported is undocumented.
  for (const Exposition* e : {&server, &own}) {
    for (const auto& [name, type] : e->types) {
      bool listed = false;
      for (const Documented& d : documented) listed |= d.name == name;
      EXPECT_TRUE(listed) << name << " is exported but not in docs/metrics.md";
    }
  }

  // Counts equal the operations performed.
  auto v = [](const Exposition& e, const std::string& s) { return e.Value(s).value_or(-1); };
  EXPECT_EQ(v(own, R"(crescent_client_op_duration_seconds_count{op="put"})"), kPuts);
  EXPECT_EQ(v(own, R"(crescent_client_op_duration_seconds_count{op="get"})"), kGets + kMisses);
  EXPECT_EQ(v(own, R"(crescent_client_op_duration_seconds_count{op="exists"})"), kExists);
  EXPECT_EQ(v(own, R"(crescent_client_op_duration_seconds_count{op="query_prefix"})"), kPrefix);
  EXPECT_EQ(v(own, R"(crescent_client_keys_total{op="get",result="error"})"), kMisses);
  EXPECT_EQ(v(own, R"(crescent_client_bytes_total{op="put"})"), kPuts * kValue);
  EXPECT_EQ(v(own, R"(crescent_client_bytes_total{op="get"})"), kGets * kValue);

  EXPECT_EQ(v(server, R"(crescent_rpc_duration_seconds_count{method="Exists"})"), kExists);
  EXPECT_EQ(v(server, R"(crescent_rpc_duration_seconds_count{method="BatchQueryPrefix"})"),
            kPrefix);
  EXPECT_EQ(v(server, "crescent_object_size_bytes_count"), kPuts);
  EXPECT_EQ(v(server, "crescent_object_size_bytes_sum"), kPuts * kValue);
  EXPECT_EQ(v(server, R"(crescent_store_transfers_total{transport="tcp",op="write"})"), kPuts);
  EXPECT_EQ(v(server, R"(crescent_store_transfer_bytes_total{transport="tcp",op="write"})"),
            kPuts * kValue);
  EXPECT_EQ(v(server, R"(crescent_store_transfers_total{transport="tcp",op="read"})"), kGets);
  EXPECT_EQ(
      v(server, R"(crescent_store_transfer_duration_seconds_count{transport="tcp",op="read"})"),
      kGets);
  EXPECT_EQ(v(server, "crescent_objects"), kPuts);
  EXPECT_EQ(v(server, R"(crescent_tenant_objects{tenant="m"})"), kPuts);
  EXPECT_EQ(v(server, R"(crescent_tenant_bytes{tenant="m"})"), kPuts * kValue);
  EXPECT_EQ(v(server, R"(crescent_tenant_quota_bytes{tenant="m"})"), 1 << 30);
  EXPECT_EQ(v(server, R"(crescent_tenant_hits_total{tenant="m"})"), kGets);
  EXPECT_EQ(v(server, R"(crescent_tenant_misses_total{tenant="m"})"), kMisses);
  EXPECT_EQ(v(server, R"(crescent_tenant_evictions_total{tenant="m"})"), 0);
  // The misses are OBJECT_NOT_FOUND replies of the get path.
  double not_found = 0;
  for (const auto& [name, value] : server.samples) {
    if (name.rfind("crescent_rpc_errors_total{", 0) == 0 &&
        name.find("code=\"OBJECT_NOT_FOUND\"") != std::string::npos) {
      not_found += value;
    }
  }
  EXPECT_EQ(not_found, kMisses);
}

// A standalone `crescent store --http-port` serves its own node's families,
// and its /health says ready once the segment is mounted.
TEST(StoreMetrics, StandaloneStoreServesItsOwnMetrics) {
  const uint16_t port = PickFreePort();
  ASSERT_NE(port, 0);
  ClusterOptions options;
  options.stores = 1;
  options.store_flags = {"--http-port", std::to_string(port)};
  Cluster cluster(options);
  ASSERT_TRUE(cluster.Start());
  auto client = cluster.Connect(/*use_shm=*/false);
  ASSERT_NE(client, nullptr);
  std::vector<std::byte> value(1000, std::byte{1});
  ASSERT_TRUE(client->Put("s/1", value).ok());
  ASSERT_TRUE(client->Get("s/1").ok());

  httplib::Client http("127.0.0.1", port);
  http.set_read_timeout(10);
  auto health = http.Get("/health");
  ASSERT_TRUE(health);
  EXPECT_EQ(health->status, 200);
  // The node counts a read once its last byte is sent, which may be just
  // after the client has it: scrape until the read is counted (or give up).
  std::string body;
  for (int tries = 0; tries < 100; ++tries) {
    auto metrics = http.Get("/metrics");
    ASSERT_TRUE(metrics);
    body = metrics->body;
    if (Exposition(body)
            .Value(R"(crescent_store_transfers_total{transport="tcp",op="read"})")
            .value_or(0) >= 1.0) {
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const Exposition e(body);
  EXPECT_EQ(e.types.count("crescent_objects"), 0u) << "a store node has no master families";
  for (const Documented& d : DocumentedFamilies()) {
    if (d.name.rfind("crescent_store_", 0) != 0) continue;
    auto t = e.types.find(d.name);
    ASSERT_NE(t, e.types.end()) << d.name;
    EXPECT_EQ(t->second, d.type) << d.name;
  }
  EXPECT_EQ(e.Value(R"(crescent_store_transfers_total{transport="tcp",op="write"})"), 1.0);
  EXPECT_EQ(e.Value(R"(crescent_store_transfer_bytes_total{transport="tcp",op="read"})"), 1000.0);
  CheckHistograms(e, "crescent_store_transfer_duration_seconds");
}

// The Grafana dashboard queries documented families only (a renamed metric
// would leave a panel silently empty).
TEST(MetricsDocs, DashboardUsesDocumentedFamilies) {
  std::vector<Documented> documented = DocumentedFamilies();
  std::ifstream f(std::string(CRESCENT_SOURCE_DIR) + "/deploy/grafana/crescent.json");
  ASSERT_TRUE(f) << "deploy/grafana/crescent.json is missing";
  std::stringstream text;
  text << f.rdbuf();
  const std::string dashboard = text.str();
  const std::regex name(R"(crescent_[a-z0-9_]+)");
  size_t used = 0;
  for (auto it = std::sregex_iterator(dashboard.begin(), dashboard.end(), name);
       it != std::sregex_iterator(); ++it) {
    std::string n = it->str();
    for (const char* suffix : {"_bucket", "_count", "_sum"}) {
      if (n.size() > strlen(suffix) && n.ends_with(suffix) &&
          std::none_of(documented.begin(), documented.end(),
                       [&](const Documented& d) { return d.name == n; })) {
        n.resize(n.size() - strlen(suffix));
      }
    }
    bool listed = false;
    for (const Documented& d : documented) listed |= d.name == n;
    EXPECT_TRUE(listed) << n << " (in the dashboard) is not in docs/metrics.md";
    ++used;
  }
  EXPECT_GT(used, 20u);
}

}  // namespace
}  // namespace crescent::itest
