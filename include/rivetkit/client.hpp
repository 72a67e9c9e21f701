#pragma once
/// Calling other actors from inside an actor (`c.client()`, RivetKit's `c.client()`):
///
///     auto room = c.client().get_or_create("room", {"lobby"});
///     std::int64_t n = co_await room.action<std::int64_t>("join", user);
///     auto game = co_await c.client().create("game", {id}, {.input = settings});
///     co_await game.send("moves", move);            // a queue message
///     co_await game.destroy();
///
/// A handle names an actor by query, as RivetKit's handles do: `get` (must exist),
/// `get_or_create` (created with `input` on first use), `get_for_id`, or the actor `create`
/// made. Each call resolves the query again (an actor destroyed since is created anew by a
/// get-or-create handle, and is not found by the others). A sleeping actor is woken for the call.
///
/// Errors: a call that fails throws ActorError with RivetKit's group, code, message and metadata;
/// a user error the callee throws reaches the caller as it was thrown (an internal error only as
/// `core.internal_error`). An unknown actor type is `actor.unknown_name`, a missing actor
/// `actor.not_found`, an unknown action `actor.action_not_found`.
///
/// Reentrancy: a call runs on the callee's own strand as a separate action. The caller's action
/// is not holding anything while it waits, so an actor may call itself, and two actors may call
/// each other, without deadlock; every call is bounded by the callee's action timeout.
///
/// Local mode runs the call in process (arguments and results are copied, not encoded); engine
/// mode sends it through the engine's gateway, so the callee may run on another process.

#include <rivetkit/actor_connection.hpp>
#include <rivetkit/convert.hpp>
#include <rivetkit/detail/access.hpp>
#include <rivetkit/detail/converted.hpp>
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/error.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace rivetkit {

/// Options of get / get_for_id handles.
struct GetOptions {
  /// Connection params the callee's on_before_connect / create_conn_state see.
  Value params{};
};

/// Options of get_or_create / create.
struct CreateOptions {
  /// The input of the actor's create_state / on_create (only used when the call creates it).
  Value input{Undefined{}};
  Value params{};
};

class ActorHandle {
 public:
  /// Calls action `name` with `args` and converts its result to R (Value: as returned). The
  /// returned task holds copies of what it needs; the handle may go before it is awaited.
  template <class R = Value, class... A>
  Task<R> action(std::string name, const A&... args) const {
    return detail::converted<R>(
        api_->call(query_, std::move(name), Array{to_value(args)...}, params_));
  }
  /// Calls action `name` with an argument list built at run time.
  Task<Value> call(std::string name, Array args) const {
    return api_->call(query_, std::move(name), std::move(args), params_);
  }
  /// Sends `body` to the actor's queue `queue` and resumes once the actor has taken it
  /// (RivetKit's `handle.send(name, body)`). A queue the actor does not declare takes the message
  /// and drops it, as in RivetKit.
  template <class T>
  Task<void> send(std::string queue, const T& body) const {
    return sent(api_->send(query_, std::move(queue), to_value(body), false, std::nullopt, params_));
  }
  /// Sends `body` to queue `queue` and waits until a consumer completes it, at most `timeout`
  /// (none: the callee's action timeout still bounds the wait). The result says whether it was
  /// completed, with the consumer's response, or timed out.
  template <class T>
  Task<QueueSendResult> send_and_wait(
      std::string queue,
      const T& body,
      std::optional<std::chrono::milliseconds> timeout = std::nullopt) const {
    return api_->send(query_, std::move(queue), to_value(body), true, timeout, params_);
  }
  /// Opens a connection to the actor (actor_connection.hpp), held by the actor whose client
  /// made this handle. Resumes once the actor accepted it; its connection hooks' errors are
  /// thrown here.
  Task<ActorConnection> connect() const {
    if (holder_ == nullptr) {
      throw ActorError(Error{"actor", "no_holder",
                             "A connection must be opened from inside an actor (c.client())",
                             std::nullopt, true});
    }
    return connected(api_->connect(query_, params_, holder_));
  }
  /// The actor's id (resolving the query; a get-or-create handle creates it).
  Task<std::string> resolve() const { return api_->resolve(query_); }
  /// Destroys the actor (its on_destroy runs, its connections close, its data goes).
  Task<void> destroy() const { return api_->destroy(query_); }

 private:
  friend struct detail::Access;
  friend class Client;
  ActorHandle(detail::ClientApi* api,
              detail::ActorQuery query,
              Value params,
              detail::ActorApi* holder = nullptr)
      : api_(api), query_(std::move(query)), params_(std::move(params)), holder_(holder) {}

  static Task<void> sent(Task<QueueSendResult> send) { co_await std::move(send); }
  static Task<ActorConnection> connected(Task<std::shared_ptr<detail::ActorConnApi>> connect) {
    auto impl = co_await std::move(connect);
    co_return detail::Access::make<ActorConnection>(std::move(impl));
  }

  detail::ClientApi* api_;
  detail::ActorQuery query_;
  Value params_;
  detail::ActorApi* holder_;
};

/// The registry's actors as seen from inside one (`c.client()`).
class Client {
 public:
  /// The existing actor `name` with `key` (actor.not_found when there is none).
  ActorHandle get(std::string name,
                  std::vector<std::string> key = {},
                  GetOptions options = {}) const {
    return ActorHandle(api_, query(detail::ActorQuery::Kind::kGet, std::move(name), std::move(key)),
                       std::move(options.params), holder_);
  }
  /// The actor `name` with `key`, created with `options.input` if there is none.
  ActorHandle get_or_create(std::string name,
                            std::vector<std::string> key = {},
                            CreateOptions options = {}) const {
    auto q = query(detail::ActorQuery::Kind::kGetOrCreate, std::move(name), std::move(key));
    q.input = std::move(options.input);
    return ActorHandle(api_, std::move(q), std::move(options.params), holder_);
  }
  /// The actor with this id.
  ActorHandle get_for_id(std::string name, std::string actor_id, GetOptions options = {}) const {
    auto q = query(detail::ActorQuery::Kind::kGetForId, std::move(name), {});
    q.actor_id = std::move(actor_id);
    return ActorHandle(api_, std::move(q), std::move(options.params), holder_);
  }
  /// Creates a new actor (actor.duplicate_key when one with this key exists) and returns a
  /// handle to it by id.
  Task<ActorHandle> create(std::string name,
                           std::vector<std::string> key = {},
                           CreateOptions options = {}) const {
    auto q = query(detail::ActorQuery::Kind::kCreate, std::move(name), std::move(key));
    q.input = std::move(options.input);
    return created(api_, holder_, std::move(q), std::move(options.params));
  }

 private:
  friend struct detail::Access;
  /// `holder`: the actor this client belongs to (the holder of the connections it opens).
  explicit Client(detail::ClientApi* api, detail::ActorApi* holder = nullptr)
      : api_(api), holder_(holder) {}

  static Task<ActorHandle> created(detail::ClientApi* api,
                                   detail::ActorApi* holder,
                                   detail::ActorQuery q,
                                   Value params) {
    auto op = api->resolve(q);
    std::string actor_id = co_await std::move(op);
    auto by_id = query(detail::ActorQuery::Kind::kGetForId, std::move(q.name), std::move(q.key));
    by_id.actor_id = std::move(actor_id);
    co_return ActorHandle(api, std::move(by_id), std::move(params), holder);
  }
  static detail::ActorQuery query(detail::ActorQuery::Kind kind,
                                  std::string name,
                                  std::vector<std::string> key) {
    detail::ActorQuery q;
    q.kind = kind;
    q.name = std::move(name);
    q.key = std::move(key);
    return q;
  }
  detail::ClientApi* api_;
  detail::ActorApi* holder_;
};

}  // namespace rivetkit
