// Debug summaries of envoy messages (describe.hpp).

#include "protocol/envoy/describe.hpp"

#include <string_view>
#include <type_traits>
#include <variant>

namespace rivetkit::protocol::envoy {

namespace {

constexpr std::size_t kShortId = 8;

std::string short_id(std::string_view id) {
  if (id.size() <= kShortId) {
    return std::string(id);
  }
  return std::string(id.substr(0, kShortId)) + "..";
}

std::string hex4(const std::array<std::uint8_t, 4>& id) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (auto b : id) {
    out += kDigits[b >> 4];
    out += kDigits[b & 15];
  }
  return out;
}

std::string checkpoint(const ActorCheckpoint& c) {
  return short_id(c.actor_id) + "@" + std::to_string(c.generation) + "#" + std::to_string(c.index);
}

std::string bytes(std::string_view b) {
  return std::to_string(b.size()) + "B";
}

const char* stop_reason(StopActorReason r) {
  switch (r) {
    case StopActorReason::kSleepIntent:
      return "sleep_intent";
    case StopActorReason::kStopIntent:
      return "stop_intent";
    case StopActorReason::kDestroy:
      return "destroy";
    case StopActorReason::kGoingAway:
      return "going_away";
    case StopActorReason::kLost:
      return "lost";
  }
  return "?";
}

std::string event(const Event& e) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, EventActorIntent>) {
          return std::holds_alternative<ActorIntentSleep>(v.intent) ? "intent sleep"
                                                                    : "intent stop";
        } else if constexpr (std::is_same_v<T, EventActorStateUpdate>) {
          if (const auto* stopped = std::get_if<ActorStateStopped>(&v.state)) {
            std::string s = stopped->code == StopCode::kOk ? "stopped ok" : "stopped error";
            if (stopped->message) {
              s += " \"" + *stopped->message + "\"";
            }
            return s;
          }
          return "running";
        } else {
          return v.alarm_ts ? "alarm " + std::to_string(*v.alarm_ts) : "alarm none";
        }
      },
      e);
}

std::string command(const Command& c) {
  if (const auto* start = std::get_if<CommandStartActor>(&c)) {
    std::string s = "start " + start->config.name;
    if (!start->hibernating_requests.empty()) {
      s += " hib=" + std::to_string(start->hibernating_requests.size());
    }
    return s;
  }
  return std::string("stop ") + stop_reason(std::get<CommandStopActor>(c).reason);
}

std::string message_id(const MessageId& m) {
  return hex4(m.gateway_id) + ":" + hex4(m.request_id) + "#" + std::to_string(m.message_index);
}

template <class T>
std::string join(const std::vector<T>& items, std::string (*one)(const T&)) {
  std::string out;
  for (const auto& item : items) {
    if (!out.empty()) {
      out += ", ";
    }
    out += one(item);
  }
  return out;
}

std::string event_wrapper(const EventWrapper& e) {
  return checkpoint(e.checkpoint) + " " + event(e.inner);
}
std::string command_wrapper(const CommandWrapper& c) {
  return checkpoint(c.checkpoint) + " " + command(c.inner);
}

std::string kv_request(const KvRequestData& d) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, KvGetRequest>) {
          return "get " + std::to_string(v.keys.size()) + " keys";
        } else if constexpr (std::is_same_v<T, KvListRequest>) {
          return "list";
        } else if constexpr (std::is_same_v<T, KvPutRequest>) {
          return "put " + std::to_string(v.keys.size()) + " keys";
        } else if constexpr (std::is_same_v<T, KvDeleteRequest>) {
          return "delete " + std::to_string(v.keys.size()) + " keys";
        } else if constexpr (std::is_same_v<T, KvDeleteRangeRequest>) {
          return "delete_range";
        } else {
          return "drop";
        }
      },
      d);
}

std::string kv_response(const KvResponseData& d) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, KvErrorResponse>) {
          return "error \"" + v.message + "\"";
        } else if constexpr (std::is_same_v<T, KvGetResponse>) {
          return "get " + std::to_string(v.keys.size()) + " keys";
        } else if constexpr (std::is_same_v<T, KvListResponse>) {
          return "list " + std::to_string(v.keys.size()) + " keys";
        } else if constexpr (std::is_same_v<T, KvPutResponse>) {
          return "put ok";
        } else if constexpr (std::is_same_v<T, KvDeleteResponse>) {
          return "delete ok";
        } else {
          return "drop ok";
        }
      },
      d);
}

std::string to_envoy_tunnel(const ToEnvoyTunnelMessageKind& k) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, ToEnvoyRequestStart>) {
          return "request_start " + v.method + " " + v.path + (v.stream ? " stream" : "")
                 + (v.body ? " body=" + bytes(*v.body) : "");
        } else if constexpr (std::is_same_v<T, ToEnvoyRequestChunk>) {
          return "request_chunk " + bytes(v.body) + (v.finish ? " finish" : "");
        } else if constexpr (std::is_same_v<T, ToEnvoyRequestAbort>) {
          return "request_abort";
        } else if constexpr (std::is_same_v<T, ToEnvoyRequestBodyCancel>) {
          return "request_body_cancel";
        } else if constexpr (std::is_same_v<T, ToEnvoyResponseBodyWindowUpdate>) {
          return "response_window +" + std::to_string(v.consumed_bytes);
        } else if constexpr (std::is_same_v<T, ToEnvoyWebSocketOpen>) {
          return "ws_open " + v.path;
        } else if constexpr (std::is_same_v<T, ToEnvoyWebSocketMessage>) {
          return "ws_message " + bytes(v.data) + (v.binary ? " binary" : " text");
        } else {
          return "ws_close" + (v.code ? " " + std::to_string(*v.code) : std::string());
        }
      },
      k);
}

std::string to_rivet_tunnel(const ToRivetTunnelMessageKind& k) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, ToRivetResponseStart>) {
          return "response_start " + std::to_string(v.status) + (v.stream ? " stream" : "")
                 + (v.body ? " body=" + bytes(*v.body) : "");
        } else if constexpr (std::is_same_v<T, ToRivetResponseChunk>) {
          return "response_chunk " + bytes(v.body) + (v.finish ? " finish" : "");
        } else if constexpr (std::is_same_v<T, ToRivetResponseAbort>) {
          return "response_abort";
        } else if constexpr (std::is_same_v<T, ToRivetRequestBodyWindowUpdate>) {
          return "request_window +" + std::to_string(v.consumed_bytes);
        } else if constexpr (std::is_same_v<T, ToRivetRequestBodyCancel>) {
          return "request_body_cancel";
        } else if constexpr (std::is_same_v<T, ToRivetWebSocketOpen>) {
          return std::string("ws_open") + (v.can_hibernate ? " hibernatable" : "");
        } else if constexpr (std::is_same_v<T, ToRivetWebSocketMessage>) {
          return "ws_message " + bytes(v.data) + (v.binary ? " binary" : " text");
        } else if constexpr (std::is_same_v<T, ToRivetWebSocketMessageAck>) {
          return "ws_ack " + std::to_string(v.index);
        } else {
          return "ws_close" + (v.code ? " " + std::to_string(*v.code) : std::string())
                 + (v.hibernate ? " hibernate" : "");
        }
      },
      k);
}

/// "ok" or "error group.code" for the SQLite response unions (alternative 1 is always the error).
template <class Response>
std::string sqlite_result(const Response& r) {
  if (const auto* err = std::get_if<SqliteErrorResponse>(&r)) {
    return "error " + err->group + "." + err->code;
  }
  return "ok";
}

}  // namespace

std::string describe(const ToRivet& message) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, ToRivetMetadata>) {
          return "ToRivetMetadata[names="
                 + std::to_string(v.prepopulate_actor_names ? v.prepopulate_actor_names->size() : 0)
                 + "]";
        } else if constexpr (std::is_same_v<T, ToRivetEvents>) {
          return "ToRivetEvents[" + join(v.events, &event_wrapper) + "]";
        } else if constexpr (std::is_same_v<T, ToRivetAckCommands>) {
          return "ToRivetAckCommands[" + join(v.last_command_checkpoints, &checkpoint) + "]";
        } else if constexpr (std::is_same_v<T, ToRivetStopping>) {
          return "ToRivetStopping";
        } else if constexpr (std::is_same_v<T, ToRivetPong>) {
          return "ToRivetPong[" + std::to_string(v.ts) + "]";
        } else if constexpr (std::is_same_v<T, ToRivetKvRequest>) {
          return "ToRivetKvRequest[" + short_id(v.actor_id) + " req=" + std::to_string(v.request_id)
                 + " " + kv_request(v.data) + "]";
        } else if constexpr (std::is_same_v<T, ToRivetTunnelMessage>) {
          return "ToRivetTunnelMessage[" + message_id(v.message_id) + " "
                 + to_rivet_tunnel(v.message_kind) + "]";
        } else if constexpr (std::is_same_v<T, ToRivetSqliteGetPagesRequest>) {
          return "ToRivetSqliteGetPagesRequest[req=" + std::to_string(v.request_id) + " "
                 + short_id(v.data.actor_id) + " pages=" + std::to_string(v.data.pgnos.size())
                 + "]";
        } else if constexpr (std::is_same_v<T, ToRivetSqliteCommitRequest>) {
          return "ToRivetSqliteCommitRequest[req=" + std::to_string(v.request_id) + " "
                 + short_id(v.data.actor_id) + " dirty=" + std::to_string(v.data.dirty_pages.size())
                 + "]";
        } else if constexpr (std::is_same_v<T, ToRivetSqliteCommitStageBeginRequest>) {
          return "ToRivetSqliteCommitStageBeginRequest[req=" + std::to_string(v.request_id) + " "
                 + short_id(v.data.actor_id) + "]";
        } else if constexpr (std::is_same_v<T, ToRivetSqliteCommitStageSegmentRequest>) {
          return "ToRivetSqliteCommitStageSegmentRequest[req=" + std::to_string(v.request_id) + " "
                 + short_id(v.data.actor_id) + " txid=" + std::to_string(v.data.txid)
                 + " dirty=" + std::to_string(v.data.dirty_pages.size()) + "]";
        } else if constexpr (std::is_same_v<T, ToRivetSqliteCommitFinalizeRequest>) {
          return "ToRivetSqliteCommitFinalizeRequest[req=" + std::to_string(v.request_id) + " "
                 + short_id(v.data.actor_id) + " txid=" + std::to_string(v.data.txid) + "]";
        } else if constexpr (std::is_same_v<T, ToRivetSqliteExecRequest>) {
          return "ToRivetSqliteExecRequest[req=" + std::to_string(v.request_id) + " "
                 + short_id(v.data.actor_id) + "]";
        } else if constexpr (std::is_same_v<T, ToRivetSqliteExecuteRequest>) {
          return "ToRivetSqliteExecuteRequest[req=" + std::to_string(v.request_id) + " "
                 + short_id(v.data.actor_id) + "]";
        } else {
          static_assert(std::is_same_v<T, ToRivetSqliteExecuteBatchRequest>);
          return "ToRivetSqliteExecuteBatchRequest[req=" + std::to_string(v.request_id) + " "
                 + short_id(v.data.actor_id)
                 + " statements=" + std::to_string(v.data.statements.size()) + "]";
        }
      },
      message);
}

std::string describe(const ToEnvoy& message) {
  return std::visit(
      [](const auto& v) -> std::string {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, ToEnvoyInit>) {
          return "ToEnvoyInit[lost=" + std::to_string(v.metadata.envoy_lost_threshold)
                 + "ms stop=" + std::to_string(v.metadata.actor_stop_threshold)
                 + "ms max_payload=" + std::to_string(v.metadata.max_response_payload_size) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoyCommands>) {
          return "ToEnvoyCommands[" + join(v.commands, &command_wrapper) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoyAckEvents>) {
          return "ToEnvoyAckEvents[" + join(v.last_event_checkpoints, &checkpoint) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoyKvResponse>) {
          return "ToEnvoyKvResponse[req=" + std::to_string(v.request_id) + " " + kv_response(v.data)
                 + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoyTunnelMessage>) {
          return "ToEnvoyTunnelMessage[" + message_id(v.message_id) + " "
                 + to_envoy_tunnel(v.message_kind) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoyPing>) {
          return "ToEnvoyPing[" + std::to_string(v.ts) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoySqliteGetPagesResponse>) {
          return "ToEnvoySqliteGetPagesResponse[req=" + std::to_string(v.request_id) + " "
                 + sqlite_result(v.data) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoySqliteCommitResponse>) {
          return "ToEnvoySqliteCommitResponse[req=" + std::to_string(v.request_id) + " "
                 + sqlite_result(v.data) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoySqliteCommitStageBeginResponse>) {
          return "ToEnvoySqliteCommitStageBeginResponse[req=" + std::to_string(v.request_id) + " "
                 + sqlite_result(v.data) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoySqliteCommitStageSegmentResponse>) {
          return "ToEnvoySqliteCommitStageSegmentResponse[req=" + std::to_string(v.request_id) + " "
                 + sqlite_result(v.data) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoySqliteCommitFinalizeResponse>) {
          return "ToEnvoySqliteCommitFinalizeResponse[req=" + std::to_string(v.request_id) + " "
                 + sqlite_result(v.data) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoySqliteExecResponse>) {
          return "ToEnvoySqliteExecResponse[req=" + std::to_string(v.request_id) + " "
                 + sqlite_result(v.data) + "]";
        } else if constexpr (std::is_same_v<T, ToEnvoySqliteExecuteResponse>) {
          return "ToEnvoySqliteExecuteResponse[req=" + std::to_string(v.request_id) + " "
                 + sqlite_result(v.data) + "]";
        } else {
          static_assert(std::is_same_v<T, ToEnvoySqliteExecuteBatchResponse>);
          return "ToEnvoySqliteExecuteBatchResponse[req=" + std::to_string(v.request_id) + " "
                 + sqlite_result(v.data) + "]";
        }
      },
      message);
}

}  // namespace rivetkit::protocol::envoy
