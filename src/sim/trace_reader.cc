#include "sim/trace_reader.h"

#include <absl/container/flat_hash_map.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>

#include "common/fd.h"

namespace crescent::sim {

namespace {

using Json = nlohmann::json;

constexpr size_t kProgressEveryBytes = size_t{1} << 20;

// What one valid line contributes, before its hash ids are remapped. Parsing a
// line completely before committing anything is what lets a skipped line leave
// no trace (e.g. half of its ids in the dense map).
struct ParsedLine {
  int64_t timestamp_ms = 0;
  int64_t input_length = 0;
  int64_t output_length = 0;
  std::vector<uint64_t> keys;
};

// Reads an optional numeric field. Absent means 0; present but not a number,
// or outside int64_t (a fraction is dropped), is an error.
std::optional<std::string> ReadOptionalNumber(const Json& obj, const char* key, int64_t* out) {
  auto it = obj.find(key);
  if (it == obj.end()) return std::nullopt;
  auto out_of_range = [key] { return std::string("'") + key + "' is out of range"; };
  if (it->is_number_unsigned()) {  // also is_number_integer(): test it first
    const uint64_t v = it->get<uint64_t>();
    if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return out_of_range();
    *out = static_cast<int64_t>(v);
  } else if (it->is_number_integer()) {
    *out = it->get<int64_t>();
  } else if (it->is_number_float()) {
    // Converting a double outside [-2^63, 2^63) to int64_t is undefined.
    constexpr double kTwo63 = 9223372036854775808.0;
    const double v = it->get<double>();
    if (!(v >= -kTwo63 && v < kTwo63)) return out_of_range();
    *out = static_cast<int64_t>(v);
  } else {
    return std::string("'") + key + "' is not a number";
  }
  return std::nullopt;
}

// Returns an error message (without the "source:line: " prefix) or nullopt.
std::optional<std::string> ParseLine(std::string_view text, ParsedLine* out) {
  Json obj;
  try {
    obj = Json::parse(text.begin(), text.end());
  } catch (const Json::exception& e) {
    // Syntax errors are parse_error; a number too large for a double is
    // out_of_range. e.what() is "[json.exception.parse_error.101] parse error at ...".
    std::string_view what = e.what();
    if (auto pos = what.find("] "); pos != std::string_view::npos) what.remove_prefix(pos + 2);
    return "invalid JSON: " + std::string(what);
  }
  if (!obj.is_object()) return std::string("expected a JSON object");

  auto ids = obj.find("hash_ids");
  if (ids == obj.end()) return std::string("missing 'hash_ids'");
  if (!ids->is_array()) return std::string("'hash_ids' is not an array");
  out->keys.clear();
  out->keys.reserve(ids->size());
  for (size_t i = 0; i < ids->size(); ++i) {
    const Json& v = (*ids)[i];
    if (v.is_number_unsigned()) {
      out->keys.push_back(v.get<uint64_t>());
    } else if (v.is_number_integer()) {  // signed means negative here
      return "hash_ids[" + std::to_string(i) + "] is negative";
    } else {
      return "hash_ids[" + std::to_string(i) + "] is not an integer";
    }
  }
  if (out->keys.size() > std::numeric_limits<uint32_t>::max()) {
    return std::string("too many hash_ids in one request");
  }
  if (auto err = ReadOptionalNumber(obj, "timestamp", &out->timestamp_ms)) return err;
  if (auto err = ReadOptionalNumber(obj, "input_length", &out->input_length)) return err;
  if (auto err = ReadOptionalNumber(obj, "output_length", &out->output_length)) return err;
  return std::nullopt;
}

bool IsBlank(std::string_view line) {
  for (char c : line) {
    if (c != ' ' && c != '\t' && c != '\r') return false;
  }
  return true;
}

// Builds a Trace one line at a time, so a file is parsed as it is read and
// never held whole.
class TraceBuilder {
 public:
  TraceBuilder(std::string source, const TraceOptions& options) : options_(options) {
    trace_.source = std::move(source);
  }

  // Adds the next line (without its newline).
  Status Add(std::string_view line) {
    if (line.size() > kMaxTraceLineBytes) return LineTooLong();
    ++line_no_;
    if (IsBlank(line)) return Status::Ok();
    if (auto err = ParseLine(line, &parsed_)) {
      std::string message = trace_.source + ":" + std::to_string(line_no_) + ": " + *err;
      if (!options_.skip_bad) return Status(ErrorCode::kParseError, std::move(message));
      ++trace_.skipped_lines;
      if (trace_.skipped_examples.size() < kMaxSkippedExamples) {
        trace_.skipped_examples.push_back(std::move(message));
      }
      return Status::Ok();
    }
    if (line_no_ > std::numeric_limits<uint32_t>::max() ||
        dense_.size() + parsed_.keys.size() > std::numeric_limits<BlockId>::max()) {
      return Status(ErrorCode::kInvalidArgument, trace_.source + ": trace too large");
    }
    TraceRequest req;
    req.timestamp_ms = parsed_.timestamp_ms;
    req.input_length = parsed_.input_length;
    req.output_length = parsed_.output_length;
    req.first_block = trace_.blocks.size();
    req.num_blocks = static_cast<uint32_t>(parsed_.keys.size());
    req.line = static_cast<uint32_t>(line_no_);
    for (uint64_t key : parsed_.keys) {
      auto [it, inserted] = dense_.try_emplace(key, static_cast<BlockId>(trace_.block_keys.size()));
      if (inserted) trace_.block_keys.push_back(key);
      trace_.blocks.push_back(it->second);
    }
    trace_.requests.push_back(req);
    return Status::Ok();
  }

  // The error for the next line, longer than kMaxTraceLineBytes.
  Status LineTooLong() const {
    return Status(ErrorCode::kParseError,
                  trace_.source + ":" + std::to_string(line_no_ + 1) + ": line longer than " +
                      std::to_string(kMaxTraceLineBytes >> 20) +
                      " MiB (a trace is JSON Lines: one request object per line)");
  }

  // Reports progress when another kProgressEveryBytes have been consumed.
  void Progress(size_t done, size_t total) {
    if (options_.progress && done >= next_progress_) {
      options_.progress(done, total);
      next_progress_ = done + kProgressEveryBytes;
    }
  }

  Trace Finish(size_t total) {
    if (options_.progress) options_.progress(total, total);
    return std::move(trace_);
  }

 private:
  const TraceOptions& options_;
  Trace trace_;
  absl::flat_hash_map<uint64_t, BlockId> dense_;
  ParsedLine parsed_;
  uint64_t line_no_ = 0;
  size_t next_progress_ = kProgressEveryBytes;
};

}  // namespace

StatusOr<Trace> ParseTrace(std::string_view text, std::string source, const TraceOptions& options) {
  TraceBuilder builder(std::move(source), options);
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    if (Status s = builder.Add(text.substr(pos, end - pos)); !s.ok()) return s;
    pos = end + 1;
    builder.Progress(std::min(pos, text.size()), text.size());
  }
  return builder.Finish(text.size());
}

StatusOr<Trace> LoadTrace(const std::string& path, const TraceOptions& options) {
  auto io_error = [&path](const char* what, int err) {
    return IoError(std::string(what) + " trace", path, err);
  };
  const ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return io_error("cannot open", errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return io_error("cannot read", errno);
  if (S_ISDIR(st.st_mode)) return io_error("cannot read", EISDIR);
  // Progress against the size when there is one (not for a pipe or device).
  const size_t size = S_ISREG(st.st_mode) ? static_cast<size_t>(st.st_size) : 0;

  // Lines are parsed straight out of each chunk read; only a line that spans
  // chunks is copied, into `partial`, which never exceeds the line bound.
  TraceBuilder builder(path, options);
  std::vector<char> chunk(size_t{1} << 20);
  std::string partial;
  size_t done = 0;
  for (;;) {
    const ssize_t n = ::read(fd.get(), chunk.data(), chunk.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return io_error("cannot read", errno);
    if (n == 0) break;
    done += static_cast<size_t>(n);
    std::string_view rest(chunk.data(), static_cast<size_t>(n));
    for (size_t nl; (nl = rest.find('\n')) != std::string_view::npos; rest.remove_prefix(nl + 1)) {
      Status s;
      if (partial.empty()) {
        s = builder.Add(rest.substr(0, nl));
      } else if (partial.size() + nl > kMaxTraceLineBytes) {
        s = builder.LineTooLong();
      } else {
        partial.append(rest.substr(0, nl));
        s = builder.Add(partial);
        partial.clear();
      }
      if (!s.ok()) return s;
    }
    if (partial.size() + rest.size() > kMaxTraceLineBytes) return builder.LineTooLong();
    partial.append(rest);
    builder.Progress(done, std::max(done, size));
  }
  if (!partial.empty()) {
    if (Status s = builder.Add(partial); !s.ok()) return s;
  }
  return builder.Finish(done);
}

}  // namespace crescent::sim
