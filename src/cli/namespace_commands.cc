// The namespace verbs: ls (keys under a prefix, paged through the master's
// List cursor and printed as each page comes) and rm (one key, every key under
// a prefix, or with --all every key). Exit codes as the other client verbs:
// 0 ok, 1 not found, 2 usage or any other error, with a message on stderr.
#include <unistd.h>

#include <iostream>
#include <string>

#include "cli/cli_util.h"
#include "cli/client_flags.h"
#include "cli/command.h"
#include "cli/value_io.h"
#include "crescent/client.h"

namespace crescent::cli {
namespace {

// Keys asked for per List call: a page is printed before the next is asked
// for, so memory stays at one page whatever the namespace holds.
constexpr size_t kPageKeys = 4096;

void AddLs(CLI::App& root) {
  auto* app = root.add_subcommand("ls", "List stored keys under PREFIX, in key order");
  app->footer(
      "One key per line; keys are byte strings, so a backslash is written \\\\ and every byte "
      "outside printable ASCII \\xHH (a newline: \\x0a), and one key is always one line. With "
      "-0 keys are printed as they are, each followed by a NUL byte. With a token of a "
      "tenant, the keys are that tenant's; with an admin's, every tenant's too, as the "
      "master stores them (\\x1dTENANT\\x1dKEY; docs/security.md, \"Tenants\").");
  struct Flags : ClientFlags {
    std::string prefix;
    size_t limit = 1000;
    bool nul = false;
  };
  auto f = std::make_shared<Flags>();
  f->Add(*app);
  app->add_option("PREFIX", f->prefix, "Key prefix (default: all keys)");
  app->add_option("--limit", f->limit,
                  "At most this many keys; stderr says when more are stored (0: all of them)")
      ->capture_default_str()
      ->check(CountCheck());
  app->add_flag("-0,--null", f->nul,
                "Print each key as it is, followed by a NUL byte (for xargs -0)");
  app->callback([f] {
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("ls", client.status()));
    // Each page asks for the keys after the last one printed: a key stored
    // throughout is printed once, however the namespace changes meanwhile.
    size_t printed = 0;
    std::string after;
    bool more = true;
    while (more && (f->limit == 0 || printed < f->limit)) {
      const size_t want = f->limit == 0 ? kPageKeys : std::min(kPageKeys, f->limit - printed);
      auto keys = client.value()->List(f->prefix, want, &more, after);
      if (!keys.ok()) return SetExitCode(Report("ls", keys.status()));
      if (keys->empty()) break;
      std::string out;
      for (const std::string& k : *keys) {
        out += f->nul ? k : EscapeText(k);
        out += f->nul ? '\0' : '\n';
      }
      if (Status s = WriteStdout(out); !s.ok()) return SetExitCode(Report("ls", s));
      printed += keys->size();
      after = keys->back();
    }
    if (more) {
      std::cerr << "ls: showing the first " << printed
                << " keys; more are stored (--limit N for more, 0 for all)\n";
    }
    SetExitCode(0);
  });
}

// rm --all asks before it removes everything: on a terminal, a y; elsewhere
// (a script, a pipe) --yes must be given.
Status ConfirmRemoveAll(bool yes, const std::string& master) {
  if (yes) return Status::Ok();
  if (::isatty(STDIN_FILENO) != 1) {
    return Status(ErrorCode::kInvalidArgument,
                  "--all removes every key; give --yes with it when stdin is not a terminal");
  }
  std::cerr << "Remove every key stored at " << master << "? [y/N] " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  if (answer == "y" || answer == "Y" || answer == "yes") return Status::Ok();
  return Status(ErrorCode::kInvalidArgument, "nothing removed");
}

void AddRm(CLI::App& root) {
  auto* app = root.add_subcommand(
      "rm", "Remove KEY, every key under --prefix PREFIX, or every key with --all");
  struct Flags : ClientFlags {
    std::string key;
    bool prefix = false, all = false, yes = false, force = false;
  };
  auto f = std::make_shared<Flags>();
  f->Add(*app);
  app->add_option("KEY", f->key, "Key (or prefix with --prefix; none with --all)");
  app->add_flag("--prefix", f->prefix,
                "Remove every key that starts with KEY (which must not be empty: see --all)");
  app->add_flag("--all", f->all,
                "Remove every key (asks first on a terminal; elsewhere needs --yes): with a "
                "tenant's token that tenant's, with a client token without one the default "
                "namespace's, with an admin's every tenant's too");
  app->add_flag("--yes", f->yes, "With --all: do not ask");
  app->add_flag("--force", f->force,
                "Remove even if a reader holds a lease (its space is freed when the lease ends)");
  app->callback([f, app] {
    const bool key_given = app->count("KEY") > 0;
    auto usage = [](const std::string& m) {
      return SetExitCode(Report("rm", Status(ErrorCode::kInvalidArgument, m)));
    };
    if (f->all && (key_given || f->prefix)) return usage("--all takes no KEY and no --prefix");
    if (!f->all && !key_given) return usage("give KEY, --prefix PREFIX, or --all");
    if (f->yes && !f->all) return usage("--yes goes with --all");
    if (f->prefix && f->key.empty()) {
      return usage("an empty prefix would remove every key; to do that, use rm --all");
    }
    auto client = f->Connect();
    if (!client.ok()) return SetExitCode(Report("rm", client.status()));
    if (f->all || f->prefix) {
      if (f->all) {
        Status ok = ConfirmRemoveAll(f->yes, client.value()->master_address());
        if (!ok.ok()) return SetExitCode(Report("rm", ok));
      }
      const std::string prefix = f->all ? "" : f->key;
      StatusOr<size_t> n = f->all ? client.value()->RemoveAll(f->force)
                                  : client.value()->RemoveByPrefix(prefix, f->force);
      if (!n.ok()) return SetExitCode(Report("rm", n.status()));
      if (Status s = WriteStdout("removed " + std::to_string(n.value()) + "\n"); !s.ok()) {
        return SetExitCode(Report("rm", s));
      }
      if (f->force) return SetExitCode(0);
      // Without --force, keys a reader holds a lease on stay; say so rather
      // than let "removed N" read as "the namespace is empty".
      constexpr size_t kCount = 1000;  // counted exactly up to here
      bool more = false;
      StatusOr<std::vector<std::string>> left = client.value()->List(prefix, kCount, &more);
      if (!left.ok()) return SetExitCode(Report("rm", left.status()));
      const size_t still = left.value().size();
      if (still == 0) return SetExitCode(0);
      const std::string count = more         ? "more than " + std::to_string(still) + " keys"
                                : still == 1 ? "1 key"
                                             : std::to_string(still) + " keys";
      const std::string where = f->all ? "" : " under '" + prefix + "'";
      return SetExitCode(
          Report("rm", Status(ErrorCode::kObjectLeased,
                              count + where +
                                  " left (leased by readers, or stored meanwhile); retry when the "
                                  "leases end, or --force")));
    }
    Status s = client.value()->Remove(f->key, f->force);
    if (s.code() == ErrorCode::kObjectLeased) {
      s = Status(s.code(),
                 s.message() + " (a reader holds it; retry when the lease ends, or --force)");
    }
    SetExitCode(Report("rm", s));
  });
}

Registrar ls_registrar(AddLs);
Registrar rm_registrar(AddRm);

}  // namespace
}  // namespace crescent::cli
