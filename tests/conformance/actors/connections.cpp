// conn-state.ts, conn-preflight-visibility.ts, conn-error-serialization.ts,
// reject-connection.ts: connection state, what the connection list shows during the handshake,
// errors thrown while connecting.

#include "fixture.hpp"

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace fixture {
namespace {

using std::chrono::milliseconds;

/// `value || fallback` for an optional string param (an empty string counts as missing).
std::string or_default(const std::optional<std::string>& value, const char* fallback) {
  return value.has_value() && !value->empty() ? *value : std::string(fallback);
}

// ---- conn-state.ts ---------------------------------------------------------------------------

struct SharedState {
  double sharedCounter = 0;
  double disconnectionCount = 0;
};
RIVETKIT_FIELDS(SharedState, sharedCounter, disconnectionCount)

struct UserParams {
  std::optional<std::string> username;
  std::optional<std::string> role;
  std::optional<bool> noCount;
};
RIVETKIT_FIELDS(UserParams, username, role, noCount)

struct UserConnState {
  std::string username;
  std::string role;
  double counter = 0;
  std::int64_t createdAt = 0;
  bool noCount = false;
};
RIVETKIT_FIELDS(UserConnState, username, role, counter, createdAt, noCount)

struct ConnUpdates {
  std::optional<std::string> username;
  std::optional<std::string> role;
};
RIVETKIT_FIELDS(ConnUpdates, username, role)

using ConnStateTypes =
    rivetkit::ActorTypes<SharedState, UserConnState, rivetkit::Empty, UserParams>;

/// `{id, ...connState}`.
template <class Conn>
rivetkit::Value conn_with_id(Conn conn) {
  rivetkit::Value out = rivetkit::Value::object({{"id", conn.id()}});
  rivetkit::Value state = rivetkit::to_value(conn.state());
  for (auto& member : state.as_object()) {
    out.set(member.key, std::move(member.value));
  }
  return out;
}

rivetkit::ActorDefinition conn_state_actor() {
  return rivetkit::actor<ConnStateTypes>("connStateActor")
      .create_conn_state([](auto&, const UserParams& params) {
        UserConnState state;
        state.username = or_default(params.username, "anonymous");
        state.role = or_default(params.role, "user");
        state.createdAt = now_ms();
        state.noCount = params.noCount.value_or(false);
        return state;
      })
      .on_connect([](auto& c, auto conn) {
        conn.send(
            "connectedFromOnConnect",
            rivetkit::Value::object({{"id", conn.id()}, {"username", conn.state().username}}));

        // The new connection must already be in the actor's connection list.
        std::optional<decltype(conn)> listed;
        for (auto other : c.conns()) {
          if (other.id() == conn.id()) {
            listed = other;
          }
        }
        if (!listed) {
          throw std::runtime_error("connection missing from c.conns in onConnect");
        }
        listed->send("connectedFromOnConnectConns",
                     rivetkit::Value::object(
                         {{"id", listed->id()}, {"username", listed->state().username}}));

        c.broadcast("userConnected",
                    rivetkit::Value::object(
                        {{"id", conn.id()}, {"username", "anonymous"}, {"role", "user"}}));
      })
      .on_disconnect([](auto& c, auto conn) {
        if (!conn.state().noCount) {
          c.state().disconnectionCount += 1;
          c.broadcast("userDisconnected", rivetkit::Value::object({{"id", conn.id()}}));
        }
      })
      .action("incrementConnCounter",
              [](auto& c, std::optional<double> amount) {
                c.conn().state().counter += amount.value_or(1);
              })
      .action("incrementSharedCounter",
              [](auto& c, std::optional<double> amount) {
                c.state().sharedCounter += amount.value_or(1);
                return c.state().sharedCounter;
              })
      .action("getConnectionState", [](auto& c) { return conn_with_id(c.conn()); })
      .action("getConnectionIds",
              [](auto& c) {
                std::vector<std::string> ids;
                for (auto conn : c.conns()) {
                  if (!conn.state().noCount) {
                    ids.push_back(conn.id());
                  }
                }
                return ids;
              })
      .action("getDisconnectionCount",
              [](auto& c) { return std::as_const(c).state().disconnectionCount; })
      .action("getAllConnectionStates",
              [](auto& c) {
                rivetkit::Array states;
                for (auto conn : c.conns()) {
                  states.push_back(conn_with_id(conn));
                }
                return states;
              })
      .action("sendToConnection",
              [](auto& c, std::string target_id, std::string message) {
                for (auto conn : c.conns()) {
                  if (conn.id() == target_id) {
                    conn.send("directMessage", rivetkit::Value::object({{"from", c.conn().id()},
                                                                        {"message", message}}));
                    return true;
                  }
                }
                return false;
              })
      .action("updateConnection",
              [](auto& c, const ConnUpdates& updates) {
                auto conn = c.conn();
                if (updates.username && !updates.username->empty()) {
                  conn.state().username = *updates.username;
                }
                if (updates.role && !updates.role->empty()) {
                  conn.state().role = *updates.role;
                }
                return conn.state();
              })
      .action("disconnectSelf", [](auto& c, std::optional<std::string> reason) {
        c.conn().disconnect(reason.value_or("test.disconnect"));
        return true;
      });
}

// ---- conn-preflight-visibility.ts ------------------------------------------------------------

struct PreflightParams {
  std::optional<std::string> label;
  std::optional<double> beforeDelayMs;
  std::optional<double> createDelayMs;
  std::optional<bool> rejectBefore;
  std::optional<bool> rejectCreate;
};
RIVETKIT_FIELDS(PreflightParams, label, beforeDelayMs, createDelayMs, rejectBefore, rejectCreate)

struct LabelConnState {
  std::optional<std::string> label;  // null while the connection has no state
};
RIVETKIT_FIELDS(LabelConnState, label)

using Labels = std::vector<std::optional<std::string>>;

struct ConnectSnapshot {
  std::optional<std::string> label;
  bool ownVisible = false;
  Labels visibleLabels;
};
RIVETKIT_FIELDS(ConnectSnapshot, label, ownVisible, visibleLabels)

struct DisconnectSnapshot {
  std::optional<std::string> label;
  Labels otherLabels;
};
RIVETKIT_FIELDS(DisconnectSnapshot, label, otherLabels)

struct PreflightState {
  std::int64_t beforeStarted = 0;
  std::int64_t createStarted = 0;
  std::vector<Labels> beforeVisibleLabels;
  std::vector<Labels> createVisibleLabels;
  std::vector<ConnectSnapshot> connectSnapshots;
  std::vector<DisconnectSnapshot> disconnectSnapshots;
};
RIVETKIT_FIELDS(PreflightState,
                beforeStarted,
                createStarted,
                beforeVisibleLabels,
                createVisibleLabels,
                connectSnapshots,
                disconnectSnapshots)

using PreflightTypes =
    rivetkit::ActorTypes<PreflightState, LabelConnState, rivetkit::Empty, PreflightParams>;

/// The labels of the connections the actor currently lists, except `skip_id`.
template <class Ctx>
Labels visible_labels(Ctx& c, const std::string& skip_id = {}) {
  Labels labels;
  for (auto conn : c.conns()) {
    if (skip_id.empty() || conn.id() != skip_id) {
      labels.push_back(conn.state().label);
    }
  }
  return labels;
}

milliseconds delay_of(const std::optional<double>& ms) {
  return milliseconds(static_cast<std::int64_t>(ms.value_or(0)));
}

rivetkit::ActorDefinition conn_preflight_visibility_actor() {
  return rivetkit::actor<PreflightTypes>("connPreflightVisibilityActor")
      .on_before_connect([](auto& c, const PreflightParams& params) -> rivetkit::Task<void> {
        c.state().beforeStarted += 1;
        c.state().beforeVisibleLabels.push_back(visible_labels(c));
        if (params.beforeDelayMs.value_or(0) != 0) {
          co_await c.wait(delay_of(params.beforeDelayMs));
        }
        if (params.rejectBefore.value_or(false)) {
          throw std::runtime_error("rejected before connect");
        }
      })
      .create_conn_state(
          [](auto& c, const PreflightParams& params) -> rivetkit::Task<LabelConnState> {
            c.state().createStarted += 1;
            c.state().createVisibleLabels.push_back(visible_labels(c));
            if (params.createDelayMs.value_or(0) != 0) {
              co_await c.wait(delay_of(params.createDelayMs));
            }
            if (params.rejectCreate.value_or(false)) {
              throw std::runtime_error("rejected create conn state");
            }
            co_return LabelConnState{params.label.value_or("anonymous")};
          })
      .on_connect([](auto& c, auto conn) {
        ConnectSnapshot snapshot;
        snapshot.label = conn.state().label;
        for (auto other : c.conns()) {
          snapshot.ownVisible = snapshot.ownVisible || other.id() == conn.id();
        }
        snapshot.visibleLabels = visible_labels(c);
        c.state().connectSnapshots.push_back(std::move(snapshot));
      })
      .on_disconnect([](auto& c, auto conn) {
        c.state().disconnectSnapshots.push_back(
            DisconnectSnapshot{conn.state().label, visible_labels(c, conn.id())});
      })
      .action("snapshot", [](auto& c) {
        rivetkit::Value out = rivetkit::to_value(std::as_const(c).state());
        out.set("visibleLabels", rivetkit::to_value(visible_labels(c)));
        return out;
      });
}

// ---- conn-error-serialization.ts -------------------------------------------------------------

struct ThrowParams {
  std::optional<bool> shouldThrow;
};
RIVETKIT_FIELDS(ThrowParams, shouldThrow)

struct InitializedConnState {
  bool initialized = false;
};
RIVETKIT_FIELDS(InitializedConnState, initialized)

struct ValueState {
  double value = 0;
};
RIVETKIT_FIELDS(ValueState, value)

using ConnErrorTypes =
    rivetkit::ActorTypes<ValueState, InitializedConnState, rivetkit::Empty, ThrowParams>;

rivetkit::ActorDefinition conn_error_serialization_actor() {
  return rivetkit::actor<ConnErrorTypes>("connErrorSerializationActor")
      .create_conn_state([](auto&, const ThrowParams& params) {
        if (params.shouldThrow.value_or(false)) {
          // A public error of our own group and code (not a UserError).
          throw rivetkit::ActorError(rivetkit::Error{
              "connection", "custom_error", "Test error from createConnState", std::nullopt, true});
        }
        return InitializedConnState{true};
      })
      .action("getValue", [](auto& c) { return std::as_const(c).state().value; });
}

// ---- reject-connection.ts --------------------------------------------------------------------

struct RejectParams {
  std::optional<bool> reject;
};
RIVETKIT_FIELDS(RejectParams, reject)

using RejectTypes =
    rivetkit::ActorTypes<rivetkit::Empty, rivetkit::Value, rivetkit::Empty, RejectParams>;

rivetkit::ActorDefinition reject_connection_actor() {
  return rivetkit::actor<RejectTypes>("rejectConnectionActor")
      .on_before_connect([](auto& c, const RejectParams& params) -> rivetkit::Task<void> {
        if (params.reject.value_or(false)) {
          co_await c.wait(milliseconds(500));
          throw rivetkit::UserError("Rejected connection", "rejected");
        }
      })
      .action("ping", [](auto&) { return std::string("pong"); });
}

}  // namespace

void add_connection_actors(rivetkit::Registry& registry) {
  registry.add(conn_state_actor());
  registry.add(conn_preflight_visibility_actor());
  registry.add(conn_error_serialization_actor());
  registry.add(reject_connection_actor());
}

}  // namespace fixture
