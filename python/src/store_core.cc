#include "store_core.h"

#include <cctype>
#include <cstdlib>

#include "transfer/capability.h"

namespace crescent::python {
namespace {

// Mooncake's local_hostname may be "host" or "host:port"; the data server
// binds the host (any free port) and needs a literal address for loopback.
std::string DataHost(const std::string& local_hostname) {
  std::string host = local_hostname;
  size_t colon = host.rfind(':');
  if (colon != std::string::npos && host.find(':') == colon && colon + 1 < host.size()) {
    bool digits = true;
    for (size_t i = colon + 1; i < host.size(); ++i) {
      digits = digits && std::isdigit(static_cast<unsigned char>(host[i]));
    }
    if (digits) host.resize(colon);
  }
  if (host.empty() || host == "localhost") return "127.0.0.1";
  return host;
}

// A host that binds every address: other clients cannot connect to it.
bool IsWildcard(const std::string& host) {
  return host == "0.0.0.0" || host == "::" || host == "[::]";
}

// Why setup cannot load the cluster secret, in the terms of a Python caller:
// LoadClusterSecret's own message for a missing secret names the CLI flag.
std::string SecretProblem(const Status& loaded) {
  const char* file = std::getenv("CRESCENT_SECRET_FILE");
  const char* inline_secret = std::getenv("CRESCENT_SECRET");
  const bool given =
      (file != nullptr && *file != '\0') || (inline_secret != nullptr && *inline_secret != '\0');
  std::string why =
      "global_segment_size > 0 contributes a segment, which needs the cluster "
      "secret of the master: ";
  if (!given) return why + "set CRESCENT_SECRET_FILE (or CRESCENT_SECRET)";
  return why +
         "the one in CRESCENT_SECRET_FILE (or CRESCENT_SECRET) cannot be used: " + loaded.message();
}

}  // namespace

StoreCore::StoreCore() = default;
StoreCore::~StoreCore() { Close(); }

Status StoreCore::Setup(const SetupArgs& args) {
  {
    std::lock_guard lock(mu_);
    if (client_ || setting_up_) {
      return Status(ErrorCode::kInvalidArgument, "store is already set up; close() it first");
    }
    setting_up_ = true;
  }
  struct Done {
    StoreCore* self;
    ~Done() {
      std::lock_guard lock(self->mu_);
      self->setting_up_ = false;
    }
  } done{this};

  // Check the secret before any network work: a contributed segment cannot
  // exist without it, and the user should learn that first.
  std::string secret;
  if (args.segment_size > 0) {
    if (args.node_factory == nullptr) {
      return Status(ErrorCode::kInternal, "no store node module to contribute a segment with");
    }
    StatusOr<std::string> s = transfer::LoadClusterSecret("");
    if (!s.ok()) return Status(ErrorCode::kInvalidArgument, SecretProblem(s.status()));
    secret = std::move(s.value());
    // The store node would name its CLI flag (--advertise-host); say it in
    // setup's terms, and before any network work.
    if (IsWildcard(DataHost(args.local_hostname))) {
      return Status(ErrorCode::kInvalidArgument,
                    "local_hostname '" + args.local_hostname +
                        "' listens on every address, but other clients need one to connect "
                        "to: give this host's address (or \"localhost\" for this host only)");
    }
  }

  ClientConfig cc;
  cc.master_address = args.master_address;
  cc.rpc_timeout_ms = args.rpc_timeout_ms;
  cc.rpc_attempts = args.rpc_attempts;
  cc.transfer_timeout_ms = args.transfer_timeout_ms;
  cc.put_retry_ms = args.put_retry_ms;
  cc.token = args.token;
  cc.tls = args.tls;
  cc.location_cache = args.location_cache;

  std::shared_ptr<LocalNode> node;
  if (args.segment_size > 0) {
    LocalNodeArgs no;
    no.segment_size = args.segment_size;
    no.host = DataHost(args.local_hostname);
    no.master_address = args.master_address;
    no.rpc_timeout_ms = args.rpc_timeout_ms;
    no.rpc_attempts = args.rpc_attempts;
    no.token = args.node_token.empty() ? args.token : args.node_token;
    no.tls = args.tls;
    StatusOr<std::unique_ptr<LocalNode>> n = args.node_factory->start(no, secret);
    if (!n.ok() && n.status().code() == ErrorCode::kPermissionDenied) {
      // Mounting takes a node's role (docs/security.md, "Roles").
      return Status(
          n.status().code(),
          "cannot contribute a segment: its store node needs a token of the node role "
          "(setup's node_token=; " +
              std::string(args.node_token.empty() ? "token= was used" : "node_token= was") +
              "): " + n.status().message());
    }
    if (!n.ok()) {
      return Status(n.status().code(), "cannot contribute a segment: " + n.status().message());
    }
    node = std::move(n.value());
    cc.local_node = node->node_id();  // local-first placement for our own puts
  }

  StatusOr<std::unique_ptr<Client>> c = Client::Connect(cc);
  if (!c.ok()) return c.status();
  std::shared_ptr<Client> client = std::move(c.value());
  // Connect() is lazy; a setup that "succeeds" against a dead master would
  // only move the failure to the first put, so prove the master answers.
  if (StatusOr<ClusterStat> st = client->Stat(); !st.ok()) {
    const bool refused = st.status().code() == ErrorCode::kUnauthenticated;
    return Status(st.status().code(),
                  (refused ? "the master at " + client->master_address() +
                                 " refused this client (setup's token=, or $CRESCENT_TOKEN): "
                           : "cannot reach the master at " + client->master_address() + ": ") +
                      st.status().message());
  }
  std::lock_guard lock(mu_);
  client_ = std::move(client);
  node_ = std::move(node);
  return Status::Ok();
}

void StoreCore::Close() {
  std::shared_ptr<Client> client;
  std::shared_ptr<LocalNode> node;
  {
    std::lock_guard lock(mu_);
    client = std::move(client_);
    node = std::move(node_);
  }
  client.reset();
  // Unmount after the client is gone; in-flight calls on other threads still
  // hold their own Client and fail cleanly once the segment disappears.
  if (node) node->Stop();
}

std::shared_ptr<Client> StoreCore::Acquire() const {
  std::lock_guard lock(mu_);
  return client_;
}

std::string StoreCore::local_segment() const {
  std::lock_guard lock(mu_);
  return node_ ? node_->segment_name() : std::string();
}

std::string StoreCore::local_node() const {
  std::lock_guard lock(mu_);
  return node_ ? node_->node_id() : std::string();
}

}  // namespace crescent::python
