// `crescent bench clients`: N client processes against one master
// (bench/many_clients.h), and `crescent bench clients-worker`, the hidden
// subcommand each of those processes runs.
//
//   crescent bench clients --clients 1,4,16,64 --workload exists,prefix,put,get --seconds 3
#include "cli/bench_clients.h"

#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>

#include "auth/token_file.h"
#include "bench/many_clients.h"
#include "bench/suite.h"
#include "bench/workloads.h"
#include "cli/cli_util.h"
#include "cli/client_flags.h"
#include "cli/command.h"
#include "cli/tls_flags.h"
#include "server/local_cluster.h"

namespace crescent::cli {
namespace {

struct ClientsFlags {
  std::string clients = "1,4,16";
  std::string workloads = "exists,prefix,put,get";
  double seconds = 3;
  int reps = 3;
  int keys = 128;
  std::string size = "64KiB";
  int get_keys = 16;
  int batch = 1;
  int lanes = 1;
  std::string transport = "tcp";
  bool grpc_control = false;
  std::string master;
  int server_pid = 0;
  int nodes = 1;
  std::string segment_size = "1GiB";
  std::string token_file;
  TlsConfig tls;
  std::string worker_wrap;  // comma-separated commands; worker i runs under the (i % n)th
  std::string json;
};

// A comma-separated list, each item checked by `parse`; false at the first bad one.
template <typename T, typename Parse>
bool ParseList(const std::string& list, std::vector<T>& out, Parse parse) {
  std::stringstream in(list);
  std::string item;
  while (std::getline(in, item, ',')) {
    T v{};
    if (!parse(item, v)) return false;
    out.push_back(v);
  }
  return !out.empty();
}

bool ParseClientCount(const std::string& s, int& v) {
  size_t pos = 0;
  try {
    v = std::stoi(s, &pos);
  } catch (...) {
    return false;
  }
  return pos == s.size() && v >= 1 && v <= 1024;
}

// The argv of worker `id` (this program again), carrying the flags it needs.
std::vector<std::string> WorkerArgv(const ClientsFlags& f, const std::string& master,
                                    bench::ManyWorkload w, const std::string& prefix, uint64_t size,
                                    int id) {
  std::vector<std::string> a;
  if (!f.worker_wrap.empty()) {
    std::vector<std::string> wraps;
    ParseList(f.worker_wrap, wraps, [](const std::string& s, std::string& v) {
      v = s;
      return !s.empty();
    });
    std::istringstream words(wraps[size_t(id) % wraps.size()]);
    for (std::string word; words >> word;) a.push_back(word);
  }
  // The path itself: under a wrapper /proc/self would be the wrapper's.
  a.push_back(std::filesystem::read_symlink("/proc/self/exe").string());
  a.insert(a.end(), {"bench",       "clients-worker",
                     "--master",    master,
                     "--workload",  bench::WorkloadName(w),
                     "--id",        std::to_string(id),
                     "--prefix",    prefix,
                     "--seconds",   std::to_string(f.seconds),
                     "--keys",      std::to_string(f.keys),
                     "--size",      std::to_string(size),
                     "--get-keys",  std::to_string(f.get_keys),
                     "--batch",     std::to_string(f.batch),
                     "--lanes",     std::to_string(f.lanes),
                     "--transport", f.transport});
  if (f.grpc_control) a.push_back("--grpc-control");
  // The embedded cluster authenticates nobody: no token, not even $CRESCENT_TOKEN.
  if (f.master.empty()) a.push_back("--no-token");
  const std::pair<const char*, const std::string*> pass[] = {
      {"--token-file", &f.token_file},
      {"--tls-ca", &f.tls.ca},
      {"--tls-cert", &f.tls.cert},
      {"--tls-key", &f.tls.key},
      {"--tls-server-name", &f.tls.server_name}};
  for (const auto& [flag, value] : pass) {
    if (value->empty()) continue;
    a.push_back(flag);
    a.push_back(*value);
  }
  return a;
}

int Fail(const std::string& why) {
  std::cerr << "crescent bench clients: " << why << "\n";
  return 2;
}

int RunClientsBench(const ClientsFlags& f) {
  std::vector<int> counts;
  std::vector<bench::ManyWorkload> workloads;
  if (!ParseList(f.clients, counts, ParseClientCount))
    return Fail("--clients: a comma-separated list of counts from 1 to 1024");
  if (!ParseList(f.workloads, workloads, bench::ParseWorkload))
    return Fail("--workload: a comma-separated list of exists, prefix, put, get");
  StatusOr<uint64_t> size = ParseByteSize(f.size);
  if (!size.ok() || *size == 0) return Fail("--size: a size above 0");
  if (f.master.empty() && !f.tls.ca.empty())
    return Fail("--tls-ca is for --master's cluster (the embedded one serves no TLS)");
  std::string command;
  for (const std::string& arg : OwnArguments()) command += (command.empty() ? "" : " ") + arg;
  nlohmann::json doc = {{"command", command},
                        {"machine", bench::DescribeMachine()},
                        {"options",
                         {{"clients", counts},
                          {"seconds", f.seconds},
                          {"reps", f.reps},
                          {"keys", f.keys},
                          {"size", *size},
                          {"batch", f.batch},
                          {"get_keys", f.get_keys},
                          {"lanes", f.lanes},
                          {"transport", f.transport},
                          {"lean_control", !f.grpc_control}}}};

  std::unique_ptr<server::LocalCluster> cluster;
  std::string master = f.master;
  if (master.empty()) {
    server::LocalClusterOptions lo;
    lo.store_nodes = f.nodes;
    lo.master.config.lease_ms = 1000;  // the cleanup's forced removes free space sooner
    StatusOr<uint64_t> seg = ParseByteSize(f.segment_size);
    if (!seg.ok()) return Fail("--segment-size: " + seg.status().message());
    lo.segment_size = *seg;
    StatusOr<std::unique_ptr<server::LocalCluster>> c = server::LocalCluster::Start(lo);
    if (!c.ok()) return Fail("starting the embedded cluster: " + c.status().ToString());
    cluster = std::move(c.value());
    cluster->WaitPagesWarm();
    master = cluster->master_address();
    std::cout << "cluster: embedded, master + " << f.nodes << " store node(s), "
              << FormatBytes(lo.segment_size) << " segment each, at " << master << "\n";
  } else {
    std::cout << "cluster: " << master << "\n";
  }
  std::cout << bench::MachineLine(doc["machine"]) << std::flush;

  const std::string prefix = bench::RunPrefix();
  // Whose CPU time to report: the embedded cluster's (ours), --server-pid's, or none.
  const int server_pid = f.server_pid > 0 ? f.server_pid : cluster ? 0 : -1;
  std::vector<bench::ManyClientsRow> rows;
  uint64_t errors = 0;
  for (bench::ManyWorkload w : workloads) {
    // Repetition-major: every client count of a repetition runs within seconds
    // of the others, so the machine's drift spreads over all of them alike.
    std::vector<std::vector<bench::ManyClientsRep>> reps(counts.size());
    for (int rep = 0; rep < f.reps; ++rep) {
      for (size_t k = 0; k < counts.size(); ++k) {
        const std::string run = prefix + "/" + bench::WorkloadName(w) + std::to_string(counts[k]) +
                                "r" + std::to_string(rep);
        auto argv_for = [&](int id) { return WorkerArgv(f, master, w, run, *size, id); };
        StatusOr<bench::ManyClientsRep> r = bench::RunWorkers(counts[k], argv_for, server_pid);
        if (!r.ok())
          return Fail(std::string(bench::WorkloadName(w)) + " with " + std::to_string(counts[k]) +
                      " clients: " + r.status().ToString());
        reps[k].push_back(std::move(r.value()));
      }
    }
    for (size_t k = 0; k < counts.size(); ++k) {
      std::string label = bench::WorkloadName(w);
      if (f.batch > 1 && (w == bench::ManyWorkload::kPut || w == bench::ManyWorkload::kGet))
        label = "batch_" + label;
      rows.push_back(bench::Aggregate(label, counts[k], reps[k]));
      errors += rows.back().errors;
    }
  }
  doc["machine_after"] = bench::DescribeMachine();
  doc["rows"] = nlohmann::json::array();
  for (const bench::ManyClientsRow& r : rows) doc["rows"].push_back(bench::ToJson(r));
  std::cout << "\n== many clients: one process per client, " << f.seconds
            << " s windows, medians of " << f.reps << " ==\n"
            << bench::RenderManyClients(rows) << bench::MachineLine(doc["machine_after"]);
  if (!f.json.empty()) {
    std::ofstream out(f.json, std::ios::trunc);
    out << doc.dump(2) << "\n";
    if (!out) return Fail("cannot write '" + f.json + "'");
  }
  if (errors > 0) return Fail(std::to_string(errors) + " call(s) failed");
  return 0;
}

struct WorkerFlags {
  bench::WorkerOptions o;
  std::string workload;
  std::string transport = "tcp";
  bool grpc_control = false;
  std::string token_file;
  bool no_token = false;
  TlsConfig tls;
};

int RunClientsWorker(WorkerFlags& f) {
  if (!bench::ParseWorkload(f.workload, f.o.workload)) return Fail("bad --workload");
  if (!f.no_token) {
    StatusOr<std::string> token = auth::LoadClientToken(f.token_file);
    if (!token.ok()) return Fail("--token-file: " + token.status().ToString());
    f.o.client.token = *token;
  }
  f.o.client.tls = f.tls;
  f.o.client.lean_control = !f.grpc_control;
  f.o.shm = f.transport == "shm";
  return bench::RunWorker(f.o, std::cin, std::cout);
}

void AddClientsFlags(CLI::App* cmd, ClientsFlags& f) {
  cmd->add_option("--clients", f.clients,
                  "Comma-separated client counts; each client is a process of its own")
      ->capture_default_str();
  cmd->add_option("--workload", f.workloads,
                  "Comma-separated: exists (BatchExists of --keys keys), prefix "
                  "(BatchQueryPrefix of --keys keys), put and get (one --size object a call)")
      ->capture_default_str();
  cmd->add_option("--seconds", f.seconds, "Each client's window of back-to-back calls")
      ->check(CLI::Range(0.05, 600.0))
      ->capture_default_str();
  cmd->add_option("--reps", f.reps, "Repetitions; medians are reported")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  cmd->add_option("--keys", f.keys, "exists and prefix: keys per call")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--size", f.size, std::string("put and get: object size") + kSizeHelp)
      ->check(ByteSizeCheck())
      ->capture_default_str();
  cmd->add_option("--get-keys", f.get_keys, "get: objects each client stores and reads in turn")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--batch", f.batch,
                  "put and get: objects per call (over 1: BatchPutFrom, BatchGetInto)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--lanes", f.lanes, "TCP connections per store node, per client")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--transport", f.transport, "tcp, or shm (same-host shared memory)")
      ->check(CLI::IsMember({"tcp", "shm"}))
      ->capture_default_str();
  cmd->add_flag("--grpc-control", f.grpc_control,
                "The hot control calls over gRPC instead of the lean control protocol");
}

}  // namespace

void AddClientsBench(CLI::App* bench) {
  auto f = std::make_shared<ClientsFlags>();
  CLI::App* cmd = bench->add_subcommand(
      "clients",
      "N client processes against one master, each making the same calls back to back: summed "
      "calls/s, merged p50/p99, the slowest and fastest client, and the CPU each side used");
  AddClientsFlags(cmd, *f);
  cmd->add_option("--master", f->master,
                  "Benchmark the cluster at this master (default: start an embedded one)");
  cmd->add_option("--server-pid", f->server_pid,
                  "With --master: the server process whose CPU time to report");
  cmd->add_option("--nodes", f->nodes, "Embedded cluster: store nodes")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  cmd->add_option(
         "--segment-size", f->segment_size,
         std::string("Embedded cluster: segment per node (puts past it evict)") + kSizeHelp)
      ->check(ByteSizeCheck())
      ->capture_default_str();
  AddTokenFileFlag(*cmd, f->token_file);
  AddClientTlsFlags(*cmd, f->tls);
  cmd->add_option("--worker-wrap", f->worker_wrap,
                  "Comma-separated commands that client i runs under, the (i mod n)th: "
                  "'ip netns exec A,ip netns exec B' spreads the clients over two network "
                  "namespaces (default: none)");
  cmd->add_option("--json", f->json, "Also write every figure as JSON to this file");
  cmd->callback([f] { SetExitCode(RunClientsBench(*f)); });

  // One client process of `clients`; not for people (hidden: no group).
  auto w = std::make_shared<WorkerFlags>();
  CLI::App* wc = bench->add_subcommand("clients-worker", "");
  wc->group("");
  wc->add_option("--master", w->o.master)->required();
  wc->add_option("--workload", w->workload)->required();
  wc->add_option("--id", w->o.id);
  wc->add_option("--prefix", w->o.prefix)->required();
  wc->add_option("--seconds", w->o.seconds);
  wc->add_option("--keys", w->o.keys);
  wc->add_option("--size", w->o.size);
  wc->add_option("--get-keys", w->o.get_keys);
  wc->add_option("--batch", w->o.batch);
  wc->add_option("--lanes", w->o.lanes);
  wc->add_option("--transport", w->transport);
  wc->add_flag("--grpc-control", w->grpc_control);
  wc->add_flag("--no-token", w->no_token);
  AddTokenFileFlag(*wc, w->token_file);
  AddClientTlsFlags(*wc, w->tls);
  wc->callback([w] { SetExitCode(RunClientsWorker(*w)); });
}

}  // namespace crescent::cli
