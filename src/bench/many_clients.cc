#include "bench/many_clients.h"

#include <algorithm>
#include <chrono>
#include <iostream>
#include <memory>

#include "bench/crescent_backend.h"
#include "bench/results.h"
#include "bench/workloads.h"
#include "crescent/client.h"

namespace crescent::bench {

namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kRemoveChunk = 512;  // keys per untimed BatchRemove

double Micros(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double, std::micro>(b - a).count();
}

void NoteError(WorkerResult& r, const Status& s) {
  ++r.errors;
  if (r.first_error.empty()) r.first_error = s.ToString();
}

// One worker's client, its keys and its buffer, and the one call it times.
class Worker {
 public:
  explicit Worker(const WorkerOptions& o) : o_(o) {}

  Status Prepare() {
    StatusOr<std::unique_ptr<Client>> c =
        Client::Connect(BenchClientConfig(o_.master, o_.client, o_.shm, o_.lanes));
    if (!c.ok()) return c.status();
    client_ = std::move(c.value());
    base_ = o_.prefix + "/c" + std::to_string(o_.id) + "/";
    switch (o_.workload) {
      case ManyWorkload::kExists:
      case ManyWorkload::kPrefix: return StoreSmallKeys();
      case ManyWorkload::kPut: return RegisterBuffer();
      case ManyWorkload::kGet: return StoreObjects();
    }
    return Status::Ok();
  }

  // One timed call into `r`.
  void Call(WorkerResult& r) {
    switch (o_.workload) {
      case ManyWorkload::kExists: {
        bool right = true;
        for (const StatusOr<bool>& e : client_->BatchExists(keys_)) {
          if (!e.ok()) return NoteError(r, e.status());
          right = right && *e;
        }
        r.items += keys_.size();
        if (!right) NoteError(r, Status(ErrorCode::kInternal, "wrong exists answer"));
        return;
      }
      case ManyWorkload::kPrefix: {
        StatusOr<size_t> lead = client_->BatchQueryPrefix(keys_);
        if (!lead.ok()) return NoteError(r, lead.status());
        r.items += keys_.size();
        if (*lead != keys_.size()) NoteError(r, Status(ErrorCode::kInternal, "wrong prefix"));
        return;
      }
      case ManyWorkload::kPut: {
        const size_t first = keys_.size();
        for (int j = 0; j < o_.batch; ++j)
          keys_.push_back(base_ + "p" + std::to_string(keys_.size()));
        const std::span<const std::string> keys(keys_.data() + first, size_t(o_.batch));
        const std::vector<size_t> sizes(keys.size(), o_.size);
        const std::vector<Status> put =
            o_.batch == 1 ? std::vector<Status>{client_->PutFrom(keys[0], slots_[0], o_.size)}
                          : client_->BatchPutFrom(keys, slots_, sizes);
        for (const Status& s : put) {
          if (!s.ok()) return NoteError(r, s);
        }
        r.items += keys.size();
        r.bytes += keys.size() * o_.size;
        return;
      }
      case ManyWorkload::kGet: {
        std::vector<std::string> keys;
        for (int j = 0; j < o_.batch; ++j) keys.push_back(keys_[next_++ % keys_.size()]);
        const std::vector<size_t> sizes(keys.size(), o_.size);
        const std::vector<StatusOr<size_t>> got =
            o_.batch == 1
                ? std::vector<StatusOr<size_t>>{client_->GetInto(keys[0], slots_[0], o_.size)}
                : client_->BatchGetInto(keys, slots_, sizes);
        for (const StatusOr<size_t>& g : got) {
          if (!g.ok()) return NoteError(r, g.status());
          if (*g != o_.size) return NoteError(r, Status(ErrorCode::kInternal, "wrong size"));
        }
        r.items += keys.size();
        r.bytes += keys.size() * o_.size;
        return;
      }
    }
  }

  // Untimed: removes every key this worker stored (put keys the cache evicted
  // are simply absent).
  void CleanUp() {
    const std::span<const std::string> all(keys_);
    for (size_t at = 0; at < all.size(); at += kRemoveChunk)
      (void)client_->BatchRemove(all.subspan(at, std::min(kRemoveChunk, all.size() - at)), true);
    if (buffer_) (void)client_->UnregisterBuffer(buffer_->data());
  }

 private:
  Status StoreSmallKeys() {
    for (int i = 0; i < o_.keys; ++i) keys_.push_back(base_ + "k" + std::to_string(i));
    const std::vector<std::byte> value(64, std::byte{0x42});
    const std::vector<std::span<const std::byte>> values(keys_.size(), value);
    for (const Status& s : client_->BatchPut(keys_, values)) {
      if (!s.ok()) return s;
    }
    return Status::Ok();
  }

  // One slot of `size` bytes per object of a call.
  Status RegisterBuffer() {
    const size_t bytes = size_t(o_.size) * size_t(o_.batch);
    buffer_ = std::make_unique<Buffer>(bytes);
    std::fill(buffer_->data(), buffer_->data() + bytes, std::byte{0x5a});
    for (int j = 0; j < o_.batch; ++j) slots_.push_back(buffer_->data() + size_t(j) * o_.size);
    if (Status s = client_->RegisterBuffer(buffer_->data(), buffer_->size()); !s.ok()) return s;
    client_->WaitBuffersWarm();
    return Status::Ok();
  }

  Status StoreObjects() {
    if (Status s = RegisterBuffer(); !s.ok()) return s;
    for (int i = 0; i < std::max(o_.get_keys, o_.batch); ++i) {
      keys_.push_back(base_ + "g" + std::to_string(i));
      if (Status s = client_->PutFrom(keys_.back(), slots_[0], o_.size); !s.ok()) return s;
    }
    return Status::Ok();
  }

  const WorkerOptions& o_;
  std::unique_ptr<Client> client_;
  std::string base_;
  std::vector<std::string> keys_;
  std::unique_ptr<Buffer> buffer_;
  std::vector<void*> slots_;
  uint64_t next_ = 0;
};

// Waits for the line `word` on `in`; false at its end or on any other line.
bool Expect(std::istream& in, const char* word) {
  std::string line;
  return std::getline(in, line) && line == word;
}

}  // namespace

const char* WorkloadName(ManyWorkload w) {
  static const char* kNames[] = {"exists", "prefix", "put", "get"};
  return kNames[static_cast<int>(w)];
}

bool ParseWorkload(const std::string& name, ManyWorkload& out) {
  for (ManyWorkload w :
       {ManyWorkload::kExists, ManyWorkload::kPrefix, ManyWorkload::kPut, ManyWorkload::kGet}) {
    if (name == WorkloadName(w)) {
      out = w;
      return true;
    }
  }
  return false;
}

nlohmann::json ToJson(const WorkerResult& r) {
  return {{"calls", r.calls},
          {"items", r.items},
          {"bytes", r.bytes},
          {"errors", r.errors},
          {"seconds", r.seconds},
          {"latency_us", r.latency_us},
          {"first_error", r.first_error}};
}

StatusOr<WorkerResult> WorkerResultFromJson(const std::string& line) {
  const nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("calls"))
    return Status(ErrorCode::kInternal, "a worker wrote no result");
  WorkerResult r;
  r.calls = j.value("calls", uint64_t{0});
  r.items = j.value("items", uint64_t{0});
  r.bytes = j.value("bytes", uint64_t{0});
  r.errors = j.value("errors", uint64_t{0});
  r.seconds = j.value("seconds", 0.0);
  r.latency_us = j.value("latency_us", std::vector<double>{});
  r.first_error = j.value("first_error", std::string());
  return r;
}

int RunWorker(const WorkerOptions& o, std::istream& in, std::ostream& out) {
  Worker w(o);
  if (Status s = w.Prepare(); !s.ok()) {
    std::cerr << "crescent bench clients-worker " << o.id << ": " << s.ToString() << "\n";
    return 2;
  }
  out << "ready\n" << std::flush;
  if (!Expect(in, "go")) return 2;
  WorkerResult r;
  const auto start = Clock::now();
  const auto until = start + std::chrono::duration<double>(o.seconds);
  auto t0 = start;
  while (t0 < until) {
    w.Call(r);
    const auto t1 = Clock::now();
    r.latency_us.push_back(Micros(t0, t1));
    ++r.calls;
    t0 = t1;
  }
  r.seconds = std::chrono::duration<double>(t0 - start).count();
  out << ToJson(r).dump() << "\n" << std::flush;
  const bool ended = Expect(in, "end");
  w.CleanUp();
  return ended ? 0 : 2;
}

ManyClientsRow Aggregate(const std::string& workload, int clients,
                         const std::vector<ManyClientsRep>& reps) {
  ManyClientsRow row;
  row.workload = workload;
  row.clients = clients;
  row.reps = static_cast<int>(reps.size());
  struct PerRep {
    double ops = 0, items = 0, gbps = 0, p50 = 0, p99 = 0, min = 0, max = 0, server = 0, client = 0;
    std::vector<double> each;
  };
  std::vector<PerRep> per;
  for (const ManyClientsRep& rep : reps) {
    PerRep p;
    LatencyRecorder all;
    bool first = true;
    for (const WorkerResult& w : rep.workers) {
      const double t = w.seconds > 0 ? w.seconds : 1e-12;
      const double ops = double(w.calls) / t;
      p.ops += ops;
      p.items += double(w.items) / t;
      p.gbps += double(w.bytes) / t / 1e9;
      p.each.push_back(ops);
      p.min = first ? ops : std::min(p.min, ops);
      p.max = first ? ops : std::max(p.max, ops);
      first = false;
      for (double us : w.latency_us) all.Add(us);
      row.errors += w.errors;
      if (row.first_error.empty()) row.first_error = w.first_error;
    }
    p.p50 = all.P50();
    p.p99 = all.P99();
    if (rep.wall_s > 0) {
      p.server = rep.server_cpu_s / rep.wall_s;
      p.client = rep.client_cpu_s / rep.wall_s;
    }
    per.push_back(p);
    row.rep_ops_per_s.push_back(p.ops);
  }
  if (per.empty()) return row;
  auto median = [&](double PerRep::*field) {
    std::vector<double> v;
    for (const PerRep& p : per) v.push_back(p.*field);
    return Median(v);
  };
  row.ops_per_s = median(&PerRep::ops);
  row.items_per_s = median(&PerRep::items);
  row.gb_per_s = median(&PerRep::gbps);
  row.p50_us = median(&PerRep::p50);
  row.p99_us = median(&PerRep::p99);
  row.server_cores = median(&PerRep::server);
  row.client_cores = median(&PerRep::client);
  // The fairness columns come from one repetition, the one of median rate
  // (the lower middle one of an even count).
  std::vector<size_t> order(per.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return per[a].ops < per[b].ops; });
  const PerRep& mid = per[order[(order.size() - 1) / 2]];
  row.client_min_ops = mid.min;
  row.client_max_ops = mid.max;
  row.client_ops_per_s = mid.each;
  return row;
}

nlohmann::json ToJson(const ManyClientsRow& r) {
  return {{"workload", r.workload},
          {"clients", r.clients},
          {"reps", r.reps},
          {"ops_per_s", r.ops_per_s},
          {"items_per_s", r.items_per_s},
          {"gb_per_s", r.gb_per_s},
          {"p50_us", r.p50_us},
          {"p99_us", r.p99_us},
          {"client_min_ops_per_s", r.client_min_ops},
          {"client_max_ops_per_s", r.client_max_ops},
          {"server_cores", r.server_cores},
          {"client_cores", r.client_cores},
          {"errors", r.errors},
          {"first_error", r.first_error},
          {"rep_ops_per_s", r.rep_ops_per_s},
          {"client_ops_per_s", r.client_ops_per_s}};
}

std::string RenderManyClients(const std::vector<ManyClientsRow>& rows) {
  Table t({"workload", "clients", "calls/s", "keys/s | GB/s", "p50 us", "p99 us",
           "client min calls/s", "client max calls/s", "server cores", "calls/server core-s",
           "client cores", "errors"});
  for (const ManyClientsRow& r : rows) {
    const bool data = r.workload.ends_with("put") || r.workload.ends_with("get");
    t.AddRow({r.workload, std::to_string(r.clients), Count(r.ops_per_s),
              data ? Fixed(r.gb_per_s, 2) : Count(r.items_per_s), Fixed(r.p50_us, 0),
              Fixed(r.p99_us, 0), Count(r.client_min_ops), Count(r.client_max_ops),
              r.server_cores > 0 ? Fixed(r.server_cores, 2) : "-",
              r.server_cores > 0 ? Count(r.ops_per_s / r.server_cores) : "-",
              Fixed(r.client_cores, 2), std::to_string(r.errors)});
  }
  return t.Render();
}

}  // namespace crescent::bench
