#include "sim/trace_reader.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>

namespace crescent::sim {
namespace {

TEST(TraceReaderTest, ParsesRequestsAndRemapsIdsDensely) {
  auto trace = ParseTrace(
      "{\"timestamp\": 5, \"input_length\": 1500, \"output_length\": 7, \"hash_ids\": [40, 41]}\n"
      "{\"timestamp\": 9, \"input_length\": 2000, \"output_length\": 3, \"hash_ids\": [40, 99, "
      "7]}\n",
      "t");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->requests.size(), 2u);
  EXPECT_EQ(trace->block_refs(), 5u);
  EXPECT_EQ(trace->distinct_blocks(), 4u);
  // Dense ids follow first appearance; block_keys maps them back.
  EXPECT_EQ(trace->blocks, (std::vector<BlockId>{0, 1, 0, 2, 3}));
  EXPECT_EQ(trace->block_keys, (std::vector<uint64_t>{40, 41, 99, 7}));

  const TraceRequest& second = trace->requests[1];
  EXPECT_EQ(second.timestamp_ms, 9);
  EXPECT_EQ(second.input_length, 2000);
  EXPECT_EQ(second.output_length, 3);
  EXPECT_EQ(second.line, 2u);
  auto blocks = trace->BlocksOf(second);
  EXPECT_EQ(std::vector<BlockId>(blocks.begin(), blocks.end()), (std::vector<BlockId>{0, 2, 3}));
}

TEST(TraceReaderTest, IgnoresBlankLinesAndCarriageReturns) {
  auto trace = ParseTrace("\n{\"hash_ids\": [1]}\r\n   \n\t\r\n{\"hash_ids\": [1, 2]}", "t");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->requests.size(), 2u);
  EXPECT_EQ(trace->requests[0].line, 2u);
  EXPECT_EQ(trace->requests[1].line, 5u);  // last line without a trailing newline
  EXPECT_EQ(trace->skipped_lines, 0u);
}

TEST(TraceReaderTest, OptionalFieldsDefaultToZeroAndEmptyIdsAreARequest) {
  auto trace = ParseTrace("{\"hash_ids\": []}\n", "t");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  ASSERT_EQ(trace->requests.size(), 1u);
  EXPECT_EQ(trace->requests[0].timestamp_ms, 0);
  EXPECT_EQ(trace->requests[0].num_blocks, 0u);
  EXPECT_EQ(trace->distinct_blocks(), 0u);
}

TEST(TraceReaderTest, EmptyInputIsAnEmptyTrace) {
  auto trace = ParseTrace("", "t");
  ASSERT_TRUE(trace.ok());
  EXPECT_TRUE(trace->requests.empty());
}

struct BadLine {
  std::string line;
  std::string expected;  // a fragment of the error message
};

class TraceReaderBadLineTest : public ::testing::TestWithParam<BadLine> {};

TEST_P(TraceReaderBadLineTest, ErrorNamesTheLineNumber) {
  // The bad line is line 3: a good line and a blank line come first.
  const std::string text =
      "{\"hash_ids\": [1, 2]}\n\n" + GetParam().line + "\n{\"hash_ids\": [3]}\n";
  auto trace = ParseTrace(text, "my.jsonl");
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), ErrorCode::kParseError);
  EXPECT_NE(trace.status().message().find("my.jsonl:3: "), std::string::npos)
      << trace.status().message();
  EXPECT_NE(trace.status().message().find(GetParam().expected), std::string::npos)
      << trace.status().message();
}

INSTANTIATE_TEST_SUITE_P(
    Malformed, TraceReaderBadLineTest,
    ::testing::Values(
        BadLine{"{\"hash_ids\": [1, 2]", "invalid JSON"}, BadLine{"not json", "invalid JSON"},
        BadLine{"[1, 2, 3]", "expected a JSON object"},
        BadLine{"{\"timestamp\": 1}", "missing 'hash_ids'"},
        BadLine{"{\"hash_ids\": 5}", "'hash_ids' is not an array"},
        BadLine{"{\"hash_ids\": [1, \"x\"]}", "hash_ids[1] is not an integer"},
        BadLine{"{\"hash_ids\": [1.5]}", "hash_ids[0] is not an integer"},
        BadLine{"{\"hash_ids\": [null]}", "hash_ids[0] is not an integer"},
        BadLine{"{\"hash_ids\": [4, -1]}", "hash_ids[1] is negative"},
        BadLine{"{\"timestamp\": \"now\", \"hash_ids\": [1]}", "'timestamp' is not a number"},
        BadLine{"{\"input_length\": [], \"hash_ids\": [1]}", "'input_length' is not a number"},
        // Beyond a double: nlohmann throws out_of_range, not parse_error.
        BadLine{"{\"hash_ids\": [1], \"timestamp\": 1e999}", "number overflow"},
        // Numbers JSON holds but int64_t does not.
        BadLine{"{\"hash_ids\": [1], \"timestamp\": 1e300}", "'timestamp' is out of range"},
        BadLine{"{\"hash_ids\": [1], \"input_length\": -9.3e18}", "'input_length' is out of range"},
        BadLine{"{\"hash_ids\": [1], \"output_length\": 9223372036854775808}",
                "'output_length' is out of range"}));

TEST(TraceReaderTest, NumbersAtTheEdgesOfInt64AreKept) {
  auto trace = ParseTrace(
      "{\"hash_ids\": [], \"timestamp\": 9223372036854775807, \"input_length\": "
      "-9223372036854775808, \"output_length\": -9.2e18}\n",
      "t");
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->requests[0].timestamp_ms, std::numeric_limits<int64_t>::max());
  EXPECT_EQ(trace->requests[0].input_length, std::numeric_limits<int64_t>::min());
  EXPECT_EQ(trace->requests[0].output_length, -9200000000000000000);
}

TEST(TraceReaderTest, SkipBadCountsSkipsAndReportsMalformedLines) {
  const std::string text =
      "{\"hash_ids\": [1]}\n"
      "garbage\n"
      "{\"hash_ids\": [2, \"x\"]}\n"  // must not leak id 2 into the trace
      "\n"
      "{\"hash_ids\": [1, 3]}\n"
      "{\"no_ids\": true}\n";
  TraceOptions options;
  options.skip_bad = true;
  auto trace = ParseTrace(text, "t", options);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->skipped_lines, 3u);
  ASSERT_EQ(trace->skipped_examples.size(), 3u);
  EXPECT_EQ(trace->skipped_examples[0].rfind("t:2: ", 0), 0u) << trace->skipped_examples[0];
  EXPECT_EQ(trace->skipped_examples[1].rfind("t:3: ", 0), 0u) << trace->skipped_examples[1];
  EXPECT_EQ(trace->skipped_examples[2].rfind("t:6: ", 0), 0u) << trace->skipped_examples[2];
  ASSERT_EQ(trace->requests.size(), 2u);
  EXPECT_EQ(trace->requests[1].line, 5u);
  EXPECT_EQ(trace->block_keys, (std::vector<uint64_t>{1, 3}));
}

TEST(TraceReaderTest, SkipBadKeepsOnlyTheFirstFewExamples) {
  std::string text;
  for (int i = 0; i < 20; ++i) text += "oops\n";
  TraceOptions options;
  options.skip_bad = true;
  auto trace = ParseTrace(text, "t", options);
  ASSERT_TRUE(trace.ok());
  EXPECT_EQ(trace->skipped_lines, 20u);
  EXPECT_EQ(trace->skipped_examples.size(), kMaxSkippedExamples);
}

TEST(TraceReaderTest, LoadTraceReadsAFile) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("crescent_trace_reader_test_" + std::to_string(::getpid()) + ".jsonl");
  {
    std::ofstream out(path);
    out << "{\"timestamp\": 0, \"hash_ids\": [8, 9]}\n{\"timestamp\": 1, \"hash_ids\": [8]}\n";
  }
  auto trace = LoadTrace(path.string());
  std::filesystem::remove(path);
  ASSERT_TRUE(trace.ok()) << trace.status().ToString();
  EXPECT_EQ(trace->source, path.string());
  EXPECT_EQ(trace->block_refs(), 3u);
  EXPECT_EQ(trace->distinct_blocks(), 2u);
}

TEST(TraceReaderTest, LoadTraceReportsAMissingFile) {
  auto trace = LoadTrace("/nonexistent/dir/trace.jsonl");
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), ErrorCode::kIoError);
  EXPECT_NE(trace.status().message().find("/nonexistent/dir/trace.jsonl"), std::string::npos);
  EXPECT_NE(trace.status().message().find("No such file"), std::string::npos);
}

TEST(TraceReaderTest, LoadTraceReportsADirectory) {
  auto trace = LoadTrace(std::filesystem::temp_directory_path().string());
  ASSERT_FALSE(trace.ok());
  EXPECT_EQ(trace.status().code(), ErrorCode::kIoError);
}

// A file is parsed as it is read: lines that span the reader's chunks come
// out whole, a last line without a newline counts, and so does a trace read
// from something that is not a regular file.
TEST(TraceReaderTest, LoadTraceReadsLinesAcrossChunksAndFromAPipe) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("crescent_trace_chunks_test_" + std::to_string(::getpid()) + ".jsonl");
  std::string text;
  std::vector<uint64_t> keys;
  for (uint64_t r = 0; text.size() < (size_t{5} << 20); ++r) {
    std::string line = "{\"timestamp\": " + std::to_string(r) + ", \"hash_ids\": [";
    for (uint64_t i = 0; i < 2000 + r % 7; ++i) line += std::to_string(r * 10000 + i) + ", ";
    text += line + std::to_string(r) + "]}\n";
  }
  text += "{\"hash_ids\": [7]}";  // no newline at the end
  {
    std::ofstream out(path, std::ios::binary);
    out << text;
  }
  auto from_file = LoadTrace(path.string());
  std::filesystem::remove(path);
  auto from_text = ParseTrace(text, path.string());
  ASSERT_TRUE(from_file.ok()) << from_file.status().ToString();
  ASSERT_TRUE(from_text.ok()) << from_text.status().ToString();
  EXPECT_EQ(from_file->blocks, from_text->blocks);
  EXPECT_EQ(from_file->block_keys, from_text->block_keys);
  EXPECT_EQ(from_file->requests.size(), from_text->requests.size());

  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "{\"hash_ids\": [1, 2]}\n", 21), 21);
  ::close(fds[1]);
  auto from_pipe = LoadTrace("/proc/self/fd/" + std::to_string(fds[0]));
  ::close(fds[0]);
  ASSERT_TRUE(from_pipe.ok()) << from_pipe.status().ToString();
  EXPECT_EQ(from_pipe->block_refs(), 2u);
}

// No line is held past kMaxTraceLineBytes, even with skip_bad: an endless
// input without newlines (/dev/zero) ends in an error, not in all of memory.
TEST(TraceReaderTest, ALineLongerThanTheBoundIsAnError) {
  TraceOptions skip;
  skip.skip_bad = true;
  auto zero = LoadTrace("/dev/zero", skip);
  ASSERT_FALSE(zero.ok());
  EXPECT_EQ(zero.status().code(), ErrorCode::kParseError);
  EXPECT_NE(zero.status().message().find("/dev/zero:1: line longer than 16 MiB"), std::string::npos)
      << zero.status().ToString();
  const std::string text = "{\"hash_ids\": [1]}\n" + std::string(kMaxTraceLineBytes + 1, ' ');
  auto parsed = ParseTrace(text, "t", skip);
  ASSERT_FALSE(parsed.ok());
  EXPECT_NE(parsed.status().message().find("t:2: line longer"), std::string::npos)
      << parsed.status().ToString();
}

TEST(TraceReaderTest, ReportsProgressUpToTheTotal) {
  size_t last_done = 0, last_total = 0;
  TraceOptions options;
  options.progress = [&](size_t done, size_t total) {
    last_done = done;
    last_total = total;
  };
  const std::string text = "{\"hash_ids\": [1]}\n";
  ASSERT_TRUE(ParseTrace(text, "t", options).ok());
  EXPECT_EQ(last_done, text.size());
  EXPECT_EQ(last_total, text.size());
}

}  // namespace
}  // namespace crescent::sim
