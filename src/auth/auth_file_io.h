// Reading and rewriting the auth file (auth_file.h) on disk.
//
// Reading refuses, with a message naming the file: one that is not a regular
// file, one that its group or others may read or write (mode & 077: "chmod 600
// FILE" fixes it), one larger than kMaxAuthFileBytes, and one that does not
// parse. A server refuses to start on any of these rather than run with fewer
// users than the operator wrote.
//
// Rewriting is atomic: the new text goes to FILE.tmp (created 0600), is
// fsynced, renamed over FILE, and the directory is fsynced; a crash leaves the
// old file or the new one, never a mix. Edits hold an flock on FILE.lock for
// the whole read, edit and write, so two concurrent `crescent token add` both
// land.
#pragma once

#include <functional>
#include <memory>
#include <string>

#include "auth/auth_file.h"
#include "auth/handshake.h"
#include "auth/token.h"
#include "crescent/status.h"

namespace crescent::auth {

inline constexpr size_t kMaxAuthFileBytes = 16 << 20;

// The file at `path`. kIoError when it cannot be read (a missing file
// included), kInvalidArgument for a wrong mode or size, kCorruptData when it
// does not parse.
StatusOr<AuthFile> LoadAuthFile(const std::string& path);

// The text of the file at `path`, refused as the auth file is when it is not a
// regular file, when others than its owner may read or change it, or when it
// is larger than kMaxAuthFileBytes; `what` names it in messages ("token file").
StatusOr<std::string> ReadOwnerOnlyFile(const std::string& path, const std::string& what);

// A user that a server adds to its auth file in memory only, never writing it
// there: `crescent serve`'s embedded store node.
struct InternalUser {
  std::string name;
  UserEntry entry;
};
// `token` as a node token (its verifier under a fresh salt, made once: a
// reload that kept the same InternalUser keeps its connections).
InternalUser InternalNodeUser(const Token& token);

// What a server checks tokens against: the auth file at `path` (LoadAuthFile),
// plus `internal` when set (a file that already names it is refused, rather
// than one shadowing the other). `mock_key`: ServerCredentials'; a reload
// passes the same one.
StatusOr<std::shared_ptr<const ServerCredentials>> LoadServerCredentials(
    const std::string& path, const InternalUser* internal, const Key& mock_key);

// Loads `path` (an empty file when it does not exist and `create` is true),
// applies `edit`, and writes the result in its place. Nothing is written when
// `edit` fails; its status is returned.
Status UpdateAuthFile(const std::string& path, bool create,
                      const std::function<Status(AuthFile&)>& edit);

}  // namespace crescent::auth
