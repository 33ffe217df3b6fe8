// Safe by default (docs/security.md): without an auth file, `crescent master`
// and `crescent serve` listen on loopback only. Another address needs
// --insecure, refused with a message that says so otherwise, and a server
// started that way says at start that it serves without authentication. The
// admin HTTP port stays on loopback unless --http-host names another address.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <memory>
#include <string>
#include <vector>

#include "integration/cluster.h"
#include "integration/raw_socket.h"

namespace crescent::itest {
namespace {

using testing::HasSubstr;
using testing::Not;

class SafeDefaultTest : public testing::Test {
 protected:
  // `crescent serve` on --host 0.0.0.0 with `extra` flags, until "ready".
  std::unique_ptr<Process> Serve(const std::vector<std::string>& extra, const std::string& log) {
    std::vector<std::string> argv = {CrescentBin(),      "serve",    "--port", "0",
                                     "--segment-size",   "4MiB",     "--host", "0.0.0.0",
                                     "--advertise-host", "127.0.0.1"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return std::make_unique<Process>(argv, dir_.File(log));
  }

  TempDir dir_;
};

TEST_F(SafeDefaultTest, AnotherAddressThanLoopbackNeedsInsecure) {
  for (const char* verb : {"master", "serve"}) {
    for (const char* host : {"0.0.0.0", "::", "192.0.2.1"}) {
      // A server that started anyway is stopped after kStartTimeout.
      CommandResult r =
          RunCommand({CrescentBin(), verb, "--host", host, "--port", "0", "--http-port", "0"}, "",
                     dir_.path(), kStartTimeout);
      EXPECT_EQ(r.exit_code, 2) << verb << " " << host << ": " << r.out << r.err;
      EXPECT_THAT(r.err, HasSubstr(std::string("--host ") + host + " is not a loopback address"))
          << verb;
      EXPECT_THAT(r.err, HasSubstr("--insecure")) << verb;
      EXPECT_THAT(r.out, Not(HasSubstr("ready"))) << verb;
    }
  }
}

TEST_F(SafeDefaultTest, InsecureServesEverywhereAndSaysSo) {
  const uint16_t http = PickFreePort();
  ASSERT_NE(http, 0);
  auto serve = Serve({"--insecure", "--http-port", std::to_string(http)}, "insecure.log");
  ASSERT_TRUE(serve->WaitForLine("ready", kStartTimeout)) << serve->Output();
  const std::string out = serve->Output();
  EXPECT_THAT(out, HasSubstr("serving on 0.0.0.0 without authentication (--insecure)"));
  EXPECT_THAT(out, HasSubstr("listening on 0.0.0.0:"));
  // The admin HTTP port stayed on loopback.
  EXPECT_THAT(out, HasSubstr("metrics on http://127.0.0.1:" + std::to_string(http) + "/metrics"));
  serve->Kill(SIGTERM);
  auto exit = serve->Wait(kExitTimeout);
  ASSERT_TRUE(exit.has_value());
  EXPECT_TRUE(exit->exited && exit->code == 0) << exit->ToString();
}

TEST_F(SafeDefaultTest, HttpHostMovesTheAdminPort) {
  const uint16_t http = PickFreePort();
  ASSERT_NE(http, 0);
  auto serve =
      Serve({"--insecure", "--http-port", std::to_string(http), "--http-host", "0.0.0.0"}, "h.log");
  ASSERT_TRUE(serve->WaitForLine("ready", kStartTimeout)) << serve->Output();
  EXPECT_THAT(serve->Output(),
              HasSubstr("metrics on http://0.0.0.0:" + std::to_string(http) + "/metrics"));
}

TEST_F(SafeDefaultTest, LoopbackNeedsNothingAndSaysNothing) {
  Process serve({CrescentBin(), "serve", "--port", "0", "--http-port", "0", "--segment-size",
                 "4MiB", "--host", "::1"},
                dir_.File("loopback.log"));
  ASSERT_TRUE(serve.WaitForLine("ready", kStartTimeout)) << serve.Output();
  EXPECT_THAT(serve.Output(), Not(HasSubstr("without authentication")));
}

}  // namespace
}  // namespace crescent::itest
