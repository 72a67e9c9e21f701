#pragma once
// The inspector WebSocket protocol (core-semantics.md §9): the messages of its newest version (6)
// as C++ values, and their encoding for every version a client may speak (1 to 6). Written from
// the published schema facts (union order and struct fields per version); the `data` fields
// carry CBOR (state, connection details, action arguments and output, database answers).
//
// Framing: a client that names `protocol_version=N` on the URL exchanges plain BARE of version N.
// A client that names none is a legacy one: every frame starts with its version (u16, little
// endian); the server answers in version 5 (kLegacyVersion).
//
// A message the client's version cannot carry is sent as an Error whose message names what was
// dropped (`inspector.queue_dropped`, ...), as RivetKit does; a request of a kind the version does
// not have cannot be decoded.

#include <rivetkit/result.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace rivetkit::protocol::inspector {

inline constexpr std::uint16_t kMinVersion = 1;
inline constexpr std::uint16_t kMaxVersion = 6;
inline constexpr std::uint16_t kLegacyVersion = 5;

// ---- to the server ------------------------------------------------------------------------------

struct PatchStateRequest {
  std::string state;  // CBOR
};
struct StateRequest {
  std::uint64_t id = 0;
};
struct ConnectionsRequest {
  std::uint64_t id = 0;
};
struct ActionRequest {
  std::uint64_t id = 0;
  std::string name;
  std::string args;  // CBOR array
};
struct RpcsListRequest {
  std::uint64_t id = 0;
};
struct TraceQueryRequest {
  std::uint64_t id = 0;
  std::uint64_t start_ms = 0;
  std::uint64_t end_ms = 0;
  std::uint64_t limit = 0;
};
struct QueueRequest {
  std::uint64_t id = 0;
  std::uint64_t limit = 0;
};
struct WorkflowHistoryRequest {
  std::uint64_t id = 0;
};
struct WorkflowReplayRequest {
  std::uint64_t id = 0;
  std::optional<std::string> entry_id;
};
struct DatabaseSchemaRequest {
  std::uint64_t id = 0;
};
struct DatabaseTableRowsRequest {
  std::uint64_t id = 0;
  std::string table;
  std::uint64_t limit = 0;
  std::uint64_t offset = 0;
};
struct SchedulesRequest {
  std::uint64_t id = 0;
};
struct ScheduleHistoryRequest {
  std::uint64_t id = 0;
  std::string schedule_id;
  std::uint64_t limit = 0;
};
struct ScheduleDeleteRequest {
  std::uint64_t id = 0;
  std::string schedule_id;
  std::string kind;
};

using ToServer = std::variant<PatchStateRequest,
                              StateRequest,
                              ConnectionsRequest,
                              ActionRequest,
                              RpcsListRequest,
                              TraceQueryRequest,
                              QueueRequest,
                              WorkflowHistoryRequest,
                              WorkflowReplayRequest,
                              DatabaseSchemaRequest,
                              DatabaseTableRowsRequest,
                              SchedulesRequest,
                              ScheduleHistoryRequest,
                              ScheduleDeleteRequest>;

// ---- to the client ------------------------------------------------------------------------------

struct Connection {
  std::string id;
  std::string details;  // CBOR
};
struct Schedule {
  std::string id;
  std::optional<std::string> name;
  std::string kind;  // "at"
  std::string action;
  std::string args;  // CBOR array
  std::uint64_t next_run_at = 0;
  std::optional<std::uint64_t> last_run_at;
  std::optional<std::string> expression;
  std::optional<std::string> timezone;
  std::optional<std::uint64_t> interval_ms;
  std::optional<std::uint64_t> max_history;
};
struct Init {
  std::vector<Connection> connections;
  std::optional<std::string> state;  // CBOR
  bool is_state_enabled = false;
  std::vector<std::string> rpcs;
  bool is_database_enabled = false;
  std::uint64_t queue_size = 0;
  std::optional<std::string> workflow_history;
  bool is_workflow_enabled = false;
  std::vector<Schedule> schedules;  // (tab config: none)
};
struct StateResponse {
  std::uint64_t rid = 0;
  std::optional<std::string> state;
  bool is_state_enabled = false;
};
struct ConnectionsResponse {
  std::uint64_t rid = 0;
  std::vector<Connection> connections;
};
struct ActionResponse {
  std::uint64_t rid = 0;
  std::string output;  // CBOR
};
struct ConnectionsUpdated {
  std::vector<Connection> connections;
};
struct QueueUpdated {
  std::uint64_t queue_size = 0;
};
struct StateUpdated {
  std::string state;  // CBOR
};
struct WorkflowHistoryUpdated {
  std::string history;
};
struct SchedulesUpdated {
  std::vector<Schedule> schedules;
};
struct RpcsListResponse {
  std::uint64_t rid = 0;
  std::vector<std::string> rpcs;
};
struct TraceQueryResponse {
  std::uint64_t rid = 0;
  std::string payload;
};
struct QueueMessageSummary {
  std::uint64_t id = 0;
  std::string name;
  std::uint64_t created_at_ms = 0;
};
struct QueueResponse {
  std::uint64_t rid = 0;
  std::uint64_t size = 0;
  std::uint64_t max_size = 0;
  std::vector<QueueMessageSummary> messages;
  bool truncated = false;
};
struct WorkflowHistoryResponse {
  std::uint64_t rid = 0;
  std::optional<std::string> history;
  bool is_workflow_enabled = false;
};
struct WorkflowReplayResponse {
  std::uint64_t rid = 0;
  std::optional<std::string> history;
  bool is_workflow_enabled = false;
};
struct SchedulesResponse {
  std::uint64_t rid = 0;
  std::vector<Schedule> schedules;
};
/// (No fire history is kept: always empty.)
struct ScheduleHistoryResponse {
  std::uint64_t rid = 0;
  std::string schedule_id;
};
struct ScheduleDeleteResponse {
  std::uint64_t rid = 0;
  std::string schedule_id;
  bool deleted = false;
};
struct ErrorMessage {
  std::string message;
};
struct DatabaseSchemaResponse {
  std::uint64_t rid = 0;
  std::string schema;  // CBOR
};
struct DatabaseTableRowsResponse {
  std::uint64_t rid = 0;
  std::string result;  // CBOR
};

using ToClient = std::variant<StateResponse,
                              ConnectionsResponse,
                              ActionResponse,
                              ConnectionsUpdated,
                              QueueUpdated,
                              StateUpdated,
                              WorkflowHistoryUpdated,
                              SchedulesUpdated,
                              RpcsListResponse,
                              TraceQueryResponse,
                              QueueResponse,
                              WorkflowHistoryResponse,
                              WorkflowReplayResponse,
                              SchedulesResponse,
                              ScheduleHistoryResponse,
                              ScheduleDeleteResponse,
                              ErrorMessage,
                              Init,
                              DatabaseSchemaResponse,
                              DatabaseTableRowsResponse>;

/// `message` as plain BARE of `version` (kMinVersion..kMaxVersion).
std::string encode_to_client(const ToClient& message, std::uint16_t version);
/// The same with the version first (u16 little endian): the legacy framing.
std::string encode_to_client_embedded(const ToClient& message, std::uint16_t version);
/// A client frame of `version`; an error names what is wrong with it.
Result<ToServer> decode_to_server(std::string_view bytes, std::uint16_t version);
/// A legacy frame: its version first.
Result<ToServer> decode_to_server_embedded(std::string_view bytes);

}  // namespace rivetkit::protocol::inspector
