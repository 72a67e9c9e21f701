#pragma once
// StateRecord: the actor's state as the runtime stores it (core-semantics.md §2.4).
//
// The user's typed state is encoded (stored_value.hpp) whenever a write is taken and compared
// with what storage holds or will hold once the writes already taken are durable: only a state
// that changed is written, and only then does on_state_change run. The hook runs once the write
// is under way; a state write inside it is refused (actor.state_mutation_reentrant), since it
// would call the hook again for ever. A state that cannot be encoded is logged and not written
// (the last good one stays).
//
// Single strand.

#include <rivetkit/detail/runtime_api.hpp>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace rivetkit::core {

class StateRecord {
 public:
  explicit StateRecord(std::string actor_id) : actor_id_(std::move(actor_id)) {}

  /// Encodes the user's state; throws what the state's conversion throws.
  static std::string encode(const detail::UserActorData& data);

  /// What storage holds (after the load, or the creation commit).
  void stored(std::string bytes) { last_ = std::move(bytes); }
  /// The state's bytes when they differ from what the writes taken so far hold (they count as
  /// written from now on); nullopt when unchanged or when the state cannot be encoded (logged).
  std::optional<std::string> take_changed(const detail::UserActorData& data);

  /// Runs on_state_change; state writes meanwhile are refused (check_writable).
  void run_on_change(const std::function<void(detail::ActorApi*)>& hook, detail::ActorApi* api);
  /// Throws actor.state_mutation_reentrant while on_state_change runs.
  void check_writable() const;
  bool in_on_change() const { return in_on_change_; }

 private:
  std::string actor_id_;  // for logs
  std::optional<std::string> last_;
  bool in_on_change_ = false;
};

}  // namespace rivetkit::core
