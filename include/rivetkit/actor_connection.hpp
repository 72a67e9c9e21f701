#pragma once
/// A connection from one actor to another (`handle.connect()`, RivetKit's `handle.connect()`):
///
///     auto room = co_await c.client().get_or_create("room", {"lobby"}).connect();
///     room.on("message", [](const Array& args) { /* on this actor's strand */ });
///     co_await room.action("post", text);
///     co_await room.dispose();
///
/// The other actor sees an ordinary connection (its connection hooks run, `c.conn()` in its
/// actions, events through `c.broadcast` and `conn.send`). Event listeners run on the holding
/// actor's strand, like its actions. The connection lasts until it is disposed, the other actor
/// closes it (or is destroyed), or the holding actor stops (sleep or destroy): then it is closed,
/// since the instance whose listeners it calls is gone. A call on a closed connection throws
/// `actor.connection_closed`, or the error the other actor closed it with.
///
/// Local mode carries the connection in process; engine mode through the engine's gateway, so
/// the other actor may run on another process (and may sleep and wake while it is open).

#include <rivetkit/convert.hpp>
#include <rivetkit/detail/access.hpp>
#include <rivetkit/detail/converted.hpp>
#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/value.hpp>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>

namespace rivetkit {

class ActorConnection {
 public:
  /// Calls action `name` with `args` over the connection and converts its result to R.
  template <class R = Value, class... A>
  Task<R> action(std::string name, const A&... args) const {
    return detail::converted<R>(impl_->call(std::move(name), Array{to_value(args)...}));
  }
  /// Calls action `name` with an argument list built at run time.
  Task<Value> call(std::string name, Array args) const {
    return impl_->call(std::move(name), std::move(args));
  }
  /// Calls `listener(args)` for every event `event` the other actor sends this connection, on
  /// the holding actor's strand. The first listener of an event subscribes to it. Returns an id
  /// for off().
  std::uint64_t on(std::string event, std::function<void(const Array&)> listener) const {
    return impl_->on(std::move(event), std::move(listener));
  }
  /// Removes a listener; the last one of its event unsubscribes.
  void off(std::uint64_t listener) const { impl_->off(listener); }

  const std::string& actor_id() const { return impl_->actor_id(); }
  const std::string& connection_id() const { return impl_->connection_id(); }
  bool closed() const { return impl_->closed(); }
  /// Closes the connection (the other actor's on_disconnect runs) and resumes once it ended.
  Task<void> dispose() const { return impl_->dispose(); }

 private:
  friend struct detail::Access;
  explicit ActorConnection(std::shared_ptr<detail::ActorConnApi> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<detail::ActorConnApi> impl_;
};

}  // namespace rivetkit
