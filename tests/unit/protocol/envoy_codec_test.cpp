// Envoy protocol v8 codec (src/protocol/envoy): golden frames from a real engine/runtime pair
// (vectors/envoy/frames.jsonl and the raw WebSocket captures), the hand-decoded frames of
// envoy-protocol.md §6, round trips of every message kind, and malformed input.

#include "protocol/envoy/codec.hpp"
#include "protocol/envoy/describe.hpp"
#include "protocol/envoy/messages.hpp"
#include "protocol/json/json.hpp"
#include "test_support.hpp"

#include <gtest/gtest-spi.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rivetkit::protocol::envoy {
namespace {

using test::from_hex;
using test::to_hex;

std::string envoy_vector_path(std::string_view name) {
  return std::string(RIVETKIT_VECTORS_DIR) + "/envoy/" + std::string(name);
}

// ---- frames.jsonl ---------------------------------------------------------------------------

struct GoldenFrame {
  std::string name;
  std::string top;  // "ToRivet" | "ToEnvoy"
  std::string variant;
  std::int64_t len = 0;
  std::string bytes;
  Value decoded;
};

std::vector<GoldenFrame> load_frames() {
  std::vector<GoldenFrame> frames;
  std::istringstream in(test::read_file(envoy_vector_path("frames.jsonl")));
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty()) {
      continue;
    }
    auto parsed = json_parse(line);
    if (!parsed) {
      ADD_FAILURE() << "bad JSON line: " << parsed.error().message;
      continue;
    }
    const Value& v = *parsed;
    GoldenFrame f;
    f.name = v.find("name")->as_string();
    f.top = v.find("top")->as_string();
    f.variant = v.find("variant")->as_string();
    f.len = v.find("len")->as_int();
    f.bytes = from_hex(v.find("hex")->as_string());
    f.decoded = *v.find("decoded");
    frames.push_back(std::move(f));
  }
  return frames;
}

const GoldenFrame& frame_named(const std::vector<GoldenFrame>& frames, std::string_view name) {
  for (const auto& f : frames) {
    if (f.name == name) {
      return f;
    }
  }
  throw std::runtime_error("no frame named " + std::string(name));
}

// ---- our messages as Values in the vectors' "decoded" notation --------------------------------
// Unions: {"tag","tagNum","val"} (val null for void); enums: their names; maps: objects; bytes:
// Value bytes (matched against {"utf8":..} or {"hex":..,"len":n} below).

class ToValue {
 public:
  template <class Variant, std::size_t N>
  Value tagged(const Variant& v, const char* const (&names)[N]) {
    static_assert(N == std::variant_size_v<Variant>);
    Value val = std::visit([this](const auto& alt) { return of(alt); }, v);
    return Value::object(
        {{"tag", names[v.index()]}, {"tagNum", v.index()}, {"val", std::move(val)}});
  }
  static Value bytes(std::string_view s) { return Value(Bytes(s.begin(), s.end())); }
  static Value bytes(const std::array<std::uint8_t, 4>& a) {
    return Value(Bytes(a.begin(), a.end()));
  }
  template <class T, class F>
  static Value opt(const std::optional<T>& v, F f) {
    return v ? f(*v) : Value(nullptr);
  }
  template <class T>
  static Value opt(const std::optional<T>& v) {
    return v ? Value(*v) : Value(nullptr);
  }
  static Value opt_bytes(const std::optional<std::string>& v) {
    return v ? bytes(*v) : Value(nullptr);
  }
  static Value bytes_list(const std::vector<std::string>& v) {
    Array a;
    for (const auto& s : v) {
      a.push_back(bytes(s));
    }
    return Value(std::move(a));
  }
  template <class T>
  Value list(const std::vector<T>& v) {
    Array a;
    for (const auto& x : v) {
      a.push_back(of(x));
    }
    return Value(std::move(a));
  }
  static Value plain_list(const auto& v) {
    Array a;
    for (const auto& x : v) {
      a.push_back(Value(x));
    }
    return Value(std::move(a));
  }
  static Value headers(const Headers& h) {
    Object o;
    for (const auto& [k, v] : h) {
      o.push_back(Member{k, Value(v)});
    }
    return Value(std::move(o));
  }

  // void members
  template <class T>
  requires std::is_empty_v<T> Value of(const T&) { return Value(nullptr); }

  Value of(const KvMetadata& v) {
    return Value::object({{"version", bytes(v.version)}, {"updateTs", v.update_ts}});
  }
  Value of(const KvListRangeQuery& v) {
    return Value::object(
        {{"start", bytes(v.start)}, {"end", bytes(v.end)}, {"exclusive", v.exclusive}});
  }
  Value of(const KvListPrefixQuery& v) { return Value::object({{"key", bytes(v.key)}}); }
  Value of(const KvGetRequest& v) { return Value::object({{"keys", bytes_list(v.keys)}}); }
  Value of(const KvListRequest& v) {
    static constexpr const char* kNames[] = {"KvListAllQuery", "KvListRangeQuery",
                                             "KvListPrefixQuery"};
    return Value::object(
        {{"query", tagged(v.query, kNames)}, {"reverse", opt(v.reverse)}, {"limit", opt(v.limit)}});
  }
  Value of(const KvPutRequest& v) {
    return Value::object({{"keys", bytes_list(v.keys)}, {"values", bytes_list(v.values)}});
  }
  Value of(const KvDeleteRequest& v) { return Value::object({{"keys", bytes_list(v.keys)}}); }
  Value of(const KvDeleteRangeRequest& v) {
    return Value::object({{"start", bytes(v.start)}, {"end", bytes(v.end)}});
  }
  Value of(const KvErrorResponse& v) { return Value::object({{"message", v.message}}); }
  Value of(const KvGetResponse& v) {
    return Value::object({{"keys", bytes_list(v.keys)},
                          {"values", bytes_list(v.values)},
                          {"metadata", list(v.metadata)}});
  }
  Value of(const KvListResponse& v) {
    return Value::object({{"keys", bytes_list(v.keys)},
                          {"values", bytes_list(v.values)},
                          {"metadata", list(v.metadata)}});
  }

  Value of(const SqliteDirtyPage& v) {
    return Value::object({{"pgno", v.pgno}, {"bytes", bytes(v.bytes)}});
  }
  Value of(const SqliteFetchedPage& v) {
    return Value::object({{"pgno", v.pgno}, {"bytes", opt_bytes(v.bytes)}});
  }
  Value of(const SqliteErrorResponse& v) {
    return Value::object({{"group", v.group}, {"code", v.code}, {"message", v.message}});
  }
  Value of(const SqliteGetPagesRequest& v) {
    return Value::object({{"actorId", v.actor_id},
                          {"pgnos", plain_list(v.pgnos)},
                          {"expectedGeneration", opt(v.expected_generation)},
                          {"expectedHeadTxid", opt(v.expected_head_txid)}});
  }
  Value of(const SqliteGetPagesOk& v) {
    return Value::object({{"pages", list(v.pages)}, {"headTxid", opt(v.head_txid)}});
  }
  Value of(const SqliteCommitRequest& v) {
    return Value::object({{"actorId", v.actor_id},
                          {"dirtyPages", list(v.dirty_pages)},
                          {"dbSizePages", v.db_size_pages},
                          {"nowMs", v.now_ms},
                          {"expectedGeneration", opt(v.expected_generation)},
                          {"expectedHeadTxid", opt(v.expected_head_txid)}});
  }
  Value of(const SqliteCommitOk& v) { return Value::object({{"headTxid", opt(v.head_txid)}}); }
  Value of(const SqliteCommitStageBeginRequest& v) {
    return Value::object({{"actorId", v.actor_id},
                          {"expectedGeneration", opt(v.expected_generation)},
                          {"expectedHeadTxid", opt(v.expected_head_txid)}});
  }
  Value of(const SqliteCommitStageBeginOk& v) { return Value::object({{"txid", v.txid}}); }
  Value of(const SqliteCommitStageSegmentRequest& v) {
    return Value::object({{"actorId", v.actor_id},
                          {"expectedGeneration", opt(v.expected_generation)},
                          {"txid", v.txid},
                          {"firstPgno", v.first_pgno},
                          {"dirtyPages", list(v.dirty_pages)}});
  }
  Value of(const SqliteCommitStageSegmentOk& v) {
    return Value::object({{"stagedBytes", v.staged_bytes}});
  }
  Value of(const SqliteCommitFinalizeRequest& v) {
    return Value::object({{"actorId", v.actor_id},
                          {"expectedGeneration", opt(v.expected_generation)},
                          {"txid", v.txid},
                          {"newDbSizePages", v.new_db_size_pages},
                          {"nowMs", v.now_ms},
                          {"segmentFirstPgnos", plain_list(v.segment_first_pgnos)}});
  }
  Value of(const SqliteCommitFinalizeOk& v) {
    return Value::object({{"headTxid", opt(v.head_txid)}});
  }
  Value of(const SqliteValueInteger& v) { return Value::object({{"value", v.value}}); }
  Value of(const SqliteValueFloat& v) {
    return Value::object({{"value", Value(Bytes(v.value.begin(), v.value.end()))}});
  }
  Value of(const SqliteValueText& v) { return Value::object({{"value", v.value}}); }
  Value of(const SqliteValueBlob& v) { return Value::object({{"value", bytes(v.value)}}); }
  Value of(const SqliteValue& v) {
    static constexpr const char* kNames[] = {"SqliteValueNull", "SqliteValueInteger",
                                             "SqliteValueFloat", "SqliteValueText",
                                             "SqliteValueBlob"};
    return tagged(v, kNames);
  }
  Value of(const std::vector<SqliteValue>& row) { return list(row); }
  Value of(const SqliteQueryResult& v) {
    return Value::object({{"columns", plain_list(v.columns)}, {"rows", list(v.rows)}});
  }
  Value of(const SqliteExecuteResult& v) {
    return Value::object({{"columns", plain_list(v.columns)},
                          {"rows", list(v.rows)},
                          {"changes", v.changes},
                          {"lastInsertRowId", opt(v.last_insert_row_id)}});
  }
  Value params(const std::optional<std::vector<SqliteBindParam>>& p) {
    return p ? list(*p) : Value(nullptr);
  }
  Value of(const SqliteExecRequest& v) {
    return Value::object({{"namespaceId", v.namespace_id},
                          {"actorId", v.actor_id},
                          {"generation", v.generation},
                          {"sql", v.sql}});
  }
  Value of(const SqliteExecuteRequest& v) {
    return Value::object({{"namespaceId", v.namespace_id},
                          {"actorId", v.actor_id},
                          {"generation", v.generation},
                          {"sql", v.sql},
                          {"params", params(v.params)}});
  }
  Value of(const SqliteBatchStatement& v) {
    return Value::object({{"sql", v.sql}, {"params", params(v.params)}});
  }
  Value of(const SqliteExecuteBatchRequest& v) {
    return Value::object({{"namespaceId", v.namespace_id},
                          {"actorId", v.actor_id},
                          {"generation", v.generation},
                          {"statements", list(v.statements)}});
  }
  Value of(const SqliteExecOk& v) { return Value::object({{"result", of(v.result)}}); }
  Value of(const SqliteExecuteOk& v) { return Value::object({{"result", of(v.result)}}); }
  Value of(const SqliteExecuteBatchOk& v) { return Value::object({{"results", list(v.results)}}); }

  Value of(const ActorName& v) { return Value::object({{"metadata", v.metadata}}); }
  Value of(const ActorConfig& v) {
    return Value::object({{"name", v.name},
                          {"key", opt(v.key)},
                          {"createTs", v.create_ts},
                          {"input", opt_bytes(v.input)}});
  }
  Value of(const ActorCheckpoint& v) {
    return Value::object(
        {{"actorId", v.actor_id}, {"generation", v.generation}, {"index", v.index}});
  }
  Value of(const ActorStateStopped& v) {
    return Value::object(
        {{"code", v.code == StopCode::kOk ? "OK" : "ERROR"}, {"message", opt(v.message)}});
  }
  Value of(const EventActorIntent& v) {
    static constexpr const char* kNames[] = {"ActorIntentSleep", "ActorIntentStop"};
    return Value::object({{"intent", tagged(v.intent, kNames)}});
  }
  Value of(const EventActorStateUpdate& v) {
    static constexpr const char* kNames[] = {"ActorStateRunning", "ActorStateStopped"};
    return Value::object({{"state", tagged(v.state, kNames)}});
  }
  Value of(const EventActorSetAlarm& v) { return Value::object({{"alarmTs", opt(v.alarm_ts)}}); }
  Value of(const EventWrapper& v) {
    static constexpr const char* kNames[] = {"EventActorIntent", "EventActorStateUpdate",
                                             "EventActorSetAlarm"};
    return Value::object({{"checkpoint", of(v.checkpoint)}, {"inner", tagged(v.inner, kNames)}});
  }
  Value of(const PreloadedKvEntry& v) {
    return Value::object(
        {{"key", bytes(v.key)}, {"value", bytes(v.value)}, {"metadata", of(v.metadata)}});
  }
  Value of(const PreloadedKv& v) {
    return Value::object({{"entries", list(v.entries)},
                          {"requestedGetKeys", bytes_list(v.requested_get_keys)},
                          {"requestedPrefixes", bytes_list(v.requested_prefixes)}});
  }
  Value of(const HibernatingRequest& v) {
    return Value::object({{"gatewayId", bytes(v.gateway_id)}, {"requestId", bytes(v.request_id)}});
  }
  Value of(const CommandStartActor& v) {
    return Value::object({{"config", of(v.config)},
                          {"hibernatingRequests", list(v.hibernating_requests)},
                          {"preloadedKv", v.preloaded_kv ? of(*v.preloaded_kv) : Value(nullptr)}});
  }
  Value of(const CommandStopActor& v) {
    static constexpr const char* kReasons[] = {"SLEEP_INTENT", "STOP_INTENT", "DESTROY",
                                               "GOING_AWAY", "LOST"};
    return Value::object({{"reason", kReasons[static_cast<std::size_t>(v.reason)]}});
  }
  Value of(const CommandWrapper& v) {
    static constexpr const char* kNames[] = {"CommandStartActor", "CommandStopActor"};
    return Value::object({{"checkpoint", of(v.checkpoint)}, {"inner", tagged(v.inner, kNames)}});
  }

  Value of(const MessageId& v) {
    return Value::object({{"gatewayId", bytes(v.gateway_id)},
                          {"requestId", bytes(v.request_id)},
                          {"messageIndex", v.message_index}});
  }
  Value of(const HttpStreamAbortReason& v) {
    static constexpr const char* kKinds[] = {"UNKNOWN", "CANCELLED", "HANDLER_ERROR",
                                             "INTERNAL_ERROR"};
    return Value::object(
        {{"kind", kKinds[static_cast<std::size_t>(v.kind)]}, {"detail", opt(v.detail)}});
  }
  Value of(const ToEnvoyRequestStart& v) {
    return Value::object({{"actorId", v.actor_id},
                          {"actorGeneration", opt(v.actor_generation)},
                          {"method", v.method},
                          {"path", v.path},
                          {"headers", headers(v.headers)},
                          {"body", opt_bytes(v.body)},
                          {"stream", v.stream},
                          {"responseStream", v.response_stream}});
  }
  Value of(const ToEnvoyRequestChunk& v) {
    return Value::object({{"body", bytes(v.body)}, {"finish", v.finish}});
  }
  Value of(const ToEnvoyRequestAbort& v) {
    return Value::object({{"actorId", opt(v.actor_id)},
                          {"actorGeneration", opt(v.actor_generation)},
                          {"reason", of(v.reason)}});
  }
  Value of(const ToEnvoyResponseBodyWindowUpdate& v) {
    return Value::object({{"consumedBytes", v.consumed_bytes}});
  }
  Value of(const ToEnvoyWebSocketOpen& v) {
    return Value::object({{"actorId", v.actor_id},
                          {"actorGeneration", opt(v.actor_generation)},
                          {"path", v.path},
                          {"headers", headers(v.headers)}});
  }
  Value of(const ToEnvoyWebSocketMessage& v) {
    return Value::object({{"data", bytes(v.data)}, {"binary", v.binary}});
  }
  Value of(const ToEnvoyWebSocketClose& v) {
    return Value::object({{"code", opt(v.code)}, {"reason", opt(v.reason)}});
  }
  Value of(const ToRivetResponseStart& v) {
    return Value::object({{"status", v.status},
                          {"headers", headers(v.headers)},
                          {"body", opt_bytes(v.body)},
                          {"stream", v.stream}});
  }
  Value of(const ToRivetResponseChunk& v) {
    return Value::object({{"body", bytes(v.body)}, {"finish", v.finish}});
  }
  Value of(const ToRivetResponseAbort& v) { return Value::object({{"reason", of(v.reason)}}); }
  Value of(const ToRivetRequestBodyWindowUpdate& v) {
    return Value::object({{"consumedBytes", v.consumed_bytes}});
  }
  Value of(const ToRivetWebSocketOpen& v) {
    return Value::object({{"canHibernate", v.can_hibernate}});
  }
  Value of(const ToRivetWebSocketMessage& v) {
    return Value::object({{"data", bytes(v.data)}, {"binary", v.binary}});
  }
  Value of(const ToRivetWebSocketMessageAck& v) { return Value::object({{"index", v.index}}); }
  Value of(const ToRivetWebSocketClose& v) {
    return Value::object(
        {{"code", opt(v.code)}, {"reason", opt(v.reason)}, {"hibernate", v.hibernate}});
  }
  Value of(const ToEnvoyTunnelMessage& v) {
    static constexpr const char* kNames[] = {"ToEnvoyRequestStart",
                                             "ToEnvoyRequestChunk",
                                             "ToEnvoyRequestAbort",
                                             "ToEnvoyRequestBodyCancel",
                                             "ToEnvoyResponseBodyWindowUpdate",
                                             "ToEnvoyWebSocketOpen",
                                             "ToEnvoyWebSocketMessage",
                                             "ToEnvoyWebSocketClose"};
    return Value::object(
        {{"messageId", of(v.message_id)}, {"messageKind", tagged(v.message_kind, kNames)}});
  }
  Value of(const ToRivetTunnelMessage& v) {
    static constexpr const char* kNames[] = {
        "ToRivetResponseStart",           "ToRivetResponseChunk",       "ToRivetResponseAbort",
        "ToRivetRequestBodyWindowUpdate", "ToRivetRequestBodyCancel",   "ToRivetWebSocketOpen",
        "ToRivetWebSocketMessage",        "ToRivetWebSocketMessageAck", "ToRivetWebSocketClose"};
    return Value::object(
        {{"messageId", of(v.message_id)}, {"messageKind", tagged(v.message_kind, kNames)}});
  }

  Value of(const ToRivetMetadata& v) {
    Value names(nullptr);
    if (v.prepopulate_actor_names) {
      Object o;
      for (const auto& [k, n] : *v.prepopulate_actor_names) {
        o.push_back(Member{k, of(n)});
      }
      names = Value(std::move(o));
    }
    return Value::object(
        {{"prepopulateActorNames", std::move(names)}, {"metadata", opt(v.metadata)}});
  }
  Value of(const ToRivetEvents& v) { return list(v.events); }
  Value of(const ToRivetAckCommands& v) {
    return Value::object({{"lastCommandCheckpoints", list(v.last_command_checkpoints)}});
  }
  Value of(const ToRivetPong& v) { return Value::object({{"ts", v.ts}}); }
  Value of(const ToRivetKvRequest& v) {
    static constexpr const char* kNames[] = {"KvGetRequest",         "KvListRequest",
                                             "KvPutRequest",         "KvDeleteRequest",
                                             "KvDeleteRangeRequest", "KvDropRequest"};
    return Value::object(
        {{"actorId", v.actor_id}, {"requestId", v.request_id}, {"data", tagged(v.data, kNames)}});
  }
  template <class Request>
  requires requires(Request r) { r.data.actor_id; }
  Value of(const Request& v) {
    return Value::object({{"requestId", v.request_id}, {"data", of(v.data)}});
  }

  Value of(const ToEnvoyInit& v) {
    return Value::object(
        {{"metadata",
          Value::object({{"envoyLostThreshold", v.metadata.envoy_lost_threshold},
                         {"actorStopThreshold", v.metadata.actor_stop_threshold},
                         {"maxResponsePayloadSize", v.metadata.max_response_payload_size}})}});
  }
  Value of(const ToEnvoyCommands& v) { return list(v.commands); }
  Value of(const ToEnvoyAckEvents& v) {
    return Value::object({{"lastEventCheckpoints", list(v.last_event_checkpoints)}});
  }
  Value of(const ToEnvoyKvResponse& v) {
    static constexpr const char* kNames[] = {"KvErrorResponse",  "KvGetResponse",
                                             "KvListResponse",   "KvPutResponse",
                                             "KvDeleteResponse", "KvDropResponse"};
    return Value::object({{"requestId", v.request_id}, {"data", tagged(v.data, kNames)}});
  }
  Value of(const ToEnvoyPing& v) { return Value::object({{"ts", v.ts}}); }
  template <class Ok>
  Value response(std::uint32_t request_id,
                 const std::variant<Ok, SqliteErrorResponse>& data,
                 const char* ok_name) {
    const char* const names[] = {ok_name, "SqliteErrorResponse"};
    Value val = std::visit([this](const auto& alt) { return of(alt); }, data);
    return Value::object({{"requestId", request_id},
                          {"data", Value::object({{"tag", names[data.index()]},
                                                  {"tagNum", data.index()},
                                                  {"val", std::move(val)}})}});
  }
  Value of(const ToEnvoySqliteGetPagesResponse& v) {
    return response(v.request_id, v.data, "SqliteGetPagesOk");
  }
  Value of(const ToEnvoySqliteCommitResponse& v) {
    return response(v.request_id, v.data, "SqliteCommitOk");
  }
  Value of(const ToEnvoySqliteCommitStageBeginResponse& v) {
    return response(v.request_id, v.data, "SqliteCommitStageBeginOk");
  }
  Value of(const ToEnvoySqliteCommitStageSegmentResponse& v) {
    return response(v.request_id, v.data, "SqliteCommitStageSegmentOk");
  }
  Value of(const ToEnvoySqliteCommitFinalizeResponse& v) {
    return response(v.request_id, v.data, "SqliteCommitFinalizeOk");
  }
  Value of(const ToEnvoySqliteExecResponse& v) {
    return response(v.request_id, v.data, "SqliteExecOk");
  }
  Value of(const ToEnvoySqliteExecuteResponse& v) {
    return response(v.request_id, v.data, "SqliteExecuteOk");
  }
  Value of(const ToEnvoySqliteExecuteBatchResponse& v) {
    return response(v.request_id, v.data, "SqliteExecuteBatchOk");
  }

  Value top(const ToRivet& m) {
    static constexpr const char* kNames[] = {"ToRivetMetadata",
                                             "ToRivetEvents",
                                             "ToRivetAckCommands",
                                             "ToRivetStopping",
                                             "ToRivetPong",
                                             "ToRivetKvRequest",
                                             "ToRivetTunnelMessage",
                                             "ToRivetSqliteGetPagesRequest",
                                             "ToRivetSqliteCommitRequest",
                                             "ToRivetSqliteCommitStageBeginRequest",
                                             "ToRivetSqliteCommitStageSegmentRequest",
                                             "ToRivetSqliteCommitFinalizeRequest",
                                             "ToRivetSqliteExecRequest",
                                             "ToRivetSqliteExecuteRequest",
                                             "ToRivetSqliteExecuteBatchRequest"};
    return tagged(m, kNames);
  }
  Value top(const ToEnvoy& m) {
    static constexpr const char* kNames[] = {"ToEnvoyInit",
                                             "ToEnvoyCommands",
                                             "ToEnvoyAckEvents",
                                             "ToEnvoyKvResponse",
                                             "ToEnvoyTunnelMessage",
                                             "ToEnvoyPing",
                                             "ToEnvoySqliteGetPagesResponse",
                                             "ToEnvoySqliteCommitResponse",
                                             "ToEnvoySqliteCommitStageBeginResponse",
                                             "ToEnvoySqliteCommitStageSegmentResponse",
                                             "ToEnvoySqliteCommitFinalizeResponse",
                                             "ToEnvoySqliteExecResponse",
                                             "ToEnvoySqliteExecuteResponse",
                                             "ToEnvoySqliteExecuteBatchResponse"};
    return tagged(m, kNames);
  }
};

/// Compares the vectors' JSON (`expected`) with our Value (`actual`). Bytes match
/// {"utf8": s} exactly or {"hex": h, "len": n}, where h may be a prefix ending in "...".
void expect_match(const Value& expected, const Value& actual, const std::string& path) {
  if (actual.is_bytes()) {
    const auto& b = actual.as_bytes();
    const std::string s(b.begin(), b.end());
    ASSERT_TRUE(expected.is_object()) << path << ": expected " << to_debug_string(expected);
    if (const Value* utf8 = expected.find("utf8")) {
      EXPECT_EQ(utf8->as_string(), s) << path;
      return;
    }
    const Value* hex = expected.find("hex");
    const Value* len = expected.find("len");
    ASSERT_TRUE(hex != nullptr && len != nullptr) << path;
    EXPECT_EQ(len->as_int(), static_cast<std::int64_t>(s.size())) << path;
    std::string h = hex->as_string();
    const std::string actual_hex = to_hex(s);
    if (h.size() >= 3 && h.compare(h.size() - 3, 3, "...") == 0) {
      h.resize(h.size() - 3);
      EXPECT_EQ(actual_hex.substr(0, h.size()), h) << path;
    } else {
      EXPECT_EQ(actual_hex, h) << path;
    }
    return;
  }
  if (actual.is_object()) {
    ASSERT_TRUE(expected.is_object()) << path << ": expected " << to_debug_string(expected)
                                      << ", got " << to_debug_string(actual);
    const auto& e = expected.as_object();
    const auto& a = actual.as_object();
    ASSERT_EQ(e.size(), a.size()) << path << ": expected " << to_debug_string(expected) << ", got "
                                  << to_debug_string(actual);
    for (std::size_t i = 0; i < e.size(); ++i) {
      ASSERT_EQ(e[i].key, a[i].key) << path;  // wire order
      expect_match(e[i].value, a[i].value, path + "." + a[i].key);
    }
    return;
  }
  if (actual.is_array()) {
    ASSERT_TRUE(expected.is_array()) << path;
    const auto& e = expected.as_array();
    const auto& a = actual.as_array();
    ASSERT_EQ(e.size(), a.size()) << path;
    for (std::size_t i = 0; i < e.size(); ++i) {
      expect_match(e[i], a[i], path + "[" + std::to_string(i) + "]");
    }
    return;
  }
  EXPECT_EQ(expected, actual) << path << ": expected " << to_debug_string(expected) << ", got "
                              << to_debug_string(actual);
}

// ---- golden frames --------------------------------------------------------------------------

TEST(EnvoyGolden, EveryFrameDecodesMatchesAndReencodes) {
  const auto frames = load_frames();
  ASSERT_EQ(frames.size(), 42u);
  std::set<std::string> variants;
  for (const auto& f : frames) {
    SCOPED_TRACE(f.name);
    EXPECT_EQ(static_cast<std::int64_t>(f.bytes.size()), f.len);
    variants.insert(f.variant);
    if (f.top == "ToRivet") {
      auto m = decode_to_rivet(f.bytes);
      ASSERT_TRUE(m.has_value()) << m.error().message;
      EXPECT_EQ(ToValue().top(*m).find("tag")->as_string(), f.variant);
      expect_match(f.decoded, ToValue().top(*m), "decoded");
      EXPECT_EQ(to_hex(encode(*m)), to_hex(f.bytes));
      EXPECT_FALSE(describe(*m).empty());
    } else {
      ASSERT_EQ(f.top, "ToEnvoy");
      auto m = decode_to_envoy(f.bytes);
      ASSERT_TRUE(m.has_value()) << m.error().message;
      EXPECT_EQ(ToValue().top(*m).find("tag")->as_string(), f.variant);
      expect_match(f.decoded, ToValue().top(*m), "decoded");
      EXPECT_EQ(to_hex(encode(*m)), to_hex(f.bytes));
      EXPECT_FALSE(describe(*m).empty());
    }
  }
  // Every ToRivet variant rivetkit used plus the common ToEnvoy ones.
  EXPECT_GE(variants.size(), 14u);
}

// The field-by-field comparison above must notice a wrong number, string or byte.
TEST(EnvoyGolden, ComparatorDetectsMismatches) {
  const auto frames = load_frames();
  {
    const auto& f = frame_named(frames, "ToEnvoyPing");
    auto m = decode_to_envoy(f.bytes);
    ASSERT_TRUE(m.has_value());
    std::get<ToEnvoyPing>(*m).ts += 1;
    EXPECT_NONFATAL_FAILURE(expect_match(f.decoded, ToValue().top(*m), "decoded"),
                            "decoded.val.ts");
  }
  {
    const auto& f = frame_named(frames, "ToEnvoyTunnelMessage/ToEnvoyRequestStart/stream=False");
    auto m = decode_to_envoy(f.bytes);
    ASSERT_TRUE(m.has_value());
    const ToEnvoyTunnelMessage original = std::get<ToEnvoyTunnelMessage>(*m);
    auto t = original;
    t.message_id.gateway_id[3] = 0;
    EXPECT_NONFATAL_FAILURE(expect_match(f.decoded, ToValue().top(ToEnvoy{t}), "decoded"),
                            "decoded.val.messageId.gatewayId");
    t = original;
    std::get<ToEnvoyRequestStart>(t.message_kind).body = "{}";
    EXPECT_NONFATAL_FAILURE(expect_match(f.decoded, ToValue().top(ToEnvoy{t}), "decoded"),
                            "decoded.val.messageKind.val.body");
    t = original;
    std::get<ToEnvoyRequestStart>(t.message_kind).headers[1].second = "curl";
    EXPECT_NONFATAL_FAILURE(expect_match(f.decoded, ToValue().top(ToEnvoy{t}), "decoded"),
                            "decoded.val.messageKind.val.headers.user-agent");
  }
  {
    const auto& f = frame_named(frames, "ToRivetSqliteCommitRequest");
    auto m = decode_to_rivet(f.bytes);
    ASSERT_TRUE(m.has_value());
    std::get<ToRivetSqliteCommitRequest>(*m).data.dirty_pages[0].bytes[0] = '\x0b';
    EXPECT_NONFATAL_FAILURE(expect_match(f.decoded, ToValue().top(*m), "decoded"),
                            "dirtyPages[0].bytes");
  }
}

TEST(EnvoyGolden, ServerlessStartBodyHasVersionPrefix) {
  const auto frames = load_frames();
  const auto& f = frame_named(frames, "serverless /start body (u16 LE version + ToEnvoy)");
  auto m = decode_to_envoy(f.bytes);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  const std::string body = encode_versioned(*m);
  EXPECT_EQ(body.size(), 68u);
  EXPECT_EQ(to_hex(body.substr(0, 2)), "0800");
  auto again = decode_versioned_to_envoy(body);
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_EQ(*again, *m);
  const auto& cmds = std::get<ToEnvoyCommands>(*m).commands;
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_EQ(cmds[0].checkpoint.index, 0);
  const auto& start = std::get<CommandStartActor>(cmds[0].inner);
  EXPECT_EQ(start.config.name, "counter");
  EXPECT_FALSE(start.config.key.has_value());

  std::string v7 = body;
  v7[0] = 7;
  EXPECT_FALSE(decode_versioned_to_envoy(v7).has_value());
  EXPECT_FALSE(decode_versioned_to_envoy("\x08").has_value());
}

// ---- the hand-decoded frames of envoy-protocol.md §6 -----------------------------------------

constexpr const char* kActor = "tx01t8p87phht2teyhgt0jnod6cl00";

TEST(EnvoySpecFrames, Init) {
  const auto bytes =
      from_hex("00 | 98 3a 00 00 00 00 00 00 | 40 77 1b 00 00 00 00 00 | 00 00 40 01 00 00 00 00");
  ASSERT_EQ(bytes.size(), 25u);
  auto m = decode_to_envoy(bytes);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  const auto& init = std::get<ToEnvoyInit>(*m);
  EXPECT_EQ(init.metadata.envoy_lost_threshold, 15000);
  EXPECT_EQ(init.metadata.actor_stop_threshold, 1800000);
  EXPECT_EQ(init.metadata.max_response_payload_size, 20971520u);
  EXPECT_EQ(encode(ToEnvoy{init}), bytes);
  EXPECT_EQ(describe(*m), "ToEnvoyInit[lost=15000ms stop=1800000ms max_payload=20971520]");
}

TEST(EnvoySpecFrames, Metadata) {
  ToRivetMetadata meta;
  meta.prepopulate_actor_names.emplace();
  meta.prepopulate_actor_names->emplace_back("counter", ActorName{"{}"});
  meta.metadata = R"({"rivetkit":{"version":"2.3.19"}})";
  const std::string bytes = encode(ToRivet{meta});
  EXPECT_EQ(bytes.size(), 49u);
  EXPECT_EQ(bytes, from_hex("00 01 01 07") + "counter" + from_hex("02") + "{}" + from_hex("01 21")
                       + R"({"rivetkit":{"version":"2.3.19"}})");
  auto m = decode_to_rivet(bytes);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  EXPECT_EQ(std::get<ToRivetMetadata>(*m), meta);
  EXPECT_EQ(bytes, frame_named(load_frames(), "ToRivetMetadata").bytes);
}

TEST(EnvoySpecFrames, PingPong) {
  const auto ping = from_hex("05 | 2d 0b 51 36 a2 01 00 00");
  auto m = decode_to_envoy(ping);
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(std::get<ToEnvoyPing>(*m).ts, 1796207610669);
  const std::string pong = encode(ToRivet{ToRivetPong{std::get<ToEnvoyPing>(*m).ts}});
  EXPECT_EQ(pong, from_hex("04 | 2d 0b 51 36 a2 01 00 00"));
  EXPECT_EQ(describe(*decode_to_rivet(pong)), "ToRivetPong[1796207610669]");
}

TEST(EnvoySpecFrames, StartCommand71Bytes) {
  const auto bytes = from_hex(
      "01 | 01 | 1e 7478303174387038377068687432746579686774306a6e6f6436636c3030 | 01 00 00 00 |"
      "01 00 00 00 00 00 00 00 | 00 | 07 636f756e746572 | 01 04 64656d6f |"
      "66 33 51 36 a2 01 00 00 | 00 | 00 | 00");
  ASSERT_EQ(bytes.size(), 71u);
  auto m = decode_to_envoy(bytes);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  const auto& cmds = std::get<ToEnvoyCommands>(*m).commands;
  ASSERT_EQ(cmds.size(), 1u);
  EXPECT_EQ(cmds[0].checkpoint, (ActorCheckpoint{kActor, 1, 1}));
  const auto& start = std::get<CommandStartActor>(cmds[0].inner);
  EXPECT_EQ(start.config.name, "counter");
  EXPECT_EQ(start.config.key, std::optional<std::string>("demo"));
  EXPECT_EQ(start.config.create_ts, 1796207620966);
  EXPECT_FALSE(start.config.input.has_value());
  EXPECT_TRUE(start.hibernating_requests.empty());
  EXPECT_FALSE(start.preloaded_kv.has_value());
  EXPECT_EQ(encode(*m), bytes);
  EXPECT_EQ(bytes, frame_named(load_frames(), "ToEnvoyCommands/CommandStartActor:").bytes);
  EXPECT_EQ(describe(*m), "ToEnvoyCommands[tx01t8p8..@1#1 start counter]");
}

TEST(EnvoySpecFrames, StoppedEvent49Bytes) {
  const ToRivet m = ToRivetEvents{
      {EventWrapper{ActorCheckpoint{kActor, 1, 4},
                    EventActorStateUpdate{ActorStateStopped{StopCode::kOk, std::nullopt}}}}};
  const std::string bytes = encode(m);
  EXPECT_EQ(bytes.size(), 49u);
  EXPECT_EQ(to_hex(bytes.substr(0, 3)), "01011e");
  EXPECT_EQ(to_hex(bytes.substr(33)), "01000000040000000000000001010000");
  EXPECT_EQ(
      bytes,
      frame_named(load_frames(), "ToRivetEvents/EventActorStateUpdate:ActorStateStopped").bytes);
  EXPECT_EQ(describe(m), "ToRivetEvents[tx01t8p8..@1#4 stopped ok]");
}

TEST(EnvoySpecFrames, AlarmEvent55Bytes) {
  const auto frames = load_frames();
  const auto& f = frame_named(frames, "ToRivetEvents/EventActorSetAlarm:ts");
  ASSERT_EQ(f.bytes.size(), 55u);
  EXPECT_EQ(to_hex(f.bytes.substr(45)), "0201f7745136a2010000");
  auto m = decode_to_rivet(f.bytes);
  ASSERT_TRUE(m.has_value());
  const auto& events = std::get<ToRivetEvents>(*m).events;
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0].checkpoint, (ActorCheckpoint{kActor, 2, 3}));
  EXPECT_EQ(std::get<EventActorSetAlarm>(events[0].inner).alarm_ts,
            std::optional<std::int64_t>(1796207637751));
}

TEST(EnvoySpecFrames, HibernatableWebSocketAck14Bytes) {
  const auto bytes = from_hex("06 | aa 1a cc 53 | a3 d6 e4 88 | 01 00 | 07 | 01 00");
  auto m = decode_to_rivet(bytes);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  const auto& t = std::get<ToRivetTunnelMessage>(*m);
  EXPECT_EQ(t.message_id.gateway_id, (GatewayId{0xaa, 0x1a, 0xcc, 0x53}));
  EXPECT_EQ(t.message_id.request_id, (RequestId{0xa3, 0xd6, 0xe4, 0x88}));
  EXPECT_EQ(t.message_id.message_index, 1);
  EXPECT_EQ(std::get<ToRivetWebSocketMessageAck>(t.message_kind).index, 1);
  EXPECT_EQ(encode(*m), bytes);
  EXPECT_EQ(describe(*m), "ToRivetTunnelMessage[aa1acc53:a3d6e488#1 ws_ack 1]");
}

TEST(EnvoySpecFrames, Gateway3Chunk26Bytes) {
  const auto bytes =
      from_hex("04 | 5f 04 96 ef | 90 2c cb 63 | 01 00 | 01 | 0c") + R"({"args":[2]})" + "\x01";
  ASSERT_EQ(bytes.size(), 26u);
  auto m = decode_to_envoy(bytes);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  const auto& t = std::get<ToEnvoyTunnelMessage>(*m);
  EXPECT_EQ(t.message_id.message_index, 1);
  const auto& chunk = std::get<ToEnvoyRequestChunk>(t.message_kind);
  EXPECT_EQ(chunk.body, R"({"args":[2]})");
  EXPECT_TRUE(chunk.finish);
  EXPECT_EQ(encode(*m), bytes);
}

TEST(EnvoySpecFrames, Stopping) {
  EXPECT_EQ(encode(ToRivet{ToRivetStopping{}}), from_hex("03"));
  auto m = decode_to_rivet(from_hex("03"));
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(std::holds_alternative<ToRivetStopping>(*m));
  EXPECT_EQ(describe(*m), "ToRivetStopping");
}

TEST(EnvoySpecFrames, RequestStartFieldByField) {
  const auto frames = load_frames();
  const auto& f = frame_named(frames, "ToEnvoyTunnelMessage/ToEnvoyRequestStart/stream=False");
  auto m = decode_to_envoy(f.bytes);
  ASSERT_TRUE(m.has_value()) << m.error().message;
  const auto& t = std::get<ToEnvoyTunnelMessage>(*m);
  EXPECT_EQ(t.message_id.gateway_id, (GatewayId{0xaa, 0x1a, 0xcc, 0x53}));
  const auto& start = std::get<ToEnvoyRequestStart>(t.message_kind);
  EXPECT_EQ(start.actor_id, kActor);
  EXPECT_FALSE(start.actor_generation.has_value());
  EXPECT_EQ(start.method, "POST");
  EXPECT_EQ(start.path, "/action/increment");
  ASSERT_EQ(start.headers.size(), 11u);
  EXPECT_EQ(start.headers[0], (std::pair<std::string, std::string>{"x-rivet-encoding", "json"}));
  EXPECT_EQ(start.body, std::optional<std::string>(R"({"args":[5]})"));
  EXPECT_FALSE(start.stream);
  EXPECT_FALSE(start.response_stream);
}

TEST(EnvoySpecFrames, SqliteGetPagesAndKvFieldByField) {
  const auto frames = load_frames();
  {
    auto m = decode_to_rivet(frame_named(frames, "ToRivetSqliteGetPagesRequest").bytes);
    ASSERT_TRUE(m.has_value());
    const auto& r = std::get<ToRivetSqliteGetPagesRequest>(*m);
    EXPECT_EQ(r.request_id, 0u);
    EXPECT_EQ(r.data.actor_id, kActor);
    ASSERT_FALSE(r.data.pgnos.empty());
    EXPECT_EQ(r.data.pgnos[0], 1u);
  }
  {
    auto m = decode_to_envoy(
        frame_named(frames, "ToEnvoySqliteGetPagesResponse/SqliteErrorResponse").bytes);
    ASSERT_TRUE(m.has_value());
    const auto& err =
        std::get<SqliteErrorResponse>(std::get<ToEnvoySqliteGetPagesResponse>(*m).data);
    EXPECT_EQ(err.group, "depot");
    EXPECT_EQ(err.code, "database_not_found");
  }
  {
    auto m = decode_to_rivet(frame_named(frames, "ToRivetKvRequest/KvGetRequest").bytes);
    ASSERT_TRUE(m.has_value());
    const auto& kv = std::get<ToRivetKvRequest>(*m);
    const auto& get = std::get<KvGetRequest>(kv.data);
    EXPECT_EQ(get.keys, (std::vector<std::string>{"\x01", "\x06", "\x03", from_hex("050101")}));
    EXPECT_EQ(describe(*m), "ToRivetKvRequest[tx01t8p8.. req=0 get 4 keys]");
  }
  {
    auto m = decode_to_rivet(frame_named(frames, "ToRivetKvRequest/KvListRequest").bytes);
    ASSERT_TRUE(m.has_value());
    const auto& list = std::get<KvListRequest>(std::get<ToRivetKvRequest>(*m).data);
    EXPECT_EQ(std::get<KvListPrefixQuery>(list.query).key, "\x02");
    EXPECT_EQ(list.reverse, std::optional<bool>(false));
    EXPECT_EQ(list.limit, std::optional<std::uint64_t>(1));
  }
}

// ---- raw WebSocket captures -------------------------------------------------------------------

// Decodes every complete binary WS message after the HTTP upgrade. Returns the number decoded.
template <class Decode>
std::size_t replay_capture(const std::string& raw, bool masked, Decode decode) {
  const auto head_end = raw.find("\r\n\r\n");
  EXPECT_NE(head_end, std::string::npos);
  std::size_t pos = head_end + 4;
  std::size_t decoded = 0;
  std::string message;
  auto byte = [&raw](std::size_t i) {
    return static_cast<std::uint8_t>(raw[i]);
  };
  while (pos + 2 <= raw.size()) {
    const bool fin = (byte(pos) & 0x80u) != 0;
    const unsigned opcode = byte(pos) & 0x0Fu;
    EXPECT_EQ((byte(pos + 1) & 0x80u) != 0, masked);
    std::uint64_t len = byte(pos + 1) & 0x7Fu;
    std::size_t p = pos + 2;
    if (len == 126 || len == 127) {
      const std::size_t n = len == 126 ? 2 : 8;
      if (p + n > raw.size()) {
        break;
      }
      len = 0;
      for (std::size_t i = 0; i < n; ++i) {
        len = (len << 8) | byte(p + i);
      }
      p += n;
    }
    std::array<std::uint8_t, 4> mask{};
    if (masked) {
      if (p + 4 > raw.size()) {
        break;
      }
      for (std::size_t i = 0; i < 4; ++i) {
        mask[i] = byte(p + i);
      }
      p += 4;
    }
    if (len > raw.size() - p) {
      break;  // the last frame of the capture is cut
    }
    std::string payload = raw.substr(p, static_cast<std::size_t>(len));
    if (masked) {
      for (std::size_t i = 0; i < payload.size(); ++i) {
        payload[i] = static_cast<char>(static_cast<std::uint8_t>(payload[i]) ^ mask[i % 4]);
      }
    }
    pos = p + static_cast<std::size_t>(len);
    if (opcode == 2 || opcode == 0) {
      message += payload;
      if (fin) {
        decode(message);
        ++decoded;
        message.clear();
      }
    }
  }
  return decoded;
}

TEST(EnvoyCapture, Run1EngineToRuntimeStream) {
  const auto raw = test::read_file(envoy_vector_path("run1-envoy-engine-to-runtime.first16k.bin"));
  std::set<std::size_t> kinds;
  const auto n = replay_capture(raw, false, [&kinds](const std::string& payload) {
    auto m = decode_to_envoy(payload);
    ASSERT_TRUE(m.has_value()) << m.error().message << " hex " << to_hex(payload);
    kinds.insert(m->index());
    EXPECT_EQ(encode(*m), payload);
  });
  EXPECT_GT(n, 20u);
  EXPECT_TRUE(kinds.count(0) && kinds.count(1) && kinds.count(5));  // init, commands, ping
}

TEST(EnvoyCapture, Run1RuntimeToEngineStream) {
  const auto raw = test::read_file(envoy_vector_path("run1-envoy-runtime-to-engine.first16k.bin"));
  std::set<std::size_t> kinds;
  const auto n = replay_capture(raw, true, [&kinds](const std::string& payload) {
    auto m = decode_to_rivet(payload);
    ASSERT_TRUE(m.has_value()) << m.error().message << " hex " << to_hex(payload);
    kinds.insert(m->index());
    EXPECT_EQ(encode(*m), payload);
  });
  // The capture holds 8 complete messages (two 8 KiB SQLite commits fill it) and a cut one.
  EXPECT_EQ(n, 8u);
  // metadata, ack commands, pong, get pages, commit
  EXPECT_EQ(kinds, (std::set<std::size_t>{0, 2, 4, 7, 8}));
}

// ---- round trips of every message kind ------------------------------------------------------

constexpr GatewayId kGw{0xde, 0xad, 0xbe, 0xef};
constexpr RequestId kReq{0x00, 0x01, 0x80, 0xff};
const MessageId kMsgId{kGw, kReq, 65535};

std::vector<SqliteValue> all_sqlite_values() {
  return {SqliteValueNull{}, SqliteValueInteger{-9007199254740993}, sqlite_float(-1.5),
          SqliteValueText{"héllo"}, SqliteValueBlob{std::string("\x00\xff", 2)}};
}

SqliteExecuteResult sample_execute_result() {
  return SqliteExecuteResult{{"a", "b"}, {all_sqlite_values(), {}}, 3, 42};
}

std::vector<ToRivet> all_to_rivet() {
  std::vector<ToRivet> out;
  out.emplace_back(ToRivetMetadata{});
  out.emplace_back(ToRivetMetadata{
      std::vector<std::pair<std::string, ActorName>>{{"a", {"{}"}}, {"b", {R"({"icon":"x"})"}}},
      R"({"rivetkit":{}})"});
  out.emplace_back(ToRivetEvents{{
      EventWrapper{{"actor", 1, 0}, EventActorIntent{ActorIntentSleep{}}},
      EventWrapper{{"actor", 1, 1}, EventActorIntent{ActorIntentStop{}}},
      EventWrapper{{"actor", 2, 2}, EventActorStateUpdate{ActorStateRunning{}}},
      EventWrapper{{"actor", 2, 3},
                   EventActorStateUpdate{ActorStateStopped{StopCode::kError, "boom"}}},
      EventWrapper{{"actor", 4294967295u, 9223372036854775807}, EventActorSetAlarm{-1}},
      EventWrapper{{"", 0, 0}, EventActorSetAlarm{std::nullopt}},
  }});
  out.emplace_back(ToRivetEvents{});
  out.emplace_back(ToRivetAckCommands{{{"x", 1, 1}, {"y", 2, 3}}});
  out.emplace_back(ToRivetStopping{});
  out.emplace_back(ToRivetPong{-5});
  const std::vector<KvRequestData> kv = {
      KvGetRequest{{"k1", std::string("\x00", 1), ""}},
      KvListRequest{KvListAllQuery{}, std::nullopt, std::nullopt},
      KvListRequest{KvListRangeQuery{"a", "z", true}, true, 18446744073709551615u},
      KvListRequest{KvListPrefixQuery{"pre"}, false, 0},
      KvPutRequest{{"k1", "k2"}, {"v1", std::string(300, 'v')}},
      KvDeleteRequest{{"k1"}},
      KvDeleteRangeRequest{"a", "b"},
      KvDropRequest{},
  };
  std::uint32_t id = 0;
  for (const auto& d : kv) {
    out.emplace_back(ToRivetKvRequest{"actor", id++, d});
  }
  const std::vector<ToRivetTunnelMessageKind> kinds = {
      ToRivetResponseStart{200, {{"content-type", "text/plain"}, {"x", ""}}, "body", false},
      ToRivetResponseStart{204, {}, std::nullopt, true},
      ToRivetResponseChunk{"chunk", true},
      ToRivetResponseAbort{{HttpStreamAbortKind::kHandlerError, "oops"}},
      ToRivetResponseAbort{{HttpStreamAbortKind::kInternalError, std::nullopt}},
      ToRivetRequestBodyWindowUpdate{65536},
      ToRivetRequestBodyCancel{},
      ToRivetWebSocketOpen{true},
      ToRivetWebSocketMessage{std::string("\x00\x01", 2), true},
      ToRivetWebSocketMessageAck{7},
      ToRivetWebSocketClose{1000, "bye", true},
      ToRivetWebSocketClose{std::nullopt, std::nullopt, false},
  };
  for (const auto& k : kinds) {
    out.emplace_back(ToRivetTunnelMessage{kMsgId, k});
  }
  out.emplace_back(ToRivetSqliteGetPagesRequest{1, {"actor", {1, 2, 4294967295u}, 3, 4}});
  out.emplace_back(ToRivetSqliteGetPagesRequest{2, {"actor", {}, std::nullopt, std::nullopt}});
  out.emplace_back(ToRivetSqliteCommitRequest{
      3, {"actor", {{1, std::string(4096, '\x5a')}, {2, ""}}, 17, 1796207621137, 1, 4}});
  out.emplace_back(ToRivetSqliteCommitStageBeginRequest{4, {"actor", 1, std::nullopt}});
  out.emplace_back(
      ToRivetSqliteCommitStageSegmentRequest{5, {"actor", std::nullopt, 99, 10, {{10, "page"}}}});
  out.emplace_back(ToRivetSqliteCommitFinalizeRequest{6, {"actor", 2, 99, 20, 123, {10, 15}}});
  out.emplace_back(ToRivetSqliteExecRequest{7, {"ns", "actor", 3, "CREATE TABLE t(x)"}});
  out.emplace_back(
      ToRivetSqliteExecuteRequest{8, {"ns", "actor", 3, "SELECT ?", all_sqlite_values()}});
  out.emplace_back(ToRivetSqliteExecuteRequest{9, {"ns", "actor", 3, "SELECT 1", std::nullopt}});
  out.emplace_back(ToRivetSqliteExecuteBatchRequest{
      10,
      {"ns", "actor", 3, {{"SELECT 1", std::nullopt}, {"INSERT ?", {{SqliteValueInteger{1}}}}}}});
  return out;
}

std::vector<ToEnvoy> all_to_envoy() {
  std::vector<ToEnvoy> out;
  out.emplace_back(ToEnvoyInit{{15000, 1800000, 20971520}});
  PreloadedKv preloaded{{{"k", "v", {"ver", 5}}}, {"g1", "g2"}, {"p"}};
  out.emplace_back(ToEnvoyCommands{{
      CommandWrapper{{"actor", 1, 1},
                     CommandStartActor{{"counter", "demo", 1796207620966, std::string("in\0", 3)},
                                       {{kGw, kReq}},
                                       preloaded}},
      CommandWrapper{
          {"actor", 1, 0},
          CommandStartActor{{"counter", std::nullopt, 0, std::nullopt}, {}, std::nullopt}},
      CommandWrapper{{"actor", 1, 2}, CommandStopActor{StopActorReason::kSleepIntent}},
      CommandWrapper{{"actor", 1, 3}, CommandStopActor{StopActorReason::kStopIntent}},
      CommandWrapper{{"actor", 1, 4}, CommandStopActor{StopActorReason::kDestroy}},
      CommandWrapper{{"actor", 1, 5}, CommandStopActor{StopActorReason::kGoingAway}},
      CommandWrapper{{"actor", 1, 6}, CommandStopActor{StopActorReason::kLost}},
  }});
  out.emplace_back(ToEnvoyAckEvents{{{"actor", 3, 250}}});
  const std::vector<KvResponseData> kv = {
      KvErrorResponse{"nope"},
      KvGetResponse{{"k"}, {"v"}, {{"1", 10}}},
      KvListResponse{{"a", "b"}, {"1", "2"}, {{"x", 1}, {"y", -1}}},
      KvPutResponse{},
      KvDeleteResponse{},
      KvDropResponse{},
  };
  std::uint32_t id = 0;
  for (const auto& d : kv) {
    out.emplace_back(ToEnvoyKvResponse{id++, d});
  }
  const std::vector<ToEnvoyTunnelMessageKind> kinds = {
      ToEnvoyRequestStart{
          "actor", 2, "GET", "/x?y=1", {{"a", "1"}, {"b", "2"}}, std::nullopt, true, true},
      ToEnvoyRequestStart{"actor", std::nullopt, "POST", "/", {}, "body", false, false},
      ToEnvoyRequestChunk{"", false},
      ToEnvoyRequestAbort{"actor", 1, {HttpStreamAbortKind::kCancelled, "client went away"}},
      ToEnvoyRequestAbort{std::nullopt, std::nullopt, {HttpStreamAbortKind::kUnknown, {}}},
      ToEnvoyRequestBodyCancel{},
      ToEnvoyResponseBodyWindowUpdate{34},
      ToEnvoyWebSocketOpen{"actor", 3, "/connect", {{"sec-websocket-protocol", "rivet"}}},
      ToEnvoyWebSocketMessage{"text", false},
      ToEnvoyWebSocketClose{1011, "err"},
      ToEnvoyWebSocketClose{},
  };
  for (const auto& k : kinds) {
    out.emplace_back(ToEnvoyTunnelMessage{kMsgId, k});
  }
  out.emplace_back(ToEnvoyPing{1796207610669});
  const SqliteErrorResponse err{"depot", "database_not_found", "missing"};
  out.emplace_back(
      ToEnvoySqliteGetPagesResponse{1, SqliteGetPagesOk{{{1, "page"}, {2, std::nullopt}}, 5}});
  out.emplace_back(ToEnvoySqliteGetPagesResponse{2, err});
  out.emplace_back(ToEnvoySqliteCommitResponse{3, SqliteCommitOk{1}});
  out.emplace_back(ToEnvoySqliteCommitResponse{4, err});
  out.emplace_back(ToEnvoySqliteCommitStageBeginResponse{5, SqliteCommitStageBeginOk{77}});
  out.emplace_back(ToEnvoySqliteCommitStageBeginResponse{6, err});
  out.emplace_back(ToEnvoySqliteCommitStageSegmentResponse{7, SqliteCommitStageSegmentOk{4096}});
  out.emplace_back(ToEnvoySqliteCommitStageSegmentResponse{8, err});
  out.emplace_back(ToEnvoySqliteCommitFinalizeResponse{9, SqliteCommitFinalizeOk{std::nullopt}});
  out.emplace_back(ToEnvoySqliteCommitFinalizeResponse{10, err});
  out.emplace_back(ToEnvoySqliteExecResponse{
      11, SqliteExecOk{{{"x"}, {{SqliteValueInteger{1}}, {SqliteValueText{"t"}}}}}});
  out.emplace_back(ToEnvoySqliteExecResponse{12, err});
  out.emplace_back(ToEnvoySqliteExecuteResponse{13, SqliteExecuteOk{sample_execute_result()}});
  out.emplace_back(ToEnvoySqliteExecuteResponse{14, err});
  out.emplace_back(ToEnvoySqliteExecuteBatchResponse{
      15, SqliteExecuteBatchOk{{sample_execute_result(), SqliteExecuteResult{}}}});
  out.emplace_back(ToEnvoySqliteExecuteBatchResponse{16, err});
  return out;
}

TEST(EnvoyRoundTrip, EveryToRivetVariant) {
  std::set<std::size_t> tops;
  std::set<std::size_t> kv_kinds;
  std::set<std::size_t> tunnel_kinds;
  for (const auto& m : all_to_rivet()) {
    SCOPED_TRACE(describe(m));
    const std::string bytes = encode(m);
    ASSERT_FALSE(bytes.empty());
    EXPECT_EQ(static_cast<std::size_t>(static_cast<std::uint8_t>(bytes[0])), m.index());
    auto back = decode_to_rivet(bytes);
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(*back, m);
    tops.insert(m.index());
    if (const auto* kv = std::get_if<ToRivetKvRequest>(&m)) {
      kv_kinds.insert(kv->data.index());
    }
    if (const auto* t = std::get_if<ToRivetTunnelMessage>(&m)) {
      tunnel_kinds.insert(t->message_kind.index());
    }
  }
  EXPECT_EQ(tops.size(), std::variant_size_v<ToRivet>);
  EXPECT_EQ(tops.size(), 15u);
  EXPECT_EQ(kv_kinds.size(), std::variant_size_v<KvRequestData>);
  EXPECT_EQ(tunnel_kinds.size(), std::variant_size_v<ToRivetTunnelMessageKind>);
}

TEST(EnvoyRoundTrip, EveryToEnvoyVariant) {
  std::set<std::size_t> tops;
  std::set<std::size_t> kv_kinds;
  std::set<std::size_t> tunnel_kinds;
  for (const auto& m : all_to_envoy()) {
    SCOPED_TRACE(describe(m));
    const std::string bytes = encode(m);
    EXPECT_EQ(static_cast<std::size_t>(static_cast<std::uint8_t>(bytes[0])), m.index());
    auto back = decode_to_envoy(bytes);
    ASSERT_TRUE(back.has_value()) << back.error().message;
    EXPECT_EQ(*back, m);
    tops.insert(m.index());
    if (const auto* kv = std::get_if<ToEnvoyKvResponse>(&m)) {
      kv_kinds.insert(kv->data.index());
    }
    if (const auto* t = std::get_if<ToEnvoyTunnelMessage>(&m)) {
      tunnel_kinds.insert(t->message_kind.index());
    }
  }
  EXPECT_EQ(tops.size(), std::variant_size_v<ToEnvoy>);
  EXPECT_EQ(tops.size(), 14u);
  EXPECT_EQ(kv_kinds.size(), std::variant_size_v<KvResponseData>);
  EXPECT_EQ(tunnel_kinds.size(), std::variant_size_v<ToEnvoyTunnelMessageKind>);
}

TEST(EnvoyRoundTrip, SqliteFloatIsLittleEndianDouble) {
  const auto f = sqlite_float(1.0);
  EXPECT_EQ(to_hex(std::string(f.value.begin(), f.value.end())), "000000000000f03f");
  EXPECT_EQ(sqlite_float_value(f), 1.0);
  EXPECT_EQ(sqlite_float_value(sqlite_float(-0.25)), -0.25);
}

TEST(EnvoyRoundTrip, LongStringsUseMultiByteLengths) {
  ToRivetWebSocketMessage msg{std::string(70000, 'x'), false};
  const ToRivet m = ToRivetTunnelMessage{kMsgId, msg};
  const std::string bytes = encode(m);
  // tag + message id (10) + tag + 3-byte varint + data + bool
  EXPECT_EQ(bytes.size(), 1u + 10u + 1u + 3u + 70000u + 1u);
  auto back = decode_to_rivet(bytes);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(*back, m);
}

// ---- malformed input ------------------------------------------------------------------------

void expect_envoy_error(const Result<ToEnvoy>& r) {
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().group, "envoy");
  EXPECT_EQ(r.error().code, "invalid_message");
  EXPECT_FALSE(r.error().message.empty());
}
void expect_rivet_error(const Result<ToRivet>& r) {
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().group, "envoy");
  EXPECT_EQ(r.error().code, "invalid_message");
  EXPECT_FALSE(r.error().message.empty());
}

TEST(EnvoyMalformed, EveryTruncationFails) {
  std::size_t checked = 0;
  for (const auto& f : load_frames()) {
    for (std::size_t n = 0; n < f.bytes.size(); ++n) {
      const std::string_view prefix(f.bytes.data(), n);
      if (f.top == "ToRivet") {
        EXPECT_FALSE(decode_to_rivet(prefix).has_value()) << f.name << " cut at " << n;
      } else {
        EXPECT_FALSE(decode_to_envoy(prefix).has_value()) << f.name << " cut at " << n;
      }
      ++checked;
    }
  }
  for (const auto& m : all_to_rivet()) {
    const auto bytes = encode(m);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_FALSE(decode_to_rivet(std::string_view(bytes.data(), n)).has_value())
          << describe(m) << " cut at " << n;
    }
  }
  for (const auto& m : all_to_envoy()) {
    const auto bytes = encode(m);
    for (std::size_t n = 0; n < bytes.size(); ++n) {
      EXPECT_FALSE(decode_to_envoy(std::string_view(bytes.data(), n)).has_value())
          << describe(m) << " cut at " << n;
    }
  }
  EXPECT_GT(checked, 5000u);
}

TEST(EnvoyMalformed, TrailingBytesFail) {
  for (const auto& f : load_frames()) {
    const std::string extra = f.bytes + std::string(1, '\0');
    if (f.top == "ToRivet") {
      expect_rivet_error(decode_to_rivet(extra));
    } else {
      expect_envoy_error(decode_to_envoy(extra));
    }
  }
  const auto r = decode_to_rivet(from_hex("03 00"));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("trailing"), std::string::npos) << r.error().message;
}

TEST(EnvoyMalformed, EmptyInputFails) {
  expect_rivet_error(decode_to_rivet(""));
  expect_envoy_error(decode_to_envoy(""));
}

TEST(EnvoyMalformed, UnknownTopLevelTags) {
  expect_rivet_error(decode_to_rivet(from_hex("0f")));
  expect_rivet_error(decode_to_rivet(from_hex("ff")));
  expect_envoy_error(decode_to_envoy(from_hex("0e")));
  expect_envoy_error(decode_to_envoy(from_hex("80 00")));  // tags are one byte, not a varint
  const auto r = decode_to_envoy(from_hex("0e"));
  EXPECT_NE(r.error().message.find("unknown ToEnvoy tag 14"), std::string::npos)
      << r.error().message;
}

TEST(EnvoyMalformed, UnknownNestedTagsAndEnums) {
  const auto frames = load_frames();
  // CommandStopActor reason is the last byte: 5 is past LOST.
  std::string stop = frame_named(frames, "ToEnvoyCommands/CommandStopActor:DESTROY").bytes;
  stop.back() = 5;
  expect_envoy_error(decode_to_envoy(stop));
  // Command tag 2 (byte before the reason).
  stop = frame_named(frames, "ToEnvoyCommands/CommandStopActor:DESTROY").bytes;
  stop[stop.size() - 2] = 2;
  expect_envoy_error(decode_to_envoy(stop));
  // StopCode 2 in a stopped event (second-to-last byte).
  std::string stopped =
      frame_named(frames, "ToRivetEvents/EventActorStateUpdate:ActorStateStopped").bytes;
  stopped[stopped.size() - 2] = 2;
  expect_rivet_error(decode_to_rivet(stopped));
  // ActorState tag 2.
  stopped = frame_named(frames, "ToRivetEvents/EventActorStateUpdate:ActorStateStopped").bytes;
  stopped[stopped.size() - 3] = 2;
  expect_rivet_error(decode_to_rivet(stopped));
  // Event tag 3 in an alarm event (tag follows the 13 + 30 byte checkpoint after 2 header bytes).
  std::string alarm = frame_named(frames, "ToRivetEvents/EventActorSetAlarm:ts").bytes;
  ASSERT_EQ(alarm[45], '\x02');
  alarm[45] = 3;
  expect_rivet_error(decode_to_rivet(alarm));
  // Tunnel kinds past the end: ToEnvoy has 8, ToRivet 9 (kind tag at byte 11).
  expect_envoy_error(decode_to_envoy(from_hex("04 00000000 00000000 0000 08")));
  expect_rivet_error(decode_to_rivet(from_hex("06 00000000 00000000 0000 09")));
  // The highest valid void kinds decode.
  EXPECT_TRUE(decode_to_envoy(from_hex("04 00000000 00000000 0000 03")).has_value());
  EXPECT_TRUE(decode_to_rivet(from_hex("06 00000000 00000000 0000 04")).has_value());
  // KvRequestData tag 6 / KvResponseData tag 6 / SqliteValue tag 5 / abort kind 4.
  expect_rivet_error(decode_to_rivet(from_hex("05 01 61 00000000 06")));
  EXPECT_TRUE(decode_to_rivet(from_hex("05 01 61 00000000 05")).has_value());
  expect_envoy_error(decode_to_envoy(from_hex("03 00000000 06")));
  EXPECT_TRUE(decode_to_envoy(from_hex("03 00000000 05")).has_value());
  // ToRivetSqliteExecuteRequest with params [tag 5].
  const std::string exec_prefix = from_hex("0d 00000000 02") + "ns" + from_hex("01") + "a"
                                  + from_hex("0000000000000000 01") + "q" + from_hex("01 01");
  EXPECT_TRUE(decode_to_rivet(exec_prefix + from_hex("04 00")).has_value());
  expect_rivet_error(decode_to_rivet(exec_prefix + from_hex("05")));
  expect_envoy_error(decode_to_envoy(from_hex("04 00000000 00000000 0000 02 00 00 04 00")));
  EXPECT_TRUE(decode_to_envoy(from_hex("04 00000000 00000000 0000 02 00 00 03 00")).has_value());
}

TEST(EnvoyMalformed, BoolsAndOptionalMarkersMustBeZeroOrOne) {
  // Gateway-3 chunk: the last byte is `finish`.
  std::string chunk = frame_named(load_frames(), "ToEnvoyTunnelMessage/ToEnvoyRequestChunk").bytes;
  chunk.back() = 2;
  expect_envoy_error(decode_to_envoy(chunk));
  // SetAlarm null: the last byte is the optional marker.
  std::string alarm = frame_named(load_frames(), "ToRivetEvents/EventActorSetAlarm:null").bytes;
  alarm.back() = 2;
  expect_rivet_error(decode_to_rivet(alarm));
  expect_rivet_error(decode_to_rivet(from_hex("00 02")));  // metadata names marker
  expect_rivet_error(decode_to_rivet(from_hex("06 00000000 00000000 0000 05 ff")));
}

TEST(EnvoyMalformed, HugeCountsFailWithoutAllocating) {
  // ToEnvoyCommands claiming 2^63 wrappers; ToRivetEvents with 2^64-1 (10-byte varint).
  expect_envoy_error(decode_to_envoy(from_hex("01 ff ff ff ff ff ff ff ff 7f")));
  expect_rivet_error(decode_to_rivet(from_hex("01 ff ff ff ff ff ff ff ff ff 01")));
  // Over-long varint (11 bytes) and one overflowing 64 bits.
  expect_rivet_error(decode_to_rivet(from_hex("01 80 80 80 80 80 80 80 80 80 80 00")));
  expect_rivet_error(decode_to_rivet(from_hex("01 ff ff ff ff ff ff ff ff ff 02")));
  // pgnos count 100 with 40 bytes left: u32 items need 400.
  const std::string pages =
      from_hex("07 00000000 01") + "a" + from_hex("64") + std::string(40, '\x01');
  const auto r = decode_to_rivet(pages);
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("exceeds"), std::string::npos) << r.error().message;
  // A data length past the end.
  expect_envoy_error(decode_to_envoy(from_hex("04 00000000 00000000 0000 06 ff ff 03 00")));
  // Headers map count 2^32.
  expect_envoy_error(
      decode_to_envoy(from_hex("04 00000000 00000000 0000 05 01 61 00 01 2f 80 80 80 80 10")));
}

TEST(EnvoyMalformed, DuplicateMapKeysFail) {
  ToEnvoyRequestStart start{"actor",      std::nullopt, "GET", "/", {{"a", "1"}, {"b", "2"}},
                            std::nullopt, false,        false};
  const ToEnvoy ok = ToEnvoyTunnelMessage{kMsgId, start};
  EXPECT_TRUE(decode_to_envoy(encode(ok)).has_value());
  start.headers.emplace_back("a", "3");
  const auto r = decode_to_envoy(encode(ToEnvoy{ToEnvoyTunnelMessage{kMsgId, start}}));
  ASSERT_FALSE(r.has_value());
  EXPECT_NE(r.error().message.find("duplicate"), std::string::npos) << r.error().message;

  ToEnvoyWebSocketOpen open{"actor", 1, "/ws", {{"x", "1"}, {"x", "1"}}};
  expect_envoy_error(decode_to_envoy(encode(ToEnvoy{ToEnvoyTunnelMessage{kMsgId, open}})));
  ToRivetResponseStart resp{200, {{"k", "1"}, {"k", "2"}}, std::nullopt, false};
  expect_rivet_error(decode_to_rivet(encode(ToRivet{ToRivetTunnelMessage{kMsgId, resp}})));
  ToRivetMetadata meta{std::vector<std::pair<std::string, ActorName>>{{"c", {"{}"}}, {"c", {"{}"}}},
                       std::nullopt};
  expect_rivet_error(decode_to_rivet(encode(ToRivet{meta})));
}

TEST(EnvoyMalformed, InvalidUtf8InStrFails) {
  // Actor id of a pong-adjacent message: ToRivetAckCommands with a 1-byte id 0xff.
  expect_rivet_error(decode_to_rivet(from_hex("02 01 01 ff 01000000 0100000000000000")));
  EXPECT_TRUE(decode_to_rivet(from_hex("02 01 01 41 01000000 0100000000000000")).has_value());
  // `data` fields accept any bytes: a WS message with 0xff.
  EXPECT_TRUE(decode_to_rivet(from_hex("06 00000000 00000000 0000 06 01 ff 01")).has_value());
  // Header value with an overlong encoding of '/'.
  expect_envoy_error(
      decode_to_envoy(from_hex("04 00000000 00000000 0000 05 01 61 00 01 2f 01 01 61 02 c0 af")));
}

template <class Decode>
void fuzz_mutations(const std::vector<std::string>& seeds,
                    std::mt19937& rng,
                    int iterations,
                    Decode decode) {
  for (int i = 0; i < iterations; ++i) {
    std::string bytes = seeds[rng() % seeds.size()];
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits && !bytes.empty(); ++e) {
      const std::size_t at = rng() % bytes.size();
      switch (rng() % 4) {
        case 0:
          bytes[at] = static_cast<char>(rng() & 0xFFu);
          break;
        case 1:
          bytes[at] = static_cast<char>(static_cast<std::uint8_t>(bytes[at]) ^ (1u << (rng() % 8)));
          break;
        case 2:
          bytes.erase(at, 1);
          break;
        default:
          bytes.insert(at, 1, static_cast<char>(rng() & 0xFFu));
          break;
      }
    }
    decode(bytes);
  }
}

TEST(EnvoyMalformed, FuzzNeverCrashesAndAcceptedInputRoundTrips) {
  std::mt19937 rng(0x5eed);
  std::vector<std::string> rivet_seeds;
  std::vector<std::string> envoy_seeds;
  for (const auto& f : load_frames()) {
    (f.top == "ToRivet" ? rivet_seeds : envoy_seeds).push_back(f.bytes);
  }
  for (const auto& m : all_to_rivet()) {
    rivet_seeds.push_back(encode(m));
  }
  for (const auto& m : all_to_envoy()) {
    envoy_seeds.push_back(encode(m));
  }
  int accepted = 0;
  auto rivet = [&accepted](const std::string& bytes) {
    auto m = decode_to_rivet(bytes);
    if (m) {
      ++accepted;
      auto again = decode_to_rivet(encode(*m));
      ASSERT_TRUE(again.has_value());
      EXPECT_EQ(*again, *m);
      EXPECT_FALSE(describe(*m).empty());
    }
  };
  auto envoy = [&accepted](const std::string& bytes) {
    auto m = decode_to_envoy(bytes);
    if (m) {
      ++accepted;
      auto again = decode_to_envoy(encode(*m));
      ASSERT_TRUE(again.has_value());
      EXPECT_EQ(*again, *m);
      EXPECT_FALSE(describe(*m).empty());
    }
  };
  fuzz_mutations(rivet_seeds, rng, 3000, rivet);
  fuzz_mutations(envoy_seeds, rng, 3000, envoy);
  // Pure random bytes, biased towards valid top-level tags.
  for (int i = 0; i < 4000; ++i) {
    std::string bytes(rng() % 48, '\0');
    for (auto& c : bytes) {
      c = static_cast<char>(rng() & 0xFFu);
    }
    if (!bytes.empty()) {
      bytes[0] = static_cast<char>(rng() % 16);
    }
    rivet(bytes);
    envoy(bytes);
  }
  EXPECT_GT(accepted, 0);
}

}  // namespace
}  // namespace rivetkit::protocol::envoy
