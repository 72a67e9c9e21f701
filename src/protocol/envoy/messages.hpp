#pragma once
// The engine <-> runtime ("envoy") protocol, version 8 (envoy-protocol.md §3.1): one C++ type per
// schema type. Rules of the mapping:
//   * fields are snake_case versions of the schema names, in wire order;
//   * `str` and `data` are std::string (data is raw bytes), `data[4]` is std::array<uint8_t, 4>;
//   * `map<str><V>` is a vector of pairs (insertion order is kept; decoders reject duplicates);
//   * unions are std::variant whose alternative index is the wire tag; `void` members are empty
//     structs; enums are `enum class : std::uint8_t` whose value is the wire tag.
// The payload on the envoy WebSocket is a plain ToRivet / ToEnvoy with no version prefix.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace rivetkit::protocol::envoy {

inline constexpr std::uint16_t kProtocolVersion = 8;

// ---- primitives -----------------------------------------------------------------------------

using Id = std::string;    // actor id / namespace id
using Json = std::string;  // JSON text
using GatewayId = std::array<std::uint8_t, 4>;
using RequestId = std::array<std::uint8_t, 4>;
using MessageIndex = std::uint16_t;
/// map<str><str>, in wire order.
using Headers = std::vector<std::pair<std::string, std::string>>;

// ---- KV -------------------------------------------------------------------------------------

using KvKey = std::string;
using KvValue = std::string;

struct KvMetadata {
  std::string version;  // data
  std::int64_t update_ts = 0;
  bool operator==(const KvMetadata&) const = default;
};

struct KvListAllQuery {
  bool operator==(const KvListAllQuery&) const = default;
};
struct KvListRangeQuery {
  KvKey start;
  KvKey end;
  bool exclusive = false;
  bool operator==(const KvListRangeQuery&) const = default;
};
struct KvListPrefixQuery {
  KvKey key;
  bool operator==(const KvListPrefixQuery&) const = default;
};
using KvListQuery = std::variant<KvListAllQuery, KvListRangeQuery, KvListPrefixQuery>;

struct KvGetRequest {
  std::vector<KvKey> keys;
  bool operator==(const KvGetRequest&) const = default;
};
struct KvListRequest {
  KvListQuery query;
  std::optional<bool> reverse;
  std::optional<std::uint64_t> limit;
  bool operator==(const KvListRequest&) const = default;
};
struct KvPutRequest {
  std::vector<KvKey> keys;
  std::vector<KvValue> values;
  bool operator==(const KvPutRequest&) const = default;
};
struct KvDeleteRequest {
  std::vector<KvKey> keys;
  bool operator==(const KvDeleteRequest&) const = default;
};
struct KvDeleteRangeRequest {
  KvKey start;
  KvKey end;
  bool operator==(const KvDeleteRangeRequest&) const = default;
};
struct KvDropRequest {
  bool operator==(const KvDropRequest&) const = default;
};
using KvRequestData = std::variant<KvGetRequest,
                                   KvListRequest,
                                   KvPutRequest,
                                   KvDeleteRequest,
                                   KvDeleteRangeRequest,
                                   KvDropRequest>;

struct KvErrorResponse {
  std::string message;
  bool operator==(const KvErrorResponse&) const = default;
};
struct KvGetResponse {
  std::vector<KvKey> keys;
  std::vector<KvValue> values;
  std::vector<KvMetadata> metadata;
  bool operator==(const KvGetResponse&) const = default;
};
struct KvListResponse {
  std::vector<KvKey> keys;
  std::vector<KvValue> values;
  std::vector<KvMetadata> metadata;
  bool operator==(const KvListResponse&) const = default;
};
struct KvPutResponse {
  bool operator==(const KvPutResponse&) const = default;
};
struct KvDeleteResponse {
  bool operator==(const KvDeleteResponse&) const = default;
};
struct KvDropResponse {
  bool operator==(const KvDropResponse&) const = default;
};
using KvResponseData = std::variant<KvErrorResponse,
                                    KvGetResponse,
                                    KvListResponse,
                                    KvPutResponse,
                                    KvDeleteResponse,
                                    KvDropResponse>;

// ---- SQLite page store and remote SQL -------------------------------------------------------

struct SqliteDirtyPage {
  std::uint32_t pgno = 0;
  std::string bytes;
  bool operator==(const SqliteDirtyPage&) const = default;
};
struct SqliteFetchedPage {
  std::uint32_t pgno = 0;
  std::optional<std::string> bytes;
  bool operator==(const SqliteFetchedPage&) const = default;
};
struct SqliteErrorResponse {
  std::string group;
  std::string code;
  std::string message;
  bool operator==(const SqliteErrorResponse&) const = default;
};

struct SqliteGetPagesRequest {
  Id actor_id;
  std::vector<std::uint32_t> pgnos;
  std::optional<std::uint64_t> expected_generation;
  std::optional<std::uint64_t> expected_head_txid;
  bool operator==(const SqliteGetPagesRequest&) const = default;
};
struct SqliteGetPagesOk {
  std::vector<SqliteFetchedPage> pages;
  std::optional<std::uint64_t> head_txid;
  bool operator==(const SqliteGetPagesOk&) const = default;
};
using SqliteGetPagesResponse = std::variant<SqliteGetPagesOk, SqliteErrorResponse>;

struct SqliteCommitRequest {
  Id actor_id;
  std::vector<SqliteDirtyPage> dirty_pages;
  std::uint32_t db_size_pages = 0;
  std::int64_t now_ms = 0;
  std::optional<std::uint64_t> expected_generation;
  std::optional<std::uint64_t> expected_head_txid;
  bool operator==(const SqliteCommitRequest&) const = default;
};
struct SqliteCommitOk {
  std::optional<std::uint64_t> head_txid;
  bool operator==(const SqliteCommitOk&) const = default;
};
using SqliteCommitResponse = std::variant<SqliteCommitOk, SqliteErrorResponse>;

struct SqliteCommitStageBeginRequest {
  Id actor_id;
  std::optional<std::uint64_t> expected_generation;
  std::optional<std::uint64_t> expected_head_txid;
  bool operator==(const SqliteCommitStageBeginRequest&) const = default;
};
struct SqliteCommitStageBeginOk {
  std::uint64_t txid = 0;
  bool operator==(const SqliteCommitStageBeginOk&) const = default;
};
using SqliteCommitStageBeginResponse = std::variant<SqliteCommitStageBeginOk, SqliteErrorResponse>;

struct SqliteCommitStageSegmentRequest {
  Id actor_id;
  std::optional<std::uint64_t> expected_generation;
  std::uint64_t txid = 0;
  std::uint32_t first_pgno = 0;
  std::vector<SqliteDirtyPage> dirty_pages;
  bool operator==(const SqliteCommitStageSegmentRequest&) const = default;
};
struct SqliteCommitStageSegmentOk {
  std::uint64_t staged_bytes = 0;
  bool operator==(const SqliteCommitStageSegmentOk&) const = default;
};
using SqliteCommitStageSegmentResponse =
    std::variant<SqliteCommitStageSegmentOk, SqliteErrorResponse>;

struct SqliteCommitFinalizeRequest {
  Id actor_id;
  std::optional<std::uint64_t> expected_generation;
  std::uint64_t txid = 0;
  std::uint32_t new_db_size_pages = 0;
  std::int64_t now_ms = 0;
  std::vector<std::uint32_t> segment_first_pgnos;
  bool operator==(const SqliteCommitFinalizeRequest&) const = default;
};
struct SqliteCommitFinalizeOk {
  std::optional<std::uint64_t> head_txid;
  bool operator==(const SqliteCommitFinalizeOk&) const = default;
};
using SqliteCommitFinalizeResponse = std::variant<SqliteCommitFinalizeOk, SqliteErrorResponse>;

struct SqliteValueNull {
  bool operator==(const SqliteValueNull&) const = default;
};
struct SqliteValueInteger {
  std::int64_t value = 0;
  bool operator==(const SqliteValueInteger&) const = default;
};
/// data[8]: the 8 bytes of an IEEE-754 double (see sqlite_float() below).
struct SqliteValueFloat {
  std::array<std::uint8_t, 8> value{};
  bool operator==(const SqliteValueFloat&) const = default;
};
struct SqliteValueText {
  std::string value;
  bool operator==(const SqliteValueText&) const = default;
};
struct SqliteValueBlob {
  std::string value;
  bool operator==(const SqliteValueBlob&) const = default;
};
using SqliteValue = std::variant<SqliteValueNull,
                                 SqliteValueInteger,
                                 SqliteValueFloat,
                                 SqliteValueText,
                                 SqliteValueBlob>;
using SqliteBindParam = SqliteValue;
using SqliteColumnValue = SqliteValue;

struct SqliteQueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<SqliteColumnValue>> rows;
  bool operator==(const SqliteQueryResult&) const = default;
};
struct SqliteExecuteResult {
  std::vector<std::string> columns;
  std::vector<std::vector<SqliteColumnValue>> rows;
  std::int64_t changes = 0;
  std::optional<std::int64_t> last_insert_row_id;
  bool operator==(const SqliteExecuteResult&) const = default;
};

struct SqliteExecRequest {
  Id namespace_id;
  Id actor_id;
  std::uint64_t generation = 0;
  std::string sql;
  bool operator==(const SqliteExecRequest&) const = default;
};
struct SqliteExecuteRequest {
  Id namespace_id;
  Id actor_id;
  std::uint64_t generation = 0;
  std::string sql;
  std::optional<std::vector<SqliteBindParam>> params;
  bool operator==(const SqliteExecuteRequest&) const = default;
};
struct SqliteBatchStatement {
  std::string sql;
  std::optional<std::vector<SqliteBindParam>> params;
  bool operator==(const SqliteBatchStatement&) const = default;
};
struct SqliteExecuteBatchRequest {
  Id namespace_id;
  Id actor_id;
  std::uint64_t generation = 0;
  std::vector<SqliteBatchStatement> statements;
  bool operator==(const SqliteExecuteBatchRequest&) const = default;
};

struct SqliteExecOk {
  SqliteQueryResult result;
  bool operator==(const SqliteExecOk&) const = default;
};
using SqliteExecResponse = std::variant<SqliteExecOk, SqliteErrorResponse>;
struct SqliteExecuteOk {
  SqliteExecuteResult result;
  bool operator==(const SqliteExecuteOk&) const = default;
};
using SqliteExecuteResponse = std::variant<SqliteExecuteOk, SqliteErrorResponse>;
struct SqliteExecuteBatchOk {
  std::vector<SqliteExecuteResult> results;
  bool operator==(const SqliteExecuteBatchOk&) const = default;
};
using SqliteExecuteBatchResponse = std::variant<SqliteExecuteBatchOk, SqliteErrorResponse>;

// ---- actor lifecycle ------------------------------------------------------------------------

enum class StopCode : std::uint8_t { kOk = 0, kError = 1 };

struct ActorName {
  Json metadata;
  bool operator==(const ActorName&) const = default;
};
struct ActorConfig {
  std::string name;
  std::optional<std::string> key;
  std::int64_t create_ts = 0;
  std::optional<std::string> input;  // data
  bool operator==(const ActorConfig&) const = default;
};
struct ActorCheckpoint {
  Id actor_id;
  std::uint32_t generation = 0;
  std::int64_t index = 0;
  bool operator==(const ActorCheckpoint&) const = default;
};

struct ActorIntentSleep {
  bool operator==(const ActorIntentSleep&) const = default;
};
struct ActorIntentStop {
  bool operator==(const ActorIntentStop&) const = default;
};
using ActorIntent = std::variant<ActorIntentSleep, ActorIntentStop>;

struct ActorStateRunning {
  bool operator==(const ActorStateRunning&) const = default;
};
struct ActorStateStopped {
  StopCode code = StopCode::kOk;
  std::optional<std::string> message;
  bool operator==(const ActorStateStopped&) const = default;
};
using ActorState = std::variant<ActorStateRunning, ActorStateStopped>;

struct EventActorIntent {
  ActorIntent intent;
  bool operator==(const EventActorIntent&) const = default;
};
struct EventActorStateUpdate {
  ActorState state;
  bool operator==(const EventActorStateUpdate&) const = default;
};
struct EventActorSetAlarm {
  std::optional<std::int64_t> alarm_ts;
  bool operator==(const EventActorSetAlarm&) const = default;
};
using Event = std::variant<EventActorIntent, EventActorStateUpdate, EventActorSetAlarm>;

struct EventWrapper {
  ActorCheckpoint checkpoint;
  Event inner;
  bool operator==(const EventWrapper&) const = default;
};

struct PreloadedKvEntry {
  KvKey key;
  KvValue value;
  KvMetadata metadata;
  bool operator==(const PreloadedKvEntry&) const = default;
};
struct PreloadedKv {
  std::vector<PreloadedKvEntry> entries;
  std::vector<KvKey> requested_get_keys;
  std::vector<KvKey> requested_prefixes;
  bool operator==(const PreloadedKv&) const = default;
};
struct HibernatingRequest {
  GatewayId gateway_id{};
  RequestId request_id{};
  bool operator==(const HibernatingRequest&) const = default;
};

enum class StopActorReason : std::uint8_t {
  kSleepIntent = 0,
  kStopIntent = 1,
  kDestroy = 2,
  kGoingAway = 3,
  kLost = 4,
};

struct CommandStartActor {
  ActorConfig config;
  std::vector<HibernatingRequest> hibernating_requests;
  std::optional<PreloadedKv> preloaded_kv;
  bool operator==(const CommandStartActor&) const = default;
};
struct CommandStopActor {
  StopActorReason reason = StopActorReason::kSleepIntent;
  bool operator==(const CommandStopActor&) const = default;
};
using Command = std::variant<CommandStartActor, CommandStopActor>;

struct CommandWrapper {
  ActorCheckpoint checkpoint;
  Command inner;
  bool operator==(const CommandWrapper&) const = default;
};

// ---- tunnel ---------------------------------------------------------------------------------

struct MessageId {
  GatewayId gateway_id{};
  RequestId request_id{};
  MessageIndex message_index = 0;
  bool operator==(const MessageId&) const = default;
};

enum class HttpStreamAbortKind : std::uint8_t {
  kUnknown = 0,
  kCancelled = 1,
  kHandlerError = 2,
  kInternalError = 3,
};
struct HttpStreamAbortReason {
  HttpStreamAbortKind kind = HttpStreamAbortKind::kUnknown;
  std::optional<std::string> detail;
  bool operator==(const HttpStreamAbortReason&) const = default;
};

struct ToEnvoyRequestStart {
  Id actor_id;
  std::optional<std::uint32_t> actor_generation;
  std::string method;
  std::string path;
  Headers headers;
  std::optional<std::string> body;
  bool stream = false;
  bool response_stream = false;
  bool operator==(const ToEnvoyRequestStart&) const = default;
};
struct ToEnvoyRequestChunk {
  std::string body;
  bool finish = false;
  bool operator==(const ToEnvoyRequestChunk&) const = default;
};
struct ToEnvoyRequestAbort {
  std::optional<Id> actor_id;
  std::optional<std::uint32_t> actor_generation;
  HttpStreamAbortReason reason;
  bool operator==(const ToEnvoyRequestAbort&) const = default;
};
struct ToEnvoyRequestBodyCancel {
  bool operator==(const ToEnvoyRequestBodyCancel&) const = default;
};
struct ToEnvoyResponseBodyWindowUpdate {
  std::uint64_t consumed_bytes = 0;
  bool operator==(const ToEnvoyResponseBodyWindowUpdate&) const = default;
};
struct ToEnvoyWebSocketOpen {
  Id actor_id;
  std::optional<std::uint32_t> actor_generation;
  std::string path;
  Headers headers;
  bool operator==(const ToEnvoyWebSocketOpen&) const = default;
};
struct ToEnvoyWebSocketMessage {
  std::string data;
  bool binary = false;
  bool operator==(const ToEnvoyWebSocketMessage&) const = default;
};
struct ToEnvoyWebSocketClose {
  std::optional<std::uint16_t> code;
  std::optional<std::string> reason;
  bool operator==(const ToEnvoyWebSocketClose&) const = default;
};
using ToEnvoyTunnelMessageKind = std::variant<ToEnvoyRequestStart,
                                              ToEnvoyRequestChunk,
                                              ToEnvoyRequestAbort,
                                              ToEnvoyRequestBodyCancel,
                                              ToEnvoyResponseBodyWindowUpdate,
                                              ToEnvoyWebSocketOpen,
                                              ToEnvoyWebSocketMessage,
                                              ToEnvoyWebSocketClose>;

struct ToRivetResponseStart {
  std::uint16_t status = 0;
  Headers headers;
  std::optional<std::string> body;
  bool stream = false;
  bool operator==(const ToRivetResponseStart&) const = default;
};
struct ToRivetResponseChunk {
  std::string body;
  bool finish = false;
  bool operator==(const ToRivetResponseChunk&) const = default;
};
struct ToRivetResponseAbort {
  HttpStreamAbortReason reason;
  bool operator==(const ToRivetResponseAbort&) const = default;
};
struct ToRivetRequestBodyWindowUpdate {
  std::uint64_t consumed_bytes = 0;
  bool operator==(const ToRivetRequestBodyWindowUpdate&) const = default;
};
struct ToRivetRequestBodyCancel {
  bool operator==(const ToRivetRequestBodyCancel&) const = default;
};
struct ToRivetWebSocketOpen {
  bool can_hibernate = false;
  bool operator==(const ToRivetWebSocketOpen&) const = default;
};
struct ToRivetWebSocketMessage {
  std::string data;
  bool binary = false;
  bool operator==(const ToRivetWebSocketMessage&) const = default;
};
struct ToRivetWebSocketMessageAck {
  MessageIndex index = 0;
  bool operator==(const ToRivetWebSocketMessageAck&) const = default;
};
struct ToRivetWebSocketClose {
  std::optional<std::uint16_t> code;
  std::optional<std::string> reason;
  bool hibernate = false;
  bool operator==(const ToRivetWebSocketClose&) const = default;
};
using ToRivetTunnelMessageKind = std::variant<ToRivetResponseStart,
                                              ToRivetResponseChunk,
                                              ToRivetResponseAbort,
                                              ToRivetRequestBodyWindowUpdate,
                                              ToRivetRequestBodyCancel,
                                              ToRivetWebSocketOpen,
                                              ToRivetWebSocketMessage,
                                              ToRivetWebSocketMessageAck,
                                              ToRivetWebSocketClose>;

struct ToEnvoyTunnelMessage {
  MessageId message_id;
  ToEnvoyTunnelMessageKind message_kind;
  bool operator==(const ToEnvoyTunnelMessage&) const = default;
};
struct ToRivetTunnelMessage {
  MessageId message_id;
  ToRivetTunnelMessageKind message_kind;
  bool operator==(const ToRivetTunnelMessage&) const = default;
};

// ---- top level: runtime -> engine -----------------------------------------------------------

struct ToRivetMetadata {
  /// map<str><ActorName>, in wire order.
  std::optional<std::vector<std::pair<std::string, ActorName>>> prepopulate_actor_names;
  std::optional<Json> metadata;
  bool operator==(const ToRivetMetadata&) const = default;
};
/// Schema: `ToRivetEvents list<EventWrapper>` (the list itself is the body).
struct ToRivetEvents {
  std::vector<EventWrapper> events;
  bool operator==(const ToRivetEvents&) const = default;
};
struct ToRivetAckCommands {
  std::vector<ActorCheckpoint> last_command_checkpoints;
  bool operator==(const ToRivetAckCommands&) const = default;
};
struct ToRivetStopping {
  bool operator==(const ToRivetStopping&) const = default;
};
struct ToRivetPong {
  std::int64_t ts = 0;
  bool operator==(const ToRivetPong&) const = default;
};
struct ToRivetKvRequest {
  Id actor_id;
  std::uint32_t request_id = 0;
  KvRequestData data;
  bool operator==(const ToRivetKvRequest&) const = default;
};
struct ToRivetSqliteGetPagesRequest {
  std::uint32_t request_id = 0;
  SqliteGetPagesRequest data;
  bool operator==(const ToRivetSqliteGetPagesRequest&) const = default;
};
struct ToRivetSqliteCommitRequest {
  std::uint32_t request_id = 0;
  SqliteCommitRequest data;
  bool operator==(const ToRivetSqliteCommitRequest&) const = default;
};
struct ToRivetSqliteCommitStageBeginRequest {
  std::uint32_t request_id = 0;
  SqliteCommitStageBeginRequest data;
  bool operator==(const ToRivetSqliteCommitStageBeginRequest&) const = default;
};
struct ToRivetSqliteCommitStageSegmentRequest {
  std::uint32_t request_id = 0;
  SqliteCommitStageSegmentRequest data;
  bool operator==(const ToRivetSqliteCommitStageSegmentRequest&) const = default;
};
struct ToRivetSqliteCommitFinalizeRequest {
  std::uint32_t request_id = 0;
  SqliteCommitFinalizeRequest data;
  bool operator==(const ToRivetSqliteCommitFinalizeRequest&) const = default;
};
struct ToRivetSqliteExecRequest {
  std::uint32_t request_id = 0;
  SqliteExecRequest data;
  bool operator==(const ToRivetSqliteExecRequest&) const = default;
};
struct ToRivetSqliteExecuteRequest {
  std::uint32_t request_id = 0;
  SqliteExecuteRequest data;
  bool operator==(const ToRivetSqliteExecuteRequest&) const = default;
};
struct ToRivetSqliteExecuteBatchRequest {
  std::uint32_t request_id = 0;
  SqliteExecuteBatchRequest data;
  bool operator==(const ToRivetSqliteExecuteBatchRequest&) const = default;
};

using ToRivet = std::variant<ToRivetMetadata,                         // #0
                             ToRivetEvents,                           // #1
                             ToRivetAckCommands,                      // #2
                             ToRivetStopping,                         // #3
                             ToRivetPong,                             // #4
                             ToRivetKvRequest,                        // #5
                             ToRivetTunnelMessage,                    // #6
                             ToRivetSqliteGetPagesRequest,            // #7
                             ToRivetSqliteCommitRequest,              // #8
                             ToRivetSqliteCommitStageBeginRequest,    // #9
                             ToRivetSqliteCommitStageSegmentRequest,  // #10
                             ToRivetSqliteCommitFinalizeRequest,      // #11
                             ToRivetSqliteExecRequest,                // #12
                             ToRivetSqliteExecuteRequest,             // #13
                             ToRivetSqliteExecuteBatchRequest>;       // #14

// ---- top level: engine -> runtime -----------------------------------------------------------

struct ProtocolMetadata {
  std::int64_t envoy_lost_threshold = 0;  // ms
  std::int64_t actor_stop_threshold = 0;  // ms
  std::uint64_t max_response_payload_size = 0;
  bool operator==(const ProtocolMetadata&) const = default;
};
struct ToEnvoyInit {
  ProtocolMetadata metadata;
  bool operator==(const ToEnvoyInit&) const = default;
};
/// Schema: `ToEnvoyCommands list<CommandWrapper>` (the list itself is the body).
struct ToEnvoyCommands {
  std::vector<CommandWrapper> commands;
  bool operator==(const ToEnvoyCommands&) const = default;
};
struct ToEnvoyAckEvents {
  std::vector<ActorCheckpoint> last_event_checkpoints;
  bool operator==(const ToEnvoyAckEvents&) const = default;
};
struct ToEnvoyKvResponse {
  std::uint32_t request_id = 0;
  KvResponseData data;
  bool operator==(const ToEnvoyKvResponse&) const = default;
};
struct ToEnvoyPing {
  std::int64_t ts = 0;
  bool operator==(const ToEnvoyPing&) const = default;
};
struct ToEnvoySqliteGetPagesResponse {
  std::uint32_t request_id = 0;
  SqliteGetPagesResponse data;
  bool operator==(const ToEnvoySqliteGetPagesResponse&) const = default;
};
struct ToEnvoySqliteCommitResponse {
  std::uint32_t request_id = 0;
  SqliteCommitResponse data;
  bool operator==(const ToEnvoySqliteCommitResponse&) const = default;
};
struct ToEnvoySqliteCommitStageBeginResponse {
  std::uint32_t request_id = 0;
  SqliteCommitStageBeginResponse data;
  bool operator==(const ToEnvoySqliteCommitStageBeginResponse&) const = default;
};
struct ToEnvoySqliteCommitStageSegmentResponse {
  std::uint32_t request_id = 0;
  SqliteCommitStageSegmentResponse data;
  bool operator==(const ToEnvoySqliteCommitStageSegmentResponse&) const = default;
};
struct ToEnvoySqliteCommitFinalizeResponse {
  std::uint32_t request_id = 0;
  SqliteCommitFinalizeResponse data;
  bool operator==(const ToEnvoySqliteCommitFinalizeResponse&) const = default;
};
struct ToEnvoySqliteExecResponse {
  std::uint32_t request_id = 0;
  SqliteExecResponse data;
  bool operator==(const ToEnvoySqliteExecResponse&) const = default;
};
struct ToEnvoySqliteExecuteResponse {
  std::uint32_t request_id = 0;
  SqliteExecuteResponse data;
  bool operator==(const ToEnvoySqliteExecuteResponse&) const = default;
};
struct ToEnvoySqliteExecuteBatchResponse {
  std::uint32_t request_id = 0;
  SqliteExecuteBatchResponse data;
  bool operator==(const ToEnvoySqliteExecuteBatchResponse&) const = default;
};

using ToEnvoy = std::variant<ToEnvoyInit,                              // #0
                             ToEnvoyCommands,                          // #1
                             ToEnvoyAckEvents,                         // #2
                             ToEnvoyKvResponse,                        // #3
                             ToEnvoyTunnelMessage,                     // #4
                             ToEnvoyPing,                              // #5
                             ToEnvoySqliteGetPagesResponse,            // #6
                             ToEnvoySqliteCommitResponse,              // #7
                             ToEnvoySqliteCommitStageBeginResponse,    // #8
                             ToEnvoySqliteCommitStageSegmentResponse,  // #9
                             ToEnvoySqliteCommitFinalizeResponse,      // #10
                             ToEnvoySqliteExecResponse,                // #11
                             ToEnvoySqliteExecuteResponse,             // #12
                             ToEnvoySqliteExecuteBatchResponse>;       // #13

// ---- small helpers --------------------------------------------------------------------------

/// SqliteValueFloat <-> double. The spec only says data[8]; these assume the IEEE-754 bits in
/// little-endian order (like every fixed-width BARE number). Defined in codec.cpp.
SqliteValueFloat sqlite_float(double v);
double sqlite_float_value(const SqliteValueFloat& v);

}  // namespace rivetkit::protocol::envoy
