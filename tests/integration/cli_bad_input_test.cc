// The crescent CLI given what a new user might try: inputs without end or
// larger than the cluster (bounded in memory and time, and refused before bytes
// move), more keys than one reply holds, keys that are not plain text, stdout
// that cannot be written, foot-guns (rm of everything, ambiguous size units,
// negative counts, misspelt segments), and failures that must be told in the
// user's terms rather than in gRPC's log lines or a number's limits.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "integration/cluster.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;
using testing::Not;

class CliBadInputTest : public WithCluster<testing::Test> {
 protected:
  void SetUp() override {
    ClusterOptions o;
    o.stores = 1;
    o.segment_size = "64MiB";
    o.master_flags = {"--lease-ms", "10000"};  // a get's lease outlasts the next command
    StartAndConnect(o, /*use_shm=*/false);
  }

  // `crescent ARGS... --master ADDRESS`.
  CommandResult Cli(std::vector<std::string> args, const std::string& stdin_data = "") {
    args.push_back("--master");
    args.push_back(cluster_->master_address());
    return RunCrescent(args, dir_.path(), stdin_data);
  }
  // `sh -c SCRIPT` with $C the crescent binary and $M the master's address.
  CommandResult Sh(const std::string& script) {
    return RunCommand({"/bin/sh", "-c", "C=\"$0\"; M=\"$1\"; " + script, CrescentBin(),
                       cluster_->master_address()},
                      "", dir_.path(), milliseconds(120000));
  }

  TempDir dir_;
};

// Inputs without end (/dev/zero, an endless pipe) and values larger than the
// cluster take bounded memory and time: under a 256 MiB address-space limit
// each put ends with INVALID_SIZE, and nothing is stored.
TEST_F(CliBadInputTest, PutOfAnEndlessOrOversizedInputIsRefusedWithinBounds) {
  const std::string limit = "ulimit -v 262144 && ";
  CommandResult r = Sh(limit + "exec \"$C\" put k/zero /dev/zero --master \"$M\"");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("INVALID_SIZE: /dev/zero holds more than the largest value the "
                               "cluster accepts (64.0 MiB, 67108864 bytes)"));
  r = Sh(limit + "yes | exec \"$C\" put k/endless - --master \"$M\"");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("INVALID_SIZE: stdin holds more than the largest value"));
  const std::string sparse = dir_.File("sparse");
  ASSERT_TRUE(WriteFile(sparse, ""));
  ASSERT_EQ(::truncate(sparse.c_str(), off_t{2} << 30), 0) << std::strerror(errno);  // 2 GiB
  r = Sh(limit + "exec \"$C\" put k/file " + sparse + " --master \"$M\"");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr(sparse + " is 2.0 GiB, 2147483648 bytes: larger than the largest "
                                        "value the cluster accepts"));
  r = Cli({"exists", "k/zero", "k/endless", "k/file"});
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.out, "k/zero\tno\nk/endless\tno\nk/file\tno\n");
  // What fits still goes in.
  r = Cli({"put", "k/fits", "-"}, std::string(1 << 20, 'f'));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

// A trace without newlines (/dev/zero) ends with an error naming the line,
// within a 1 GiB address-space limit, in sim and in replay; so does a replay
// page larger than the cluster takes, before any buffer is allocated.
TEST_F(CliBadInputTest, TraceReadersAndReplayPagesAreBounded) {
  const std::string limit = "ulimit -v 1048576 && ";
  for (const std::string& verb : {std::string("sim"), std::string("replay")}) {
    CommandResult r = Sh(limit + "exec \"$C\" " + verb + " --trace /dev/zero");
    EXPECT_EQ(r.exit_code, 2) << verb << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("/dev/zero:1: line longer than 16 MiB")) << verb;
  }
  const std::string trace = dir_.File("t.jsonl");
  ASSERT_TRUE(WriteFile(trace, "{\"hash_ids\": [1, 2, 3]}\n"));
  CommandResult r =
      Sh(limit + "exec \"$C\" replay --trace " + trace + " --page-size 2GiB --master \"$M\"");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("a page of 2147483648 bytes (2048 MiB) is larger than the largest "
                               "value the cluster takes, 67108864 bytes (64 MiB)"));
}

// sim --copies/--nodes: the scaled run prints its node line; --nodes with
// --json or --engine master is refused with a message, not ignored.
TEST_F(CliBadInputTest, SimNodesPrintsItsLineAndRefusesWhatItCannotServe) {
  const std::string trace = dir_.File("nodes.jsonl");
  ASSERT_TRUE(WriteFile(trace,
                        "{\"timestamp\": 0, \"hash_ids\": [1, 2, 3]}\n"
                        "{\"timestamp\": 1000, \"hash_ids\": [1, 2, 4]}\n"));
  CommandResult ok =
      Sh("exec \"$C\" sim --trace " + trace + " --capacity 100% --copies 3 --nodes 4 --policy lru");
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_THAT(ok.out, HasSubstr("6 requests, 18 block refs, 12 distinct blocks")) << ok.out;
  EXPECT_THAT(ok.out, HasSubstr("lru @ 100%: 4 nodes, busiest over mean: reads ")) << ok.out;
  EXPECT_THAT(ok.out, HasSubstr("master at the trace's pace: 6 requests/s")) << ok.out;
  for (const std::string& extra : {std::string("--json"), std::string("--engine master")}) {
    CommandResult r = Sh("exec \"$C\" sim --trace " + trace + " --nodes 4 " + extra);
    EXPECT_EQ(r.exit_code, 2) << extra;
    EXPECT_THAT(r.err, HasSubstr("--nodes prints its own lines")) << extra;
  }
}

// More keys than one List reply holds (70,000 keys of 1 KB: 70 MB, over the
// 64 MiB message limit) are all listed by ls --limit 0, in key order, paged
// through the master's cursor; --limit cuts across pages exactly.
TEST_F(CliBadInputTest, LsListsMoreKeysThanOneReplyHolds) {
  constexpr size_t kKeys = 70000;
  std::vector<std::string> keys;
  for (size_t i = 0; i < kKeys; ++i) {
    std::string k = "many/" + std::to_string(1000000 + i) + "/";
    keys.push_back(k + std::string(1000 - k.size(), 'x'));
  }
  const std::vector<std::byte> one(1, std::byte{1});
  for (size_t i = 0; i < kKeys; i += 1000) {
    std::vector<std::string> part(keys.begin() + i, keys.begin() + i + 1000);
    std::vector<std::span<const std::byte>> values(part.size(), one);
    for (const Status& s : client_->BatchPut(part, values)) ASSERT_TRUE(s.ok()) << s.ToString();
  }
  CommandResult ls = Cli({"ls", "many/", "--limit", "0"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.err, "");
  std::string want;
  for (const std::string& k : keys) want += k + "\n";
  EXPECT_TRUE(ls.out == want) << "listed " << std::count(ls.out.begin(), ls.out.end(), '\n')
                              << " keys of " << kKeys;
  ls = Cli({"ls", "many/", "--limit", "5000"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(std::count(ls.out.begin(), ls.out.end(), '\n'), 5000);
  EXPECT_TRUE(ls.out == want.substr(0, 5000 * 1001));
  EXPECT_THAT(ls.err, HasSubstr("showing the first 5000 keys; more are stored"));
}

// Keys are byte strings: ls and exists escape what is not printable ASCII,
// so one key is one line; ls -0 prints them raw, each ended by a NUL.
TEST_F(CliBadInputTest, KeysThatAreNotPlainTextPrintUnambiguously) {
  const std::vector<std::string> keys = {"k/a\nk/b", "k/back\\slash", "k/esc\x1b[31m",
                                         "k/tab\there", "k/\xc3\xa9"};
  for (const std::string& k : keys) ASSERT_EQ(Cli({"put", k, "-"}, "v").exit_code, 0) << k;
  CommandResult ls = Cli({"ls", "k/"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out,  // in key order: bytes compare unsigned, so \xc3 comes last
            "k/a\\x0ak/b\n"
            "k/back\\\\slash\n"
            "k/esc\\x1b[31m\n"
            "k/tab\\x09here\n"
            "k/\\xc3\\xa9\n");
  ls = Cli({"ls", "k/", "-0"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  std::string raw;
  std::vector<std::string> sorted = keys;
  std::sort(sorted.begin(), sorted.end());
  for (const std::string& k : sorted) raw += k + '\0';
  EXPECT_EQ(ls.out, raw);
  CommandResult exists = Cli({"exists", "k/a\nk/b", "k/tab\there"});
  EXPECT_EQ(exists.exit_code, 0) << exists.err;
  EXPECT_EQ(exists.out, "k/a\\x0ak/b\tyes\nk/tab\\x09here\tyes\n");
}

// ls, stat and exists exit 2 like get when their output cannot be written.
TEST_F(CliBadInputTest, VerbsWhoseStdoutCannotBeWrittenExitTwo) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  ASSERT_EQ(Cli({"put", "full/k", "-"}, "v").exit_code, 0);
  for (const std::string& verb : {std::string("ls"), std::string("stat"),
                                  std::string("exists full/k"), std::string("rm --prefix full/")}) {
    CommandResult r = Sh("exec \"$C\" " + verb + " --master \"$M\" >/dev/full");
    EXPECT_EQ(r.exit_code, 2) << verb << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("cannot write to stdout: No space left on device")) << verb;
  }
}

// After rm --force of an object a reader holds, stat says that its bytes are
// still in use, and why.
TEST_F(CliBadInputTest, StatShowsBytesHeldForRemovedObjects) {
  ASSERT_EQ(Cli({"put", "held/k", "-"}, std::string(2 << 20, 'h')).exit_code, 0);
  ASSERT_EQ(Cli({"get", "held/k", dir_.File("out")}).exit_code, 0);  // leases it for 10 s
  ASSERT_EQ(Cli({"rm", "held/k", "--force"}).exit_code, 0);
  CommandResult stat = Cli({"stat"});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_THAT(stat.out, HasSubstr("objects      0 (0 puts pending)"));
  EXPECT_THAT(stat.out,
              HasSubstr("used         2.0 MiB of 64.0 MiB (2.0 MiB of it held for removed "
                        "objects until their readers' leases end)"));
  EXPECT_THAT(stat.out, HasSubstr("largest      64.0 MiB"));
}

// An empty prefix is refused; removing everything takes rm --all, and --yes
// when stdin is not a terminal (here: a pipe).
TEST_F(CliBadInputTest, RemovingEverythingTakesRmAll) {
  for (const char* k : {"a/1", "b/1"}) ASSERT_EQ(Cli({"put", k, "-"}, "v").exit_code, 0);
  CommandResult rm = Cli({"rm", "--prefix", ""});
  EXPECT_EQ(rm.exit_code, 2);
  EXPECT_THAT(rm.err,
              HasSubstr("an empty prefix would remove every key; to do that, use rm --all"));
  rm = Cli({"rm"});
  EXPECT_EQ(rm.exit_code, 2);
  EXPECT_THAT(rm.err, HasSubstr("give KEY, --prefix PREFIX, or --all"));
  rm = Cli({"rm", "--all", "a/1"});
  EXPECT_EQ(rm.exit_code, 2);
  EXPECT_THAT(rm.err, HasSubstr("--all takes no KEY"));
  rm = Cli({"rm", "--all"}, "y\n");
  EXPECT_EQ(rm.exit_code, 2);
  EXPECT_THAT(rm.err, HasSubstr("give --yes with it when stdin is not a terminal"));
  EXPECT_EQ(Cli({"ls"}).out, "a/1\nb/1\n");
  rm = Cli({"rm", "--all", "--yes"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(rm.out, "removed 2\n");
  EXPECT_EQ(Cli({"ls"}).out, "");
}

// One parser reads every size flag: K, M, G and T, also written KB/KiB and so
// on, in any case, are powers of 1024 (1GB is 1 GiB, not 953.7 MiB); what it
// refuses is named with the flag and the forms it takes.
TEST_F(CliBadInputTest, SizeFlagsTakeTheUsualUnitsAsPowersOf1024) {
  Process store(
      {CrescentBin(), "store", "--master", cluster_->master_address(), "--secret-file",
       cluster_->secret_file(), "--segment-size", "3mb", "--node-id", "units", "--no-warm-pages"},
      dir_.File("store.log"));
  ASSERT_TRUE(store.started());
  EXPECT_TRUE(store.WaitForLine("ready", kStartTimeout)) << store.Output();
  EXPECT_THAT(store.Output(), HasSubstr("segment units/dram0 (3.0 MiB)"));
  for (const char* bad : {"1X", "1.5G", "-1G", "1GiBs", "99999999999T"}) {
    CommandResult r = RunCrescent({"serve", "--segment-size", bad}, dir_.path());
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_THAT(r.err, HasSubstr("--segment-size: ")) << bad;
    EXPECT_THAT(r.err, HasSubstr(bad)) << bad;
  }
  CommandResult r = RunCrescent({"serve", "--segment-size", "1X"}, dir_.path());
  EXPECT_THAT(r.err, HasSubstr("K, M, G or T, also written KB/KiB, MB/MiB, GB/GiB, TB/TiB (all "
                               "powers of 1024)"));
  r = RunCrescent({"serve", "--help"}, dir_.path());
  EXPECT_THAT(r.out, HasSubstr("powers of"));
}

// Counts and choices that mean nothing are refused in the user's terms: a
// negative --limit (read as 2^64 - 1 before), a segment that is not mounted
// (ignored before), a --speed of 0 (which wrote out the largest double).
TEST_F(CliBadInputTest, MeaninglessCountsAndNamesAreRefusedClearly) {
  CommandResult r = Cli({"ls", "--limit", "-1"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--limit: must be a whole number, 0 or more, not '-1'"));
  r = Cli({"put", "seg/k", "-", "--segment", "nonexistent/dram0"}, "v");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("SEGMENT_NOT_FOUND: --segment nonexistent/dram0: no such segment "
                               "is mounted (mounted: " +
                               cluster_->store(0).segment + ")"));
  EXPECT_EQ(Cli({"exists", "seg/k"}).exit_code, 1);
  EXPECT_EQ(Cli({"put", "seg/k", "-", "--segment", cluster_->store(0).segment}, "v").exit_code, 0);
  ASSERT_TRUE(WriteFile(dir_.File("t.jsonl"), "{\"hash_ids\": [1]}\n"));
  r = RunCrescent({"replay", "--trace", dir_.File("t.jsonl"), "--speed", "0"}, dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--speed: must be a number greater than 0, not '0' (to send "
                               "requests as fast as they go, use --max-rate)"));
  EXPECT_THAT(r.err, Not(HasSubstr("17976931348623157")));
}

// Failures to start are told in our words, with the reason, and none of
// gRPC's own log lines ("E1201 ... chttp2_server.cc:1045] ...") reach the
// terminal; a secret file that is a directory is called one.
TEST_F(CliBadInputTest, StartFailuresSayWhyWithoutGrpcLogLines) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--unix-socket", "/nonexistent-dir/master.sock"},
       "cannot listen on unix:/nonexistent-dir/master.sock: No such file or directory"},
      {{"--unix-socket", "/tmp/" + std::string(120, 's')},
       "the path is 125 bytes; a Unix socket path takes 1 to 107"},
      {{"--host", "192.0.2.1", "--insecure"},
       "cannot listen on 192.0.2.1:0: Cannot assign requested address"},
  };
  for (const auto& [flags, reason] : cases) {
    std::vector<std::string> args = {"serve", "--port", "0", "--http-port", "0"};
    args.insert(args.end(), flags.begin(), flags.end());
    CommandResult r = RunCrescent(args, dir_.path());
    EXPECT_EQ(r.exit_code, 2) << flags[1];
    EXPECT_THAT(r.err, HasSubstr(reason)) << flags[1];
    EXPECT_THAT(r.err, Not(HasSubstr(".cc:"))) << flags[1];  // a gRPC log line's source file
  }
  CommandResult r =
      RunCrescent({"master", "--port", "0", "--secret-file", dir_.path()}, dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err,
              HasSubstr("cluster secret file " + dir_.path() + " is a directory, not a file"));
  EXPECT_THAT(r.err, Not(HasSubstr("16 bytes")));
}

}  // namespace
}  // namespace crescent::itest
