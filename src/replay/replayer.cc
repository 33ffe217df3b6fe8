#include "replay/replayer.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/host_memory.h"
#include "replay/sequencer.h"

namespace crescent::replay {

namespace {

using SteadyClock = std::chrono::steady_clock;

double MicrosSince(SteadyClock::time_point start) {
  return std::chrono::duration<double, std::micro>(SteadyClock::now() - start).count();
}

// What one stream measured; merged into the report at the end.
struct StreamStats {
  uint64_t hit_pages = 0, prefix_pages_got = 0, beyond_pages_read = 0, pages_put = 0;
  uint64_t already_present = 0, corrupt_pages = 0, pages_hinted = 0;
  std::map<std::string, uint64_t> errors;
  std::vector<double> lookup_us, get_us, touch_us, put_us;

  void Error(const Status& s) { errors[std::string(ErrorCodeName(s.code()))]++; }
};

struct AlignedBuffer {
  std::byte* data = nullptr;
  size_t size = 0;
  explicit AlignedBuffer(size_t n) : size(n) {
    const size_t rounded = (n + 4095) / 4096 * 4096;
    data = static_cast<std::byte*>(std::aligned_alloc(4096, rounded == 0 ? 4096 : rounded));
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
};

class Stream {
 public:
  Stream(Client& client, const Plan& plan, const ReplayOptions& options)
      : client_(client),
        plan_(plan),
        options_(options),
        buffer_(std::max<size_t>(plan.max_request_pages, 1) * options.page_size) {
    if (buffer_.data != nullptr) std::memset(buffer_.data, 0xA5, buffer_.size);
  }
  ~Stream() {
    if (registered_) (void)client_.UnregisterBuffer(buffer_.data);
  }

  Status Register() {
    if (buffer_.data == nullptr) {
      return Status(ErrorCode::kNoSpace, "cannot allocate " + std::to_string(buffer_.size) +
                                             " bytes for a stream's page buffer");
    }
    Status s = client_.RegisterBuffer(buffer_.data, buffer_.size);
    registered_ = s.ok();
    if (registered_) client_.WaitBuffersWarm();  // untimed, as the cluster's warming
    return s;
  }

  void Run(ArrivalSequencer& seq, std::atomic<uint64_t>& done) {
    while (true) {
      std::optional<size_t> idx = seq.Take();
      if (!idx) return;
      const PlannedRequest& req = plan_.requests[*idx];
      auto start = SteadyClock::now();
      StatusOr<size_t> hit = client_.BatchQueryPrefix(req.keys);
      stats.lookup_us.push_back(MicrosSince(start));
      seq.Release();
      size_t h = 0;
      if (hit.ok()) {
        h = std::min(*hit, req.keys.size());
      } else {
        stats.Error(hit.status());  // treated as a full miss
      }
      stats.hit_pages += h;
      RunRequest(req, h);
      if (req.ends_session) EndSession(req);
      done.fetch_add(1, std::memory_order_relaxed);
    }
  }

  StreamStats stats;

 private:
  std::byte* Page(size_t i) const { return buffer_.data + i * options_.page_size; }

  void Stamp(size_t i, uint64_t id) { std::memcpy(Page(i), &id, sizeof id); }
  bool Check(size_t i, uint64_t id) const {
    uint64_t got = 0;
    std::memcpy(&got, Page(i), sizeof got);
    return got == id;
  }

  // 5. the hint: the request was its conversation's last turn. Leaf first, as
  // the simulator sends it: marks are taken oldest first, so a shared prefix
  // is the last of the request's pages to go.
  void EndSession(const PlannedRequest& req) {
    std::vector<std::string> leaf_first(req.keys.rbegin(), req.keys.rend());
    StatusOr<size_t> marked = client_.EndSession(leaf_first);
    if (marked.ok()) {
      stats.pages_hinted += *marked;
    } else {
      stats.Error(marked.status());
    }
  }

  void RunRequest(const PlannedRequest& req, size_t h) {
    const size_t n = req.keys.size();
    const std::span<const std::string> keys(req.keys);
    ptrs_.resize(n);
    sizes_.assign(n, options_.page_size);
    for (size_t i = 0; i < n; ++i) {
      ptrs_[i] = Page(i);
      Stamp(i, ~req.hash_ids[i]);  // anything but the right id
    }

    // 2. get the prefix.
    if (h > 0) {
      auto start = SteadyClock::now();
      StatusOr<size_t> got = client_.GetPrefixInto(keys.first(h), std::span(ptrs_).first(h),
                                                   std::span(sizes_).first(h));
      stats.get_us.push_back(MicrosSince(start));
      if (got.ok()) {
        const size_t g = std::min(*got, h);
        stats.prefix_pages_got += g;
        for (size_t i = 0; i < g; ++i) stats.corrupt_pages += Check(i, req.hash_ids[i]) ? 0 : 1;
        if (g < h) stats.errors["PREFIX_SHORTENED"] += h - g;
      } else {
        stats.Error(got.status());
      }
    }
    if (h == n) return;

    // 3. touch the stored pages beyond the prefix.
    std::vector<bool> stored(n, false);
    if (options_.beyond_prefix == BeyondPrefix::kRead) {
      auto start = SteadyClock::now();
      std::vector<StatusOr<size_t>> r = client_.BatchGetInto(
          keys.subspan(h), std::span(ptrs_).subspan(h), std::span(sizes_).subspan(h));
      stats.touch_us.push_back(MicrosSince(start));
      for (size_t k = 0; k < r.size(); ++k) {
        const size_t i = h + k;
        if (r[k].ok()) {
          stored[i] = true;
          stats.beyond_pages_read++;
          stats.corrupt_pages += Check(i, req.hash_ids[i]) ? 0 : 1;
        } else if (r[k].status().code() != ErrorCode::kObjectNotFound) {
          stats.Error(r[k].status());
        }
      }
    }

    // 4. put the missing pages, one chain per run of consecutive missing pages.
    for (size_t i = h; i < n; ++i) Stamp(i, req.hash_ids[i]);
    auto start = SteadyClock::now();
    bool any = false;
    for (size_t i = h; i < n;) {
      if (stored[i]) {
        ++i;
        continue;
      }
      size_t j = i;
      while (j < n && !stored[j]) ++j;
      // The run extends the stored page before it, as the simulator links
      // every page to the one before: chain-aware policies then keep that
      // page while the run is cached.
      PutOptions linked;
      if (i > 0) linked.parent_key = req.keys[i - 1];
      std::vector<Status> put =
          client_.BatchPutFrom(keys.subspan(i, j - i), std::span(ptrs_).subspan(i, j - i),
                               std::span(sizes_).subspan(i, j - i), linked, /*chain=*/true);
      any = true;
      for (const Status& s : put) {
        if (s.ok()) {
          stats.pages_put++;
        } else if (s.code() == ErrorCode::kObjectAlreadyExists) {
          stats.already_present++;
        } else {
          stats.Error(s);
        }
      }
      i = j;
    }
    if (any) stats.put_us.push_back(MicrosSince(start));
  }

  Client& client_;
  const Plan& plan_;
  const ReplayOptions& options_;
  AlignedBuffer buffer_;
  bool registered_ = false;
  std::vector<void*> ptrs_;
  std::vector<size_t> sizes_;
};

void Append(std::vector<double>& to, const std::vector<double>& from) {
  to.insert(to.end(), from.begin(), from.end());
}

std::string Size(uint64_t bytes) {
  return std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) + " MiB)";
}

// Refuses, before anything is allocated, a page larger than any value the
// cluster takes (every put of it would fail) and page buffers larger than the
// memory this host can give (each stream holds its longest request's pages).
Status CheckItFits(Client& client, const Plan& plan, const ReplayOptions& options) {
  StatusOr<ClusterStat> st = client.Stat();
  if (!st.ok()) return st.status();
  if (options.page_size > st->largest_object) {
    return Status(ErrorCode::kInvalidArgument,
                  "a page of " + Size(options.page_size) +
                      " is larger than the largest value the cluster takes, " +
                      Size(st->largest_object) + ": use a smaller --page-size");
  }
  const uint64_t pages = std::max<uint64_t>(plan.max_request_pages, 1);
  uint64_t need = 0;
  if (__builtin_mul_overflow(uint64_t{options.page_size}, pages, &need) ||
      __builtin_mul_overflow(need, static_cast<uint64_t>(options.streams), &need)) {
    need = UINT64_MAX;
  }
  std::optional<AvailableMemory> avail = AvailableSegmentMemory();
  if (avail && need > avail->bytes) {
    return Status(
        ErrorCode::kNoSpace,
        "the page buffers need " + Size(need) + " (" + std::to_string(options.streams) +
            " streams x " + std::to_string(pages) +
            " pages of the longest request), more than this host can give: " + Size(avail->bytes) +
            " (" + avail->detail + "); use a smaller --page-size or fewer --streams");
  }
  return Status::Ok();
}

}  // namespace

StatusOr<ReplayReport> RunReplay(Client& client, const Plan& plan, const ReplayOptions& options) {
  if (options.page_size < sizeof(uint64_t)) {
    return Status(ErrorCode::kInvalidArgument, "the page size must be at least 8 bytes");
  }
  if (options.streams < 1) return Status(ErrorCode::kInvalidArgument, "--streams must be >= 1");
  if (Status s = CheckItFits(client, plan, options); !s.ok()) return s;

  std::vector<std::unique_ptr<Stream>> streams;
  for (int s = 0; s < options.streams; ++s) {
    streams.push_back(std::make_unique<Stream>(client, plan, options));
    if (Status st = streams.back()->Register(); !st.ok()) return st;
  }
  std::vector<double> release;
  release.reserve(plan.requests.size());
  for (const PlannedRequest& r : plan.requests) release.push_back(r.release_ms);
  ArrivalSequencer seq(std::move(release));
  std::atomic<uint64_t> done{0};

  const auto start = SteadyClock::now();
  seq.Start();
  std::vector<std::thread> threads;
  for (auto& s : streams) threads.emplace_back([&seq, &done, st = s.get()] { st->Run(seq, done); });
  const uint64_t total = plan.requests.size();
  if (options.progress) {
    while (done.load(std::memory_order_relaxed) < total) {
      options.progress(done.load(std::memory_order_relaxed), total);
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
    options.progress(total, total);
  }
  for (auto& t : threads) t.join();

  ReplayReport report;
  report.seconds = std::chrono::duration<double>(SteadyClock::now() - start).count();
  report.max_lag_ms = seq.max_lag_ms();
  report.requests = plan.requests.size();
  report.page_refs = plan.page_refs;
  report.distinct_pages = plan.distinct_pages;
  report.page_size = options.page_size;
  report.streams = options.streams;
  report.beyond_prefix = options.beyond_prefix == BeyondPrefix::kRead ? "read" : "skip";
  std::vector<double> lookup, get, touch, put;
  for (auto& s : streams) {
    const StreamStats& st = s->stats;
    report.hit_pages += st.hit_pages;
    report.prefix_pages_got += st.prefix_pages_got;
    report.beyond_pages_read += st.beyond_pages_read;
    report.pages_put += st.pages_put;
    report.already_present += st.already_present;
    report.pages_hinted += st.pages_hinted;
    report.corrupt_pages += st.corrupt_pages;
    for (const auto& [code, count] : st.errors) report.errors[code] += count;
    Append(lookup, st.lookup_us);
    Append(get, st.get_us);
    Append(touch, st.touch_us);
    Append(put, st.put_us);
  }
  report.lookup.latency = Summarize(lookup);
  report.get.latency = Summarize(get);
  report.touch.latency = Summarize(touch);
  report.put.latency = Summarize(put);
  report.lookup.pages = report.hit_pages;
  report.get.pages = report.prefix_pages_got;
  report.get.bytes = report.prefix_pages_got * options.page_size;
  report.touch.pages = report.beyond_pages_read;
  report.touch.bytes = report.beyond_pages_read * options.page_size;
  report.put.pages = report.pages_put;
  report.put.bytes = report.pages_put * options.page_size;
  return report;
}

}  // namespace crescent::replay
