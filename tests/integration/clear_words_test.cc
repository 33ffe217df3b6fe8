// Small mistakes told in clear words, through the real `crescent` binary: a
// flag's help and its check agree, a file given twice is called that, a
// persistent file reserved but never initialised is taken as new, names and
// keys from elsewhere are printed escaped, a closed port says so, a size that
// is not a whole unit is printed exactly, durability flags without a data
// directory are refused, and an IPv6 store node advertises a bracketed address.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <regex>

#include "common/listen_check.h"
#include "integration/cluster.h"
#include "integration/raw_socket.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;
using testing::Not;

class ClearWordsTest : public WithCluster<testing::Test> {
 protected:
  void SetUp() override {
    StartAndConnect({.stores = 1, .segment_size = "16MiB", .store_shm = false},
                    /*use_shm=*/false);
  }

  // `crescent ARGS... --master ADDRESS`.
  CommandResult Cli(std::vector<std::string> args, const std::string& stdin_data = "") {
    args.push_back("--master");
    args.push_back(cluster_->master_address());
    return RunCrescent(args, dir_.path(), stdin_data);
  }

  // `crescent store` with EXTRA flags, joined to the cluster's master (or to
  // `master`); not waited for.
  std::unique_ptr<Process> Store(const std::vector<std::string>& extra, const std::string& log,
                                 const std::string& segment_size = "4MiB",
                                 const std::string& master = "") {
    std::vector<std::string> argv = {
        CrescentBin(),     "store",
        "--master",        master.empty() ? cluster_->master_address() : master,
        "--secret-file",   cluster_->secret_file(),
        "--segment-size",  segment_size,
        "--no-warm-pages", "--no-shm"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<Process>(argv, dir_.File(log));
  }

  // The same, run to completion (for stores that must refuse to start).
  CommandResult StoreCommand(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"store",
                                     "--master",
                                     cluster_->master_address(),
                                     "--secret-file",
                                     cluster_->secret_file(),
                                     "--segment-size",
                                     "4MiB",
                                     "--no-warm-pages"};
    args.insert(args.end(), extra.begin(), extra.end());
    return RunCrescent(args, dir_.path());
  }

  TempDir dir_;
};

// --help states the range that the check enforces, from one constant: 65535
// is taken, 65536 refused by the flag's own check (it used to pass the flag
// and fail at start, against a help text that said 1 - 1048576).
TEST_F(ClearWordsTest, MaxKeyLengthHelpAndCheckAgree) {
  CommandResult help = RunCrescent({"master", "--help"}, dir_.path());
  ASSERT_EQ(help.exit_code, 0) << help.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(help.out, m, std::regex(R"(--max-key-length[^\n]*\n?[^\n]*)")))
      << help.out;
  EXPECT_THAT(m.str(), HasSubstr("[1 - 65535]"));
  CommandResult r = RunCrescent({"master", "--port", "0", "--http-port", "0", "--secret-file",
                                 cluster_->secret_file(), "--max-key-length", "65536"},
                                dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--max-key-length: Value 65536 not in range 1 to 65535"));
  Process ok({CrescentBin(), "master", "--port", "0", "--http-port", "0", "--secret-file",
              cluster_->secret_file(), "--max-key-length", "65535"},
             dir_.File("max-key.log"));
  EXPECT_TRUE(ok.WaitForLine("ready", kStartTimeout)) << ok.Output();
}

// The same file given twice to one node is called that, under any spelling of
// its path (it used to read "held by another process").
TEST_F(ClearWordsTest, APersistentFileGivenTwiceIsCalledThat) {
  const std::string file = dir_.File("twice.pmem");
  const std::string other_spelling = dir_.path() + "/./twice.pmem";
  CommandResult r = StoreCommand({"--pmem", file + ":8MiB", "--pmem", file + ":8MiB"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("persistent segment file " + file + " is given twice"));
  EXPECT_THAT(r.err, Not(HasSubstr("held by another process")));
  r = StoreCommand({"--pmem", file + ":8MiB", "--pmem", other_spelling + ":8MiB"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("is given twice (as " + file + " and " + other_spelling + ")"));
}

// A file of the right size that is all zero (a start reserved it and stopped
// before writing its header) is taken as new and initialised; one whose data
// is not zero is still refused as foreign.
TEST_F(ClearWordsTest, AZeroFilledPersistentFileIsTakenAsNew) {
  const std::string file = dir_.File("zero.pmem");
  ASSERT_TRUE(WriteFile(file, ""));
  ASSERT_EQ(::truncate(file.c_str(), 8 << 20), 0) << std::strerror(errno);
  auto store = Store({"--node-id", "zero", "--pmem", file + ":8MiB"}, "zero.log");
  ASSERT_TRUE(store->WaitForLine("ready", kStartTimeout)) << store->Output();
  EXPECT_THAT(store->Output(), HasSubstr(", " + file + ", new)"));
  store->Kill(SIGTERM);
  ASSERT_TRUE(store->Wait(kExitTimeout).has_value());
  // Initialised: the next start finds its header and takes it back.
  store = Store({"--node-id", "zero", "--pmem", file + ":8MiB"}, "zero2.log");
  ASSERT_TRUE(store->WaitForLine("ready", kStartTimeout)) << store->Output();
  EXPECT_THAT(store->Output(), Not(HasSubstr(", new)")));
  store->Kill(SIGTERM);
  ASSERT_TRUE(store->Wait(kExitTimeout).has_value());

  const std::string foreign = dir_.File("foreign.pmem");
  ASSERT_TRUE(WriteFile(foreign, "not a segment"));  // data, then zeros to the end
  ASSERT_EQ(::truncate(foreign.c_str(), 8 << 20), 0) << std::strerror(errno);
  CommandResult r = StoreCommand({"--pmem", foreign + ":8MiB"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("no Crescent segment header (a foreign file)"));
  EXPECT_EQ(ReadFileOrEmpty(foreign).substr(0, 13), "not a segment");
}

// Keys, node ids and segment names are other people's bytes: rm's message,
// stat and top print them escaped as ls does, so none can move the cursor or
// retitle the operator's terminal.
TEST_F(ClearWordsTest, CommandsPrintKeysAndNamesEscaped) {
  CommandResult rm = Cli({"rm", "k\xff\xfe"});
  EXPECT_EQ(rm.exit_code, 1) << rm.err;
  EXPECT_THAT(rm.err, HasSubstr("k\\xff\\xfe"));
  EXPECT_THAT(rm.err, Not(HasSubstr("\xff")));

  // A master of its own, with the admin HTTP port that top reads.
  const uint16_t http = PickFreePort();
  ASSERT_NE(http, 0);
  Process master({CrescentBin(), "master", "--port", "0", "--http-port", std::to_string(http),
                  "--secret-file", cluster_->secret_file()},
                 dir_.File("evil-master.log"));
  auto address = master.WaitForMatch(std::regex(R"(listening on ([0-9.]+:[0-9]+))"), kStartTimeout);
  ASSERT_TRUE(address.has_value() && master.WaitForLine("ready", kStartTimeout)) << master.Output();
  const std::string node = "evil\x1b[2J";
  const std::string segment = "seg\x1b]0;pwned\x07";
  auto store =
      Store({"--node-id", node, "--segment-name", segment}, "evil.log", "4MiB", (*address)[1]);
  ASSERT_TRUE(store->WaitForLine("ready", kStartTimeout)) << store->Output();
  CommandResult stat = RunCrescent({"stat", "--master", (*address)[1]}, dir_.path());
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_THAT(stat.out, HasSubstr("seg\\x1b]0;pwned\\x07"));
  EXPECT_THAT(stat.out, HasSubstr("node evil\\x1b[2J"));
  EXPECT_EQ(stat.out.find('\x1b'), std::string::npos) << stat.out;
  EXPECT_EQ(stat.out.find('\x07'), std::string::npos) << stat.out;

  CommandResult top =
      RunCrescent({"top", "--once", "--http", "127.0.0.1:" + std::to_string(http)}, dir_.path());
  ASSERT_EQ(top.exit_code, 0) << top.err;
  EXPECT_THAT(top.out, HasSubstr("seg\\x1b]0;pwned\\x07"));
  EXPECT_THAT(top.out, HasSubstr("evil\\x1b[2J"));
  EXPECT_EQ(top.out.find('\x1b'), std::string::npos) << top.out;
}

// top to a port nobody listens on says why (it used to say only "Read").
TEST_F(ClearWordsTest, TopToAClosedPortSaysConnectionRefused) {
  const uint16_t port = PickFreePort();
  ASSERT_NE(port, 0);
  const std::string where = "127.0.0.1:" + std::to_string(port);
  CommandResult r = RunCrescent({"top", "--once", "--http", where}, dir_.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot reach http://" + where + ": Connection refused"));
}

// A size that is no whole or half unit is printed in bytes, never rounded to
// one it is not (4095 bytes used to print as "4.0 KiB").
TEST_F(ClearWordsTest, ASizeThatIsNotAWholeUnitIsPrintedExactly) {
  auto store = Store({"--node-id", "odd"}, "odd.log", "4095");
  ASSERT_TRUE(store->WaitForLine("ready", kStartTimeout)) << store->Output();
  EXPECT_THAT(store->Output(), HasSubstr("segment odd/dram0 (4095 B)"));
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  CommandResult stat = Cli({"stat"});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_THAT(stat.out, HasSubstr("0 B / 4095 B"));
  EXPECT_THAT(stat.out, HasSubstr("0 B / 16.0 MiB"));
}

// A durability flag without --data-dir would leave a master the operator
// believes durable with no log at all: each is refused, naming --data-dir.
TEST_F(ClearWordsTest, DurabilityFlagsNeedADataDir) {
  const std::vector<std::vector<std::string>> flags = {
      {"--log-sync", "always"}, {"--log-sync", "10"},      {"--snapshot-interval", "60"},
      {"--snapshot-keep", "3"}, {"--allow-empty-restore"}, {"--restore-grace", "100"}};
  for (const auto& f : flags) {
    for (const char* verb : {"master", "serve"}) {
      std::vector<std::string> args = {verb, "--port", "0", "--http-port", "0"};
      if (std::string(verb) == "master") {
        args.insert(args.end(), {"--secret-file", cluster_->secret_file()});
      }
      args.insert(args.end(), f.begin(), f.end());
      CommandResult r = RunCrescent(args, dir_.path());
      EXPECT_EQ(r.exit_code, 2) << verb << " " << f[0];
      EXPECT_THAT(r.err, HasSubstr(f[0] + " requires --data-dir")) << verb;
    }
  }
}

// A store node on an IPv6 address advertises it in brackets ([::1]:PORT), as
// stat shows, and clients reach it there.
TEST_F(ClearWordsTest, AnIpv6StoreNodeAdvertisesABracketedEndpoint) {
  if (!CheckCanListen("the test", "::1", 0).ok()) GTEST_SKIP() << "no IPv6 loopback";
  auto store = Store({"--node-id", "six", "--host", "::1"}, "six.log");
  ASSERT_TRUE(store->WaitForLine("ready", kStartTimeout)) << store->Output();
  EXPECT_THAT(store->Output(), testing::ContainsRegex(R"(at \[::1\]:[0-9]+)"));
  ASSERT_TRUE(cluster_->WaitForSegments(*client_, 2, kStartTimeout));
  CommandResult stat = Cli({"stat"});
  ASSERT_EQ(stat.exit_code, 0) << stat.err;
  EXPECT_THAT(stat.out, testing::ContainsRegex(R"(six/dram0 .* \[::1\]:[0-9]+)"));
  const std::string value(100000, 's');
  CommandResult put = Cli({"put", "six/k", "-", "--segment", "six/dram0"}, value);
  ASSERT_EQ(put.exit_code, 0) << put.err;
  CommandResult get = Cli({"get", "six/k"});
  ASSERT_EQ(get.exit_code, 0) << get.err;
  EXPECT_TRUE(get.out == value);
}

}  // namespace
}  // namespace crescent::itest
