// The crescent CLI verbs against a real `crescent serve`: bytes in equal bytes
// out (files and stdin/stdout), the exit-code contract (0 ok, 1 not found, 2
// anything else, message on stderr), and the admin HTTP endpoint.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <regex>

#include "integration/cluster.h"
#include "integration/raw_socket.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;
using testing::Not;

class CliTest : public testing::Test {
 protected:
  void SetUp() override {
    // 10 s leases: a get and the rm run right after it (two process starts,
    // slow on a busy machine) fall inside one lease, which the tests of rm on a
    // leased key rely on.
    ServeProcess serve;
    ASSERT_TRUE(StartServe(dir_, {"--lease-ms", "10000"}, &serve));
    serve_ = std::move(serve.proc);
    master_ = serve.master;
    http_port_ = serve.http_port;
  }

  void TearDown() override {
    if (HasFailure() && serve_) {
      dir_.keep();
      std::cerr << "---- serve log (" << serve_->log_path() << "):\n" << serve_->Output() << "\n";
    }
  }

  // `crescent VERB ARGS... --master ADDRESS`.
  CommandResult Cli(std::vector<std::string> args, const std::string& stdin_data = "") {
    args.push_back("--master");
    args.push_back(master_);
    return RunCrescent(args, dir_.path(), stdin_data);
  }

  TempDir dir_;
  std::unique_ptr<Process> serve_;
  std::string master_;
  uint16_t http_port_ = 0;
};

TEST_F(CliTest, PutAndGetFilesByteIdentical) {
  for (size_t size : {size_t{1}, size_t{64 * 1024}, size_t{3 * 1024 * 1024 + 5}}) {
    std::string in = dir_.File("in" + std::to_string(size));
    std::string out = dir_.File("out" + std::to_string(size));
    std::string data = RandomString(size, static_cast<uint32_t>(size));
    ASSERT_TRUE(WriteFile(in, data));
    std::string key = "cli/file" + std::to_string(size);
    CommandResult put = Cli({"put", key, in});
    ASSERT_EQ(put.exit_code, 0) << put.err;
    EXPECT_TRUE(put.err.empty()) << put.err;
    CommandResult get = Cli({"get", key, out});
    ASSERT_EQ(get.exit_code, 0) << get.err;
    EXPECT_TRUE(ReadFileOrEmpty(out) == data) << key;
  }
}

TEST_F(CliTest, StdinAndStdoutWithDash) {
  std::string data = RandomString(200 * 1024, 11);  // binary, with NULs
  CommandResult put = Cli({"put", "cli/stdin", "-"}, data);
  ASSERT_EQ(put.exit_code, 0) << put.err;
  CommandResult get = Cli({"get", "cli/stdin", "-"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_TRUE(get.out == data);
  // No FILE means stdin / stdout as well.
  put = Cli({"put", "cli/stdin2"}, "hello\n");
  ASSERT_EQ(put.exit_code, 0) << put.err;
  get = Cli({"get", "cli/stdin2"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(get.out, "hello\n");
}

TEST_F(CliTest, MissingKeyExitsOne) {
  CommandResult get = Cli({"get", "cli/missing", dir_.File("never")});
  EXPECT_EQ(get.exit_code, 1);
  EXPECT_THAT(get.err, HasSubstr("OBJECT_NOT_FOUND"));
  EXPECT_THAT(get.err, HasSubstr("cli/missing"));
  EXPECT_TRUE(get.out.empty());

  ASSERT_EQ(Cli({"put", "cli/present", "-"}, "x").exit_code, 0);
  CommandResult exists = Cli({"exists", "cli/present", "cli/missing"});
  EXPECT_EQ(exists.exit_code, 1) << exists.err;
  EXPECT_EQ(exists.out, "cli/present\tyes\ncli/missing\tno\n");
  exists = Cli({"exists", "cli/present"});
  EXPECT_EQ(exists.exit_code, 0) << exists.err;
  EXPECT_EQ(exists.out, "cli/present\tyes\n");
}

TEST_F(CliTest, InvalidKeysExitTwo) {
  const std::string too_long(1025, 'k');
  for (const std::vector<std::string>& args : {std::vector<std::string>{"get", ""},
                                               {"get", too_long},
                                               {"exists", ""},
                                               {"exists", too_long},
                                               {"rm", too_long}}) {
    SCOPED_TRACE(args[0] + " of a " + std::to_string(args[1].size()) + "-byte key");
    CommandResult r = Cli(args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("INVALID_KEY"));
  }
  CommandResult put = Cli({"put", too_long, "-"}, "data");
  EXPECT_EQ(put.exit_code, 2);
  EXPECT_THAT(put.err, HasSubstr("INVALID_KEY"));
  EXPECT_THAT(put.err, HasSubstr("1024"));
  put = Cli({"put", "", "-"}, "data");
  EXPECT_EQ(put.exit_code, 2);
  EXPECT_THAT(put.err, HasSubstr("INVALID_KEY"));
}

TEST_F(CliTest, GetReportsAFailedWriteOfASmallValue) {
  if (::access("/dev/full", W_OK) != 0) GTEST_SKIP() << "no /dev/full";
  ASSERT_EQ(Cli({"put", "cli/small", "-"}, "hello\n").exit_code, 0);
  // Six bytes fit in a stream's buffer; the failure only shows at flush/close.
  CommandResult get = Cli({"get", "cli/small", "/dev/full"});
  EXPECT_EQ(get.exit_code, 2) << get.err;
  EXPECT_THAT(get.err, HasSubstr("IO_ERROR"));
  EXPECT_THAT(get.err, HasSubstr("cannot write /dev/full"));
  // Stdout that cannot take the bytes fails the same way.
  CommandResult r =
      RunCommand({"/bin/sh", "-c", "exec \"$0\" get cli/small - --master \"$1\" >/dev/full",
                  CrescentBin(), master_},
                 "", dir_.path(), milliseconds(60000));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("cannot write to stdout"));
}

TEST_F(CliTest, UnknownCommandBadTimeoutAndAClosedPipeExitTwo) {
  CommandResult r = RunCrescent({"frob", "k"}, dir_.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("unknown command 'frob'"));
  EXPECT_THAT(r.err, HasSubstr("put, get"));
  r = RunCrescent({"get", "k", "--master", master_, "--timeout-ms", "0"}, dir_.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--timeout-ms"));

  // A reader that stops early (head) closes the pipe: an error exit, not death
  // by SIGPIPE. The value is far larger than a pipe's buffer.
  std::string value(8 << 20, 'p');
  ASSERT_EQ(Cli({"put", "cli/piped", "-"}, value).exit_code, 0);
  r = RunCommand({"/bin/bash", "-c",
                  "set -o pipefail; \"$0\" get cli/piped - --master \"$1\" | head -c 10 "
                  ">/dev/null",
                  CrescentBin(), master_},
                 "", dir_.path(), milliseconds(60000));
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("Broken pipe"));
}

// A get into a file that fails half way (here a file size limit: the CLI
// ignores SIGXFSZ, so write() reports EFBIG) leaves the file as it was and no
// partial or temporary file behind; a later get replaces it whole, keeping its
// mode.
TEST_F(CliTest, FailedGetLeavesTheFileAsItWas) {
  std::string value(3 << 20, 'v');
  for (size_t i = 0; i < value.size(); i += 4093) value[i] = static_cast<char>(i);
  ASSERT_EQ(Cli({"put", "cli/big", "-"}, value).exit_code, 0);
  const std::string out = dir_.File("out");
  ASSERT_TRUE(WriteFile(out, "old contents"));
  ASSERT_EQ(::chmod(out.c_str(), 0640), 0);
  CommandResult get =
      RunCommand({"/bin/sh", "-c", "ulimit -f 1 && exec \"$0\" get cli/big \"$1\" --master \"$2\"",
                  CrescentBin(), out, master_},
                 "", dir_.path(), milliseconds(60000));
  EXPECT_EQ(get.exit_code, 2) << get.err;
  EXPECT_THAT(get.err, HasSubstr("cannot write " + out));
  EXPECT_EQ(ReadFileOrEmpty(out), "old contents");
  auto leftovers = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(dir_.path())) {
      if (e.path().filename().string().find(".crescent-") != std::string::npos) {
        names.push_back(e.path().filename().string());
      }
    }
    return names;
  };
  EXPECT_THAT(leftovers(), testing::IsEmpty());

  get = Cli({"get", "cli/big", out});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(ReadFileOrEmpty(out), value);
  struct stat st {};
  ASSERT_EQ(::stat(out.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  EXPECT_THAT(leftovers(), testing::IsEmpty());

  // A file with another hard link is written in place, as before: both names
  // show the new value (a rename would have left the other with the old one).
  ASSERT_EQ(Cli({"put", "cli/small-value", "-"}, "new").exit_code, 0);
  const std::string other = dir_.File("out-link");
  ASSERT_EQ(::link(out.c_str(), other.c_str()), 0) << std::strerror(errno);
  get = Cli({"get", "cli/small-value", out});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_EQ(ReadFileOrEmpty(out), "new");
  EXPECT_EQ(ReadFileOrEmpty(other), "new");
}

TEST_F(CliTest, PutOfADirectoryIsAnErrorAndStoresNothing) {
  std::string dir = dir_.File("a-directory");
  ASSERT_EQ(::mkdir(dir.c_str(), 0755), 0);
  CommandResult put = Cli({"put", "cli/dir", dir});
  EXPECT_EQ(put.exit_code, 2) << put.err;
  EXPECT_THAT(put.err, HasSubstr("IO_ERROR"));
  EXPECT_THAT(put.err, HasSubstr("cannot read " + dir));
  EXPECT_THAT(put.err, HasSubstr("directory"));
  // A directory on stdin too.
  put = RunCommand({"/bin/sh", "-c", "exec \"$0\" put cli/dir - --master \"$1\" <\"$2\"",
                    CrescentBin(), master_, dir},
                   "", dir_.path(), milliseconds(60000));
  EXPECT_EQ(put.exit_code, 2) << put.err;
  EXPECT_THAT(put.err, HasSubstr("IO_ERROR"));
  EXPECT_THAT(put.err, HasSubstr("directory"));
  CommandResult exists = Cli({"exists", "cli/dir"});
  EXPECT_EQ(exists.exit_code, 1) << exists.err;
  EXPECT_EQ(exists.out, "cli/dir\tno\n");
}

// A value larger than the cluster takes (its 64 MiB segment) is refused
// without being held: a file by its size, before a byte is read (the sparse
// 1 GiB file would not fit under the limit), a pipe once more than 64 MiB
// have come. Put fails (exit 2) and stores nothing, never the part that was
// read. Only the CLI runs under the address-space limit.
TEST_F(CliTest, PutOfAValueLargerThanTheClusterTakesStoresNothing) {
  constexpr const char* kLimitKib = "262144";  // 256 MiB
  std::string big = dir_.File("sparse");
  ASSERT_TRUE(WriteFile(big, ""));
  ASSERT_EQ(::truncate(big.c_str(), off_t{1} << 30), 0) << std::strerror(errno);  // 1 GiB
  CommandResult put = RunCommand(
      {"/bin/sh", "-c", "ulimit -v $0 && exec \"$1\" put cli/oom-file \"$2\" --master \"$3\"",
       kLimitKib, CrescentBin(), big, master_},
      "", dir_.path(), milliseconds(60000));
  EXPECT_EQ(put.exit_code, 2) << put.err;
  EXPECT_THAT(put.err, HasSubstr("INVALID_SIZE"));
  EXPECT_THAT(put.err, HasSubstr(big + " is 1.0 GiB, 1073741824 bytes: larger than the largest "
                                       "value the cluster accepts (64.0 MiB, 67108864 bytes)"));
  put = RunCommand({"/bin/sh", "-c",
                    "ulimit -v $0 && head -c 1073741824 /dev/zero | exec \"$1\" put cli/oom-pipe - "
                    "--master \"$2\"",
                    kLimitKib, CrescentBin(), master_},
                   "", dir_.path(), milliseconds(60000));
  EXPECT_EQ(put.exit_code, 2) << put.err;
  EXPECT_THAT(put.err, HasSubstr("INVALID_SIZE"));
  EXPECT_THAT(put.err, HasSubstr("stdin holds more than the largest value the cluster accepts"));
  CommandResult exists = Cli({"exists", "cli/oom-file", "cli/oom-pipe"});
  EXPECT_EQ(exists.exit_code, 1) << exists.err;
  EXPECT_EQ(exists.out, "cli/oom-file\tno\ncli/oom-pipe\tno\n");
}

// Under an address-space limit some of gRPC's threads may not start; the
// verb must still finish and exit. (Tearing the client down used to wait
// forever for such a thread: `get` under `ulimit -v 262144` hung after
// writing its output.)
TEST_F(CliTest, VerbsFinishUnderATightAddressSpaceLimit) {
  ASSERT_EQ(Cli({"put", "cli/tiny", "-"}, "tiny value").exit_code, 0);
  for (const char* kib : {"262144", "524288"}) {
    CommandResult r =
        RunCommand({"/bin/sh", "-c", "ulimit -v $0 && exec \"$1\" get cli/tiny - --master \"$2\"",
                    kib, CrescentBin(), master_},
                   "", dir_.path(), milliseconds(30000));
    EXPECT_EQ(r.exit_code, 0) << kib << " KiB: " << r.err;
    EXPECT_EQ(r.out, "tiny value") << kib << " KiB";
  }
}

TEST_F(CliTest, BadOrUnreachableMasterExitsTwo) {
  const std::string closed = "127.0.0.1:" + std::to_string(PickFreePort());
  CommandResult r =
      RunCrescent({"get", "k", "--master", closed, "--timeout-ms", "1000"}, dir_.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("UNAVAILABLE"));
  EXPECT_THAT(r.err, HasSubstr(closed));
  EXPECT_TRUE(r.out.empty());

  // A malformed address is a usage error, not "unreachable" (gRPC would wrap
  // port 99999 to another port and retry it).
  for (const std::string& address : {std::string("127.0.0.1"), std::string("127.0.0.1:notaport"),
                                     std::string("127.0.0.1:99999"), std::string(":50051")}) {
    SCOPED_TRACE("--master " + address);
    r = RunCrescent({"get", "k", "--master", address}, dir_.path());
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT"));
    EXPECT_THAT(r.err, HasSubstr("'" + address + "'"));
    EXPECT_TRUE(r.out.empty());
  }
  // A store node with a malformed --master refuses to start.
  WriteFile(dir_.File("secret"), "integration-test-secret-0123456789abcdef");
  r = RunCrescent({"store", "--master", "127.0.0.1:99999", "--secret-file", dir_.File("secret"),
                   "--segment-size", "1MiB"},
                  dir_.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("invalid master address"));
  // So does one asked for no data-port threads.
  r = RunCrescent({"store", "--master", master_, "--secret-file", dir_.File("secret"),
                   "--segment-size", "1MiB", "--data-threads", "0"},
                  dir_.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--data-threads"));
  // And one asked for a congestion control the kernel does not have.
  r = RunCrescent({"store", "--master", master_, "--secret-file", dir_.File("secret"),
                   "--segment-size", "1MiB", "--tcp-congestion", "no-such-cc"},
                  dir_.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("--tcp-congestion"));
  EXPECT_THAT(r.err, HasSubstr("no-such-cc"));
  // And one whose cluster secret is not the master's: it could mount, but no
  // capability the master signs would pass on it, so every put placed there
  // would fail. It refuses to start, and leaves no segment behind.
  r = RunCrescent({"store", "--master", master_, "--secret-file", dir_.File("secret"),
                   "--segment-size", "1MiB", "--node-id", "wrong-secret"},
                  dir_.path());
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_THAT(r.err, HasSubstr("another cluster secret"));
  CommandResult stat = Cli({"stat"});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_THAT(stat.out, Not(HasSubstr("wrong-secret")));
}

TEST_F(CliTest, LsStatAndRm) {
  for (const char* key : {"cli/ls/b", "cli/ls/a", "cli/ls/c", "cli/other"}) {
    ASSERT_EQ(Cli({"put", key, "-"}, key).exit_code, 0);
  }
  CommandResult ls = Cli({"ls", "cli/ls/"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out, "cli/ls/a\ncli/ls/b\ncli/ls/c\n");

  CommandResult stat = Cli({"stat"});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_THAT(stat.out, HasSubstr("objects      4 (0 puts pending)"));
  EXPECT_THAT(stat.out, HasSubstr("segments     1"));
  EXPECT_THAT(stat.out, HasSubstr(master_));

  // A key just read is leased: a plain rm refuses (exit 2, saying why), --force wins.
  ASSERT_EQ(Cli({"get", "cli/ls/a"}).exit_code, 0);
  CommandResult rm = Cli({"rm", "cli/ls/a"});
  EXPECT_EQ(rm.exit_code, 2);
  EXPECT_THAT(rm.err, HasSubstr("OBJECT_LEASED"));
  EXPECT_THAT(rm.err, HasSubstr("--force"));
  rm = Cli({"rm", "cli/ls/a", "--force"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(Cli({"get", "cli/ls/a"}).exit_code, 1);
  // An unread key goes without --force; a missing one is "not found".
  EXPECT_EQ(Cli({"rm", "cli/ls/b"}).exit_code, 0);
  EXPECT_EQ(Cli({"rm", "cli/ls/b"}).exit_code, 1);

  rm = Cli({"rm", "--prefix", "cli/ls/"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(rm.out, "removed 1\n");
  ls = Cli({"ls"});
  ASSERT_EQ(ls.exit_code, 0);
  EXPECT_EQ(ls.out, "cli/other\n");
}

// ls says on stderr when --limit cut the list short; rm --prefix says (and
// exits 2) when keys a reader holds a lease on were left.
TEST_F(CliTest, LsSaysWhenCutShortAndRmPrefixReportsLeasedKeys) {
  for (const char* key : {"cli/ns/x", "cli/ns/y", "cli/ns/z"}) {
    ASSERT_EQ(Cli({"put", key, "-"}, key).exit_code, 0);
  }
  CommandResult ls = Cli({"ls", "cli/ns/", "--limit", "2"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out, "cli/ns/x\ncli/ns/y\n");
  EXPECT_THAT(ls.err, HasSubstr("first 2 keys; more are stored"));
  ls = Cli({"ls", "cli/ns/", "--limit", "3"});
  ASSERT_EQ(ls.exit_code, 0) << ls.err;
  EXPECT_EQ(ls.out, "cli/ns/x\ncli/ns/y\ncli/ns/z\n");
  EXPECT_EQ(ls.err, "");

  ASSERT_EQ(Cli({"get", "cli/ns/y"}).exit_code, 0);  // leases it
  CommandResult rm = Cli({"rm", "--prefix", "cli/ns/"});
  EXPECT_EQ(rm.exit_code, 2) << rm.err;
  EXPECT_EQ(rm.out, "removed 2\n");
  EXPECT_THAT(rm.err, HasSubstr("OBJECT_LEASED"));
  EXPECT_THAT(rm.err, HasSubstr("1 key under 'cli/ns/' left"));
  EXPECT_THAT(rm.err, HasSubstr("--force"));
  EXPECT_EQ(Cli({"ls", "cli/ns/"}).out, "cli/ns/y\n");
  rm = Cli({"rm", "--prefix", "cli/ns/", "--force"});
  EXPECT_EQ(rm.exit_code, 0) << rm.err;
  EXPECT_EQ(rm.out, "removed 1\n");
  EXPECT_EQ(Cli({"ls", "cli/ns/"}).out, "");
}

TEST_F(CliTest, MetricsAndHealthOverHttp) {
  ASSERT_EQ(Cli({"put", "cli/metric", "-"}, "m").exit_code, 0);
  ASSERT_EQ(Cli({"get", "cli/metric"}).exit_code, 0);
  httplib::Client http("127.0.0.1", http_port_);
  http.set_connection_timeout(5);
  http.set_read_timeout(5);
  auto health = http.Get("/health");
  ASSERT_TRUE(health) << httplib::to_string(health.error());
  EXPECT_EQ(health->status, 200);
  auto metrics = http.Get("/metrics");
  ASSERT_TRUE(metrics) << httplib::to_string(metrics.error());
  EXPECT_EQ(metrics->status, 200);
  EXPECT_THAT(metrics->body, HasSubstr("crescent_requests_total"));
  EXPECT_THAT(metrics->body, HasSubstr("crescent_requests_total{op=\"put_start\"}"));
  auto missing = http.Get("/nope");
  ASSERT_TRUE(missing);
  EXPECT_EQ(missing->status, 404);
}

// top reads the admin port that the master names (its Stats reply), on the
// master's host, like every client verb given --master; --http names the port
// outright instead, and both at once is a usage error.
TEST_F(CliTest, TopFindsTheAdminPortThroughTheMaster) {
  ASSERT_EQ(Cli({"put", "cli/top", "-"}, "t").exit_code, 0);
  CommandResult top = Cli({"top", "--once"});
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("crescent top - master "));
  EXPECT_THAT(top.out, HasSubstr("objects 1 "));

  const std::string http = "127.0.0.1:" + std::to_string(http_port_);
  CommandResult direct = RunCrescent({"top", "--once", "--http", http}, dir_.path());
  ASSERT_EQ(direct.exit_code, 0) << direct.err;
  EXPECT_THAT(direct.out, HasSubstr("objects 1 "));

  CommandResult both = Cli({"top", "--once", "--http", http});
  EXPECT_EQ(both.exit_code, 2) << both.err;
  EXPECT_THAT(both.err, HasSubstr("--http"));

  const std::string closed = "127.0.0.1:" + std::to_string(PickFreePort());
  CommandResult unreachable =
      RunCrescent({"top", "--once", "--master", closed, "--timeout-ms", "1000"}, dir_.path());
  EXPECT_EQ(unreachable.exit_code, 2) << unreachable.err;
  EXPECT_THAT(unreachable.err, HasSubstr(closed));
}

// A master without an admin port says so, rather than top trying a port.
TEST_F(CliTest, TopSaysWhenTheMasterServesNoAdminPort) {
  ASSERT_TRUE(WriteFile(dir_.File("master-secret"), "integration-test-secret-0123456789abcdef"));
  Process master({CrescentBin(), "master", "--port", "0", "--http-port", "0", "--secret-file",
                  dir_.File("master-secret")},
                 dir_.File("no-http-master.log"));
  auto address = master.WaitForMatch(std::regex(R"(listening on ([0-9.]+:[0-9]+))"), kStartTimeout);
  ASSERT_TRUE(address.has_value()) << master.Output();
  CommandResult top = RunCrescent({"top", "--once", "--master", (*address)[1]}, dir_.path());
  EXPECT_EQ(top.exit_code, 2) << top.err;
  EXPECT_THAT(top.err, HasSubstr("serves no admin HTTP port"));
}

TEST_F(CliTest, ServeExitsZeroOnSigterm) {
  serve_->Kill(SIGTERM);
  std::optional<ExitStatus> exit = serve_->Wait(kExitTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->exited && exit->code == 0) << exit->ToString();
  EXPECT_THAT(serve_->Output(), HasSubstr("shutting down"));
}

TEST_F(CliTest, ServeExitsZeroOnCtrlC) {
  ASSERT_EQ(Cli({"put", "cli/before-ctrl-c", "-"}, "x").exit_code, 0);
  serve_->Kill(SIGINT);
  std::optional<ExitStatus> exit = serve_->Wait(kExitTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->exited && exit->code == 0) << exit->ToString();
  EXPECT_THAT(serve_->Output(), HasSubstr("signal 2, shutting down"));
}

}  // namespace
}  // namespace crescent::itest
