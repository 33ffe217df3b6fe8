// `crescent bench clients`: one cluster and N client processes, each running
// the same workload for the same window, their rates summed and their
// latencies merged. Processes, not threads: each has its own sockets, client
// library threads and locks, so that the master sees N independent clients as
// it does from a fleet of inference engines, and one client's locks cannot
// pace another's.
//
// The parent and each worker (the crescent binary run again as
// `crescent bench clients-worker`) talk over the worker's stdin and stdout:
//   worker: connects, stores what its workload reads (untimed), writes "ready"
//   parent: once every worker is ready, writes "go" to each
//   worker: makes calls back to back for `seconds`, then writes one JSON line
//           (WorkerResult)
//   parent: once every result is in, writes "end"; the worker removes its
//           keys (untimed, after every window closed) and exits 0.
// So every window opens after the last worker is ready and the N windows
// overlap but for the few milliseconds the "go" lines take to go out.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/workloads.h"
#include "crescent/status.h"

namespace crescent::bench {

// The calls each worker makes back to back.
enum class ManyWorkload {
  kExists,  // BatchExists of `keys` stored keys
  kPrefix,  // BatchQueryPrefix of `keys` stored page keys (answer: all of them)
  // PutFrom of one `size` object under a key never used before (BatchPutFrom
  // of `batch` of them when batch > 1)
  kPut,
  // GetInto of one of `get_keys` stored `size` objects, in turn (BatchGetInto
  // of the next `batch` when batch > 1; at least `batch` are stored)
  kGet,
};
const char* WorkloadName(ManyWorkload w);
// "exists", "prefix", "put", "get"; false for anything else.
bool ParseWorkload(const std::string& name, ManyWorkload& out);

struct WorkerOptions {
  std::string master;
  // The client's token, TLS, control protocol and checksum checks
  // (BenchClientConfig); its workload fields are unused.
  WorkloadOptions client;
  int lanes = 1;     // TCP connections per store node
  bool shm = false;  // same-host transfers by shared memory
  ManyWorkload workload = ManyWorkload::kExists;
  int id = 0;                // this worker's index: its keys are its own
  std::string prefix;        // the run's key prefix, the same for every worker
  double seconds = 3;        // the window
  int keys = 128;            // exists and prefix: keys per call
  uint64_t size = 64 << 10;  // put and get: object size
  int get_keys = 16;         // get: objects read in turn
  int batch = 1;             // put and get: objects per call
};

// What one worker measured in its window.
struct WorkerResult {
  uint64_t calls = 0;              // finished calls, failed ones included
  uint64_t items = 0;              // keys asked (exists, prefix) or objects moved (put, get)
  uint64_t bytes = 0;              // payload bytes moved (put, get)
  uint64_t errors = 0;             // failed calls and wrong answers
  double seconds = 0;              // from "go" to the end of its last call
  std::vector<double> latency_us;  // per call
  std::string first_error;
};
nlohmann::json ToJson(const WorkerResult& r);
StatusOr<WorkerResult> WorkerResultFromJson(const std::string& line);

// The worker's side of the protocol above, on `in` and `out`; the process's
// exit code (0 ok, 2 when it could not connect or prepare: the reason goes to
// stderr and nothing to `out`).
int RunWorker(const WorkerOptions& o, std::istream& in, std::ostream& out);

// One repetition: every worker's result, the wall time from "go" to the last
// result, and the CPU seconds spent in that time by the server (this process,
// with the embedded cluster's master and store nodes, or the process
// `server_pid` of RunWorkers) and by the workers together.
struct ManyClientsRep {
  std::vector<WorkerResult> workers;
  double wall_s = 0;
  double server_cpu_s = 0;
  double client_cpu_s = 0;
};

// Starts `n` workers, worker i as argv_for(i) (argv[0] the program), runs the
// protocol above and waits for them to exit. Fails when a worker does not get
// ready within `ready_timeout_s`, exits early, writes no result, or exits
// with a failure. `server_pid` > 0: the server whose CPU time is measured;
// 0: this process's; < 0: none.
StatusOr<ManyClientsRep> RunWorkers(int n,
                                    const std::function<std::vector<std::string>(int)>& argv_for,
                                    int server_pid = 0, double ready_timeout_s = 120);

// A (workload, clients) row: medians over repetitions of the summed rate (each
// worker's calls over its own window) and of the merged latencies' p50 and
// p99, and, from the repetition of median rate, the slowest and fastest
// client's calls per second.
struct ManyClientsRow {
  std::string workload;  // "exists", "prefix", "put", "get", "batch_put", "batch_get"
  int clients = 0;
  int reps = 0;
  double ops_per_s = 0;
  double items_per_s = 0;
  double gb_per_s = 0;
  double p50_us = 0;
  double p99_us = 0;
  double client_min_ops = 0;
  double client_max_ops = 0;
  double server_cores = 0;  // server CPU seconds per wall second (0: not measured)
  double client_cores = 0;
  uint64_t errors = 0;  // over all repetitions
  std::string first_error;
  std::vector<double> rep_ops_per_s;
  std::vector<double> client_ops_per_s;  // each client's, in the repetition of median rate
};
ManyClientsRow Aggregate(const std::string& workload, int clients,
                         const std::vector<ManyClientsRep>& reps);
nlohmann::json ToJson(const ManyClientsRow& r);
std::string RenderManyClients(const std::vector<ManyClientsRow>& rows);

}  // namespace crescent::bench
