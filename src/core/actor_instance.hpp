#pragma once
// ActorInstance: one running generation of an actor (rivetkit-core's ActorTask + ActorContext).
//
// Threading: every member function runs on the instance's strand unless noted. Code from other
// executors reaches it with boost::asio::co_spawn(instance->strand(), ...). User handlers run on
// the strand too, so user code between two co_awaits runs alone; handlers may interleave at
// co_await points.
//
// Lifecycle (core-semantics.md §1.1-§1.2): kLoading -> kStarted -> kStopping -> kStopped, or
// kLoading -> kFailed. start() loads the persisted actor; a new actor runs create_state and
// on_create and is committed as initialized before anything else may see it; then create_vars and
// on_wake run on every start.
//
// Durability (the output gate): whenever user code may have changed the state (mark_state_dirty),
// a save is scheduled for the end of the current strand turn. Every output (action reply, event,
// Init) carries the sequence number of the latest save requested before it, and is released only
// once that save is durable. Saves are whole-state writes, so a later successful save also covers
// the earlier ones. If a save fails, outputs that depend on it fail instead of being sent.

#include <rivetkit/detail/runtime_api.hpp>
#include <rivetkit/result.hpp>
#include <rivetkit/task.hpp>

#include <boost/asio/any_io_executor.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/connection.hpp"
#include "core/notifier.hpp"
#include "core/runtime_config.hpp"
#include "storage/actor_store.hpp"

namespace rivetkit::core {

class ActorInstance final : public detail::ActorApi,
                            public std::enable_shared_from_this<ActorInstance> {
 public:
  enum class Lifecycle { kLoading, kStarted, kStopping, kStopped, kFailed };

  struct Spec {
    std::string actor_id;
    std::string name;
    std::vector<std::string> key;
    std::uint32_t generation = 1;
    std::shared_ptr<const detail::ActorDefinitionData> definition;
    std::unique_ptr<storage::ActorStore> store;
  };

  ActorInstance(boost::asio::any_io_executor strand, Spec spec, const RuntimeConfig& config);
  ~ActorInstance() override;

  const boost::asio::any_io_executor& strand() const { return strand_; }
  Lifecycle lifecycle() const { return lifecycle_; }
  std::uint64_t durable_seq() const { return durable_seq_; }
  const std::string& key_string() const { return key_string_; }
  const detail::ActorDefinitionData& definition() const { return *definition_; }
  const RuntimeConfig& config() const { return config_; }

  /// Loads and runs the start hooks. On failure the instance is kFailed and must be discarded.
  Task<Result<void>> start();
  /// Waits for in-flight saves, then marks the instance stopped (no hooks yet: issue 3).
  Task<void> stop();

  // ---- connections ----------------------------------------------------------------------------

  /// Runs the connection preamble (on_before_connect, create_conn_state) and, on success, adds
  /// the connection and runs on_connect. On failure nothing is left behind and no on_disconnect
  /// runs (core-semantics.md §4).
  Task<Result<std::shared_ptr<Connection>>> open_connection(
      ConnKind kind, Value params, Request request, protocol::client::Encoding encoding,
      std::shared_ptr<net::WebSocket> transport);
  /// Removes the connection and runs on_disconnect (once, however many times it is called).
  Task<void> close_connection(std::shared_ptr<Connection> conn);

  // ---- actions and outputs --------------------------------------------------------------------

  /// Runs action `name` with the action timeout. Errors are returned, never thrown.
  Task<Result<Value>> run_action(Connection* conn, std::string name, Array args);
  /// Saves the state now if it changed; returns the sequence number outputs must wait for.
  std::uint64_t checkpoint();
  /// Resumes once save `seq` (or a later one) is durable; an error if it failed.
  Task<Result<void>> wait_durable(std::uint64_t seq);
  /// Encodes and queues an event for one connection (output-gated).
  void send_event(Connection& conn, const std::string& name, const Array& args);
  /// Queues a protocol message for a connection (output-gated on the current checkpoint).
  void send_message(Connection& conn, const protocol::client::ToClient& msg);
  /// Queues an encoded frame for a connection (output-gated on the current checkpoint).
  void send_frame(Connection& conn, net::WsMessage frame);
  /// {actorId, generation, key} for error messages.
  protocol::client::ActorSpecifier specifier() const;

  // ---- detail::ActorApi -----------------------------------------------------------------------
  const std::string& actor_id() const override { return actor_id_; }
  const std::string& name() const override { return name_; }
  const std::vector<std::string>& key() const override { return key_; }
  std::uint32_t generation() const override { return generation_; }
  detail::UserActorData* user_data() override { return data_.get(); }
  void mark_state_dirty() override;
  void broadcast(std::string event, Array args) override;
  std::vector<detail::ConnApi*> conns() override;
  boost::asio::any_io_executor executor() override { return strand_; }
  Task<void> save_state() override;
  Task<void> wait_for(std::chrono::milliseconds duration) override;
  void sleep() override;
  void destroy() override;

 private:
  Task<void> commit_state(std::uint64_t seq, std::string bytes);
  void on_durable_progress();
  template <class Fn>
  Task<Result<void>> run_hook(const char* what, Fn fn);

  boost::asio::any_io_executor strand_;
  std::string actor_id_;
  std::string name_;
  std::vector<std::string> key_;
  std::string key_string_;
  std::uint32_t generation_;
  std::shared_ptr<const detail::ActorDefinitionData> definition_;
  std::unique_ptr<storage::ActorStore> store_;
  const RuntimeConfig& config_;
  Lifecycle lifecycle_ = Lifecycle::kLoading;

  std::unique_ptr<detail::UserActorData> data_;
  std::map<std::string, std::shared_ptr<Connection>, std::less<>> connections_;

  // Output gate.
  bool dirty_ = false;
  bool save_posted_ = false;
  std::optional<std::string> last_saved_;  // bytes of the last state handed to the store
  std::uint64_t requested_seq_ = 0;
  std::uint64_t durable_seq_ = 0;
  std::uint64_t failed_seq_ = 0;  // highest failed save not superseded by a later success
  std::uint64_t commits_in_flight_ = 0;
  Notifier durability_;
};

}  // namespace rivetkit::core
