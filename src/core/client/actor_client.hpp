#pragma once
// ActorClient: `c.client()` (include/rivetkit/client.hpp), written once for both modes. It finds
// actors through the mode's ActorDirectory (core/directory.hpp) and runs actions through the
// mode's ActionCaller; what it adds is RivetKit's handle semantics: a query is resolved on every
// call, a get-or-create handle whose actor was destroyed meanwhile creates it anew, an unknown
// actor type is refused before anything is created, and an error reaches the caller as its
// client would see it (sanitize_for_client).

#include "core/client/action_caller.hpp"
#include "core/directory.hpp"
#include "util/clock.hpp"
#include <rivetkit/detail/runtime_api.hpp>

#include <functional>
#include <memory>
#include <string>

namespace rivetkit::core {

class ActorClient final : public detail::ClientApi {
 public:
  /// Whether an actor type of this name is registered.
  using KnownName = std::function<bool(const std::string&)>;

  ActorClient(ActorDirectory& directory,
              ActionCaller& caller,
              KnownName known_name,
              std::shared_ptr<util::Clock> clock);

  Task<std::string> resolve(detail::ActorQuery query) override;
  Task<Value> call(detail::ActorQuery query, std::string action, Array args, Value params) override;
  Task<QueueSendResult> send(detail::ActorQuery query,
                             std::string queue,
                             Value body,
                             bool wait,
                             std::optional<std::chrono::milliseconds> timeout,
                             Value params) override;
  /// A connection over the caller's socket (ActionCaller::open_socket) in CBOR, as the official
  /// client speaks it; closed when the holder stops.
  Task<std::shared_ptr<detail::ActorConnApi>> connect(detail::ActorQuery query,
                                                      Value params,
                                                      detail::ActorApi* holder) override;
  Task<void> destroy(detail::ActorQuery query) override;

 private:
  Task<Result<std::string>> find(const detail::ActorQuery& query);
  /// Runs `work` on the actor `query` names (the handle semantics above); throws its error.
  Task<Value> run(detail::ActorQuery query, ClientWork work, Value params);

  ActorDirectory& directory_;
  ActionCaller& caller_;
  KnownName known_name_;
  std::shared_ptr<util::Clock> clock_;
};

}  // namespace rivetkit::core
