#include "bench/raw_shapes.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>

#include "bench/loopback.h"

namespace crescent::bench {

namespace {
using Clock = std::chrono::steady_clock;
constexpr size_t kHeader = 64;  // control messages, data headers and answers
}  // namespace

StatusOr<RepSample> RawShapeOnce(RawShape shape, uint64_t size, uint64_t objects,
                                 std::span<const std::byte> source, const std::string& congestion) {
  auto pairs = LoopbackPairs(2, congestion);
  if (!pairs.ok()) return pairs.status();
  SocketPair& data = *(*pairs)[0];
  SocketPair& control = *(*pairs)[1];
  // A failed side shuts both pairs down, so no other side stays blocked.
  std::atomic<bool> failed{false};
  auto fail = [&] {
    failed = true;
    data.Shutdown();
    control.Shutdown();
  };
  const uint64_t trips = objects * uint64_t(shape.control_before + shape.control_after);
  std::thread master([&] {
    std::byte b[kHeader];
    for (uint64_t i = 0; i < trips; ++i) {
      if (!ReadAll(control.server.get(), b, kHeader) || !WriteAll(control.server.get(), b, kHeader))
        return fail();
    }
  });
  std::thread store([&] {
    Buffer sink(size + kHeader);
    for (uint64_t i = 0; i < objects; ++i) {
      const bool ok = shape.get ? ReadAll(data.server.get(), sink.data(), kHeader) &&
                                      WriteAll(data.server.get(), sink.data(), kHeader) &&
                                      WriteAll(data.server.get(), Chunk(source, size, i), size)
                                : ReadAll(data.server.get(), sink.data(), size + kHeader) &&
                                      WriteAll(data.server.get(), sink.data(), kHeader);
      if (!ok) return fail();
    }
  });
  Buffer back(shape.get ? size : 0);
  std::byte b[kHeader] = {};
  auto ping = [&](int k) {
    for (int i = 0; i < k; ++i) {
      if (!WriteAll(control.client.get(), b, kHeader) || !ReadAll(control.client.get(), b, kHeader))
        return false;
    }
    return true;
  };
  RepSample s;
  s.latency.Reserve(objects);
  const auto start = Clock::now();
  for (uint64_t i = 0; i < objects && !failed; ++i) {
    const auto t0 = Clock::now();
    bool ok = ping(shape.control_before) && WriteAll(data.client.get(), b, kHeader);
    if (shape.get) {
      ok = ok && ReadAll(data.client.get(), b, kHeader) &&
           ReadAll(data.client.get(), back.data(), size);
    } else {
      ok = ok && WriteAll(data.client.get(), Chunk(source, size, i), size) &&
           ReadAll(data.client.get(), b, kHeader);
    }
    ok = ok && ping(shape.control_after);
    s.latency.Add(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
    if (!ok) {
      fail();
      break;
    }
    s.bytes_moved += size;
  }
  s.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  master.join();
  store.join();
  s.calls = s.items = objects;
  s.bytes_requested = objects * size;
  if (failed) {
    ++s.errors;
    s.first_error = "raw loopback exchange failed";
  }
  return s;
}

StatusOr<std::vector<PhaseResult>> MeasureRawShapes(const WorkloadOptions& o) {
  std::vector<PhaseResult> out;
  for (uint64_t size : o.sizes) {
    const uint64_t objects = std::max<uint64_t>(8, o.OpsFor(size));
    const Buffer source(size);
    for (RawShape shape : {kRawPut, kRawGet}) {
      const char* op = shape.get ? "get" : "put";
      std::vector<RepSample> reps;
      for (int rep = 0; rep < o.reps; ++rep) {
        StatusOr<RepSample> s =
            RawShapeOnce(shape, size, objects, source.bytes(), o.tcp_congestion);
        if (!s.ok()) return s.status();
        reps.push_back(std::move(s.value()));
        if (o.on_phase)
          o.on_phase(std::string("raw one-object ") + op + " " +
                     FormatBytes(size, BytesStyle::kLabel) + " rep " + std::to_string(rep + 1));
      }
      PhaseResult r;
      r.system = "raw-tcp";
      r.op = op;
      r.size = size;
      out.push_back(Summarize(r, reps));
    }
  }
  return out;
}

}  // namespace crescent::bench
