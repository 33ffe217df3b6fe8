// The credential verbs, which edit an auth file (docs/security.md) and talk to
// no server: `token add` (prints a new token once), `token rm` (revokes one)
// and `tenant set` (a tenant's byte quota). Exit codes: 0 ok, 2 any error,
// with a message on stderr; the file is left as it was on any error.
#include <iostream>
#include <memory>
#include <string>

#include "auth/auth_file_io.h"
#include "auth/token.h"
#include "cli/cli_util.h"
#include "cli/command.h"
#include "cli/value_io.h"

namespace crescent::cli {
namespace {

constexpr const char* kAuthFileHelp =
    "The auth file (created by the first `token add` or `tenant set`, mode 0600)";

void AddTokenAdd(CLI::App& token) {
  auto* app = token.add_subcommand("add", "Make a new token and print it on stdout, once");
  app->footer(
      "The auth file keeps only a verifier of the token, from which it cannot be recovered: "
      "keep what this prints (NAME:SECRET), or revoke it and add another. Only a client token "
      "takes --tenant, which must exist (crescent tenant set). docs/security.md describes "
      "the file and the handshake that checks a token.");
  struct Flags {
    std::string file, name, role, tenant;
  };
  auto f = std::make_shared<Flags>();
  app->add_option("--auth-file", f->file, kAuthFileHelp)->required();
  app->add_option("--name", f->name, "The token's name (letters, digits, '.', '_', '-')")
      ->required();
  app->add_option("--role", f->role, "admin, client or node")->required();
  app->add_option("--tenant", f->tenant,
                  "The client's tenant: its keys are the tenant's own namespace, within the "
                  "tenant's quota (docs/security.md, \"Tenants\")");
  app->callback([f] {
    StatusOr<auth::Role> role = auth::ParseRole(f->role);
    if (!role.ok()) return SetExitCode(Report("token add", role.status()));
    if (Status s = auth::CheckName("token name", f->name); !s.ok()) {
      return SetExitCode(Report("token add", s));
    }
    const auth::Token token = auth::NewToken(f->name);
    const auth::UserEntry entry{*role, f->tenant,
                                auth::MakeVerifier(token.secret, auth::RandomKey())};
    Status s = auth::UpdateAuthFile(f->file, /*create=*/true, [&](auth::AuthFile& file) {
      return file.AddUser(f->name, entry);
    });
    if (!s.ok()) return SetExitCode(Report("token add", s));
    if (Status printed = WriteStdout(auth::FormatToken(token) + "\n"); !printed.ok()) {
      // Nobody will hold it: take it out again (unless the name was meanwhile revoked and
      // added anew), so that the file lists no token nobody has.
      Status undone = auth::UpdateAuthFile(f->file, false, [&](auth::AuthFile& file) {
        const auth::UserEntry* now = file.FindUser(f->name);
        if (now == nullptr || now->verifier.stored_key != entry.verifier.stored_key) {
          return Status::Ok();
        }
        return file.RemoveUser(f->name);
      });
      return SetExitCode(
          Report("token add",
                 Status(printed.code(), "cannot print the token (" + printed.message() + "): " +
                                            (undone.ok() ? "it was not added"
                                                         : "remove it with `crescent token "
                                                           "rm`: " +
                                                               undone.message()))));
    }
    std::cerr << "token '" << f->name << "' (" << auth::RoleName(*role)
              << (f->tenant.empty() ? "" : ", tenant " + f->tenant) << ") added to " << f->file
              << "; it is printed this once\n";
    SetExitCode(0);
  });
}

void AddTokenRm(CLI::App& token) {
  auto* app = token.add_subcommand("rm", "Revoke a token: remove it from the auth file");
  auto file = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  app->add_option("--auth-file", *file, "The auth file")->required();
  app->add_option("--name", *name, "The token's name")->required();
  app->callback([file, name] {
    Status s = auth::UpdateAuthFile(*file, /*create=*/false,
                                    [&](auth::AuthFile& f) { return f.RemoveUser(*name); });
    SetExitCode(Report("token rm", s));
  });
}

void AddToken(CLI::App& root) {
  auto* app = root.add_subcommand("token", "Add or revoke the tokens in an auth file");
  app->require_subcommand(1);
  AddTokenAdd(*app);
  AddTokenRm(*app);
}

void AddTenant(CLI::App& root) {
  auto* tenant = root.add_subcommand("tenant", "Set tenants' byte quotas in an auth file");
  tenant->require_subcommand(1);
  auto* app = tenant->add_subcommand("set", "Create TENANT, or change its quota");
  auto file = std::make_shared<std::string>();
  auto name = std::make_shared<std::string>();
  auto quota = std::make_shared<std::string>();
  app->add_option("--auth-file", *file, kAuthFileHelp)->required();
  app->add_option("TENANT", *name, "The tenant's name (letters, digits, '.', '_', '-')")
      ->required();
  app->add_option("--quota", *quota, std::string("The most bytes its objects may hold") + kSizeHelp)
      ->required()
      ->check(ByteSizeCheck());
  app->callback([file, name, quota] {
    StatusOr<uint64_t> bytes = ParseByteSize(*quota);
    if (!bytes.ok()) return SetExitCode(Report("tenant set", bytes.status()));
    Status s = auth::UpdateAuthFile(
        *file, /*create=*/true, [&](auth::AuthFile& f) { return f.SetTenantQuota(*name, *bytes); });
    SetExitCode(Report("tenant set", s));
  });
}

Registrar token_registrar(AddToken);
Registrar tenant_registrar(AddTenant);

}  // namespace
}  // namespace crescent::cli
