// KeyScope: the key namespace a caller's key calls act in (docs/security.md,
// "Tenants"). A client of tenant T names keys that the master stores as
// "\x1d" T "\x1d" KEY (master/tenant_key.h); every other caller names the
// default namespace's keys as they are. The handlers map each key in, and
// each key they return (List) and each message naming one back out, here.
//
//  - A key or prefix that begins with the reserved byte 0x1d, from any
//    caller, becomes "\x1d" alone, which the engine refuses INVALID_KEY (per
//    key in a batch, as any invalid key): no one names another namespace.
//  - Who sees what of the store as a whole: a tenant's client its tenant's
//    keys; a client without a tenant the default namespace; an admin, or
//    any caller of a master without credentials, every key (List shows a
//    tenant's keys as stored, marks included; RemoveAll removes them all).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "crescent/status.h"
#include "rpc/access.h"
#include "rpc/messages.pb.h"

namespace crescent::rpc {

class KeyScope {
 public:
  explicit KeyScope(const Caller& caller);

  // The engine's key for the caller's `key`.
  std::string Key(std::string_view key) const;
  // The request's keys, mapped; taken rather than copied where they stay
  // as they are (the request dies with the call).
  std::vector<std::string> TakeKeys(google::protobuf::RepeatedPtrField<std::string>* keys) const;
  // The read batches' keys for the engine to prefix itself (`prefix()`, no
  // allocation per key; master::PrefixedKeys, which the engine refuses a
  // tenant's key beginning with 0x1d in): a tenant's keys as they are, taken;
  // the default namespace's as TakeKeys maps them.
  std::vector<std::string> TakeForPrefix(
      google::protobuf::RepeatedPtrField<std::string>* keys) const;
  // A key the engine returned, as the caller names it.
  std::string_view Shown(std::string_view internal) const {
    return internal.substr(std::min(prefix_.size(), internal.size()));
  }
  // `s` with the caller's tenant prefix taken out of its message.
  Status Shown(const Status& s) const;

  // The caller sees every namespace (admin, or a master without credentials).
  bool whole_store() const { return whole_store_; }
  // The caller sees the default namespace only (a client without a tenant).
  bool default_only() const { return !whole_store_ && prefix_.empty(); }
  // Where the caller's keys begin ("" for the default namespace).
  const std::string& prefix() const { return prefix_; }

 private:
  std::string prefix_;
  bool whole_store_;
};

}  // namespace crescent::rpc
