#include "bench/baseline.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "bench/loopback.h"

namespace crescent::bench {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int> StreamCounts(int clients) {
  std::vector<int> v = {1};
  if (clients > 1) v.push_back(clients);
  return v;
}

// One repetition that moved `calls` objects and `bytes` bytes in `seconds`.
RepSample CopySample(double seconds, uint64_t calls, uint64_t requested, uint64_t moved) {
  RepSample s;
  s.seconds = seconds;
  s.calls = calls;
  s.items = calls;
  s.bytes_requested = requested;
  s.bytes_moved = moved;
  return s;
}

void Progress(const WorkloadOptions& o, const char* what, uint64_t size, int n, int rep) {
  if (o.on_phase) {
    o.on_phase(std::string(what) + " " + FormatBytes(size, BytesStyle::kLabel) + " x" +
               std::to_string(n) + " rep " + std::to_string(rep + 1));
  }
}

}  // namespace

StatusOr<RepSample> TcpStreamsOnce(uint64_t size, uint64_t objects,
                                   std::span<const StreamEnds> ends,
                                   const std::string& congestion) {
  const int streams = static_cast<int>(ends.size());
  StatusOr<std::vector<std::unique_ptr<SocketPair>>> pairs = LoopbackPairs(streams, congestion);
  if (!pairs.ok()) return pairs.status();
  const uint64_t per_stream = objects * size;
  std::vector<uint64_t> received(size_t(streams), 0);
  // Receivers run on their own threads; the timed senders are the "clients".
  std::vector<std::thread> receivers;
  std::vector<Clock::time_point> done(static_cast<size_t>(streams));
  for (int i = 0; i < streams; ++i) {
    receivers.emplace_back([&, i] {
      const int fd = (*pairs)[size_t(i)]->server.get();
      const std::span<std::byte> into = ends[size_t(i)].into;
      const uint64_t slots = std::max<uint64_t>(1, into.size() / size);
      uint64_t& got = received[size_t(i)];
      // Object by object: the object got/size lands in slot (got/size) % slots.
      while (got < per_stream) {
        const uint64_t in_object = got % size;
        std::byte* at = into.data() + ((got / size) % slots) * size + in_object;
        ssize_t r = read(fd, at, std::min<uint64_t>(size - in_object, per_stream - got));
        if (r <= 0) break;
        got += uint64_t(r);
      }
      done[size_t(i)] = Clock::now();
    });
  }
  const auto start = Clock::now();
  RunParallel(streams, [&](int i) {
    for (uint64_t k = 0; k < objects; ++k) {
      if (!WriteAll((*pairs)[size_t(i)]->client.get(), Chunk(ends[size_t(i)].from, size, k),
                    size)) {
        (*pairs)[size_t(i)]->Shutdown();  // its receiver stops short
        return;
      }
    }
  });
  for (auto& t : receivers) t.join();
  auto last = start;
  for (auto d : done) last = std::max(last, d);
  uint64_t moved = 0;
  for (uint64_t r : received) moved += r;
  return CopySample(std::chrono::duration<double>(last - start).count(),
                    objects * uint64_t(streams), per_stream * uint64_t(streams), moved);
}

StatusOr<std::vector<PhaseResult>> MeasureTcpStreams(const WorkloadOptions& o) {
  std::vector<PhaseResult> out;
  for (uint64_t size : o.sizes) {
    const uint64_t objects = std::max<uint64_t>(8, o.OpsFor(size));
    const Buffer source(size);
    for (int streams : StreamCounts(o.clients)) {
      // Warm object-sized buffers at both ends: what loopback TCP itself moves.
      std::vector<std::unique_ptr<Buffer>> sinks;
      std::vector<StreamEnds> ends;
      for (int i = 0; i < streams; ++i) {
        sinks.push_back(std::make_unique<Buffer>(size));
        ends.push_back({source.bytes(), sinks.back()->span()});
      }
      std::vector<RepSample> reps;
      for (int rep = 0; rep < o.reps; ++rep) {
        StatusOr<RepSample> s = TcpStreamsOnce(size, objects, ends, o.tcp_congestion);
        if (!s.ok()) return s.status();
        reps.push_back(std::move(s.value()));
        Progress(o, "raw tcp", size, streams, rep);
      }
      out.push_back(Reference("tcp", "stream", size, streams, reps));
    }
  }
  return out;
}

std::vector<PhaseResult> MeasureMemcpy(const WorkloadOptions& o) {
  std::vector<PhaseResult> out;
  for (uint64_t size : o.sizes) {
    // A source region of at least 256 MiB per thread (cold objects), and the
    // same number of copies per thread as a put-get phase moves objects.
    const uint64_t objects = std::max<uint64_t>(8, o.OpsFor(size));
    const uint64_t region_objects =
        std::max<uint64_t>(1, std::max<uint64_t>(objects * size, 256ull << 20) / size);
    for (int threads : StreamCounts(o.clients)) {
      std::vector<std::unique_ptr<Buffer>> src, dst;
      for (int i = 0; i < threads; ++i) {
        src.push_back(std::make_unique<Buffer>(region_objects * size));
        dst.push_back(std::make_unique<Buffer>(size));
      }
      std::vector<RepSample> reps;
      for (int rep = 0; rep < o.reps; ++rep) {
        const double secs = RunParallel(threads, [&](int i) {
          std::byte* d = dst[size_t(i)]->data();
          const std::byte* base = src[size_t(i)]->data();
          for (uint64_t k = 0; k < objects; ++k) {
            std::memcpy(d, base + (k % region_objects) * size, size);
            asm volatile("" : : "r"(d) : "memory");  // keep every copy
          }
        });
        const uint64_t bytes = objects * size * uint64_t(threads);
        reps.push_back(CopySample(secs, objects * uint64_t(threads), bytes, bytes));
        Progress(o, "memcpy", size, threads, rep);
      }
      out.push_back(Reference("memcpy", "copy", size, threads, reps));
    }
  }
  return out;
}

}  // namespace crescent::bench
