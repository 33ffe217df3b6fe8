// What authenticating a connection costs in CPU (auth/handshake.h): the whole
// four-message exchange, both sides in one thread (their nonces from
// RAND_bytes included, no network). It is paid once per connection, never per
// call.
#include <benchmark/benchmark.h>

#include <memory>

#include "auth/handshake.h"

namespace {

using namespace crescent::auth;

struct Fixture {
  Token token = NewToken("app");
  std::shared_ptr<const ServerCredentials> creds;
  Fixture() {
    AuthFile file;
    file.AddUser("app", UserEntry{Role::kClient, "", MakeVerifier(token.secret, RandomKey())});
    creds = std::make_shared<ServerCredentials>(std::move(file));
  }
};

void BM_WholeHandshake(benchmark::State& state) {
  Fixture f;
  for (auto _ : state) {
    ClientHandshake client(f.token);
    ServerHandshake server(f.creds);
    auto final = client.OnServerFirst(server.Step(client.Start()));
    auto id = client.OnServerFinal(server.Step(*final));
    if (!id.ok()) state.SkipWithError("handshake failed");
    benchmark::DoNotOptimize(id);
  }
}
BENCHMARK(BM_WholeHandshake);

}  // namespace
