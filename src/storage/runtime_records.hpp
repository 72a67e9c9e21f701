#pragma once
// The runtime's own data (state, hibernating connections, schedules, the created flag and the
// create input) as keys of the actor's KV (storage/kv.hpp), under the reserved prefix 0x03.
//
//   0x03 'r' | epoch u32 BE | 'h'                 head: owner, sealed, created flag, state form,
//                                                  connections' message indexes
//   0x03 'r' | epoch u32 BE | 'i'                 the create input (compat-CBOR)
//   0x03 'r' | epoch u32 BE | 'c' | conn_id       one hibernating connection
//   0x03 'r' | epoch u32 BE | 'a' | event_id      one scheduled action
//   0x03 's' | epoch u32 BE | slot u8 | chunk u32  a chunk of a state too large for the head
//
// An epoch is the generation that started the key space; later generations keep writing in it
// as long as each hands over cleanly (kv_actor_store.hpp: fencing). State chunks are apart from
// the records so that a load lists the records (small) and fetches chunks by key, a bounded
// number per request. A state up to kInlineStateBytes lives in the head itself; a larger one in
// chunks of one of two slots, the head naming which: the new chunks are written before the head
// that points at them, so a crash between leaves the previous state whole.
//
// A connection or schedule deleted in a commit that also puts keys is written as an empty value
// (a tombstone: the engine takes puts and deletes in separate requests, and one request is one
// atomic write, where two would need the commit journal); tombstones are deleted later, in
// requests of their own.
//
// Values are BARE-encoded with a version byte (our own format: nothing outside rivetkit-cpp
// reads it). Decoding rejects anything malformed.

#include "storage/actor_store.hpp"
#include <rivetkit/result.hpp>

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace rivetkit::protocol::bare {
class Writer;
class Reader;
}  // namespace rivetkit::protocol::bare

namespace rivetkit::storage::runtime_records {

inline constexpr char kPrefix = '\x03';
inline constexpr char kRecords = 'r';
inline constexpr char kChunks = 's';
inline constexpr char kHead = 'h';
inline constexpr char kInput = 'i';
inline constexpr char kConn = 'c';
inline constexpr char kSchedule = 'a';

/// A state at most this large lives in the head's value (a value holds 128 KiB).
inline constexpr std::size_t kInlineStateBytes = 96 * 1024;
/// A state chunk's size (the last one may be shorter).
inline constexpr std::size_t kChunkBytes = 120 * 1024;

std::string head_key(std::uint32_t epoch);
std::string input_key(std::uint32_t epoch);
std::string conn_key(std::uint32_t epoch, std::string_view conn_id);
std::string schedule_key(std::uint32_t epoch, std::string_view event_id);
std::string chunk_key(std::uint32_t epoch, std::uint8_t slot, std::uint32_t chunk);

/// [start, end) of every record key of epochs before `epoch`.
std::pair<std::string, std::string> records_before(std::uint32_t epoch);
/// [start, end) of every chunk key of epochs before `epoch`.
std::pair<std::string, std::string> chunks_before(std::uint32_t epoch);
/// [start, end) of the chunks of `slot` in `epoch` from chunk `from` on.
std::pair<std::string, std::string> slot_chunks(std::uint32_t epoch,
                                                std::uint8_t slot,
                                                std::uint32_t from = 0);
/// [start, end) of every record key (all epochs); the chunks sort after it.
std::pair<std::string, std::string> all_records();

struct RecordKey {
  std::uint32_t epoch = 0;
  char kind = 0;
  std::string id;  // conn_id or event_id; empty for the head and the input
};
/// Parses a record key; nullopt for anything else.
std::optional<RecordKey> parse_record_key(std::string_view key);

/// The message indexes of a hibernating connection (engine mode's tunnel, envoy-protocol.md
/// §4.11): the hot part of its record, updated with nearly every message.
struct MessageIndexes {
  std::uint16_t server = 0;
  std::uint16_t client = 0;
  bool operator==(const MessageIndexes&) const = default;
};

/// The head holds the message indexes of connections while their encoded size stays within this
/// budget (with kInlineStateBytes, a head stays under the engine's 128 KiB value limit); the
/// indexes of further connections stay in their own keys.
inline constexpr std::size_t kIndexTableBytes = 24 * 1024;

/// The bytes one connection adds to the head's index table.
inline std::size_t index_entry_bytes(std::string_view conn_id) {
  return conn_id.size() + 8;
}

/// Where the state is.
enum class StateForm : std::uint8_t { kNone = 0, kInline = 1, kChunked = 2 };

struct Head {
  /// The generation that writes this epoch now.
  std::uint32_t owner = 0;
  /// The owner stopped cleanly and writes nothing more: the next generation may take the epoch
  /// over as it is.
  bool sealed = false;
  bool has_initialized = false;
  StateForm form = StateForm::kNone;
  std::string inline_state;  // kInline
  std::uint8_t slot = 0;     // kChunked
  std::uint32_t chunks = 0;  // kChunked
  std::uint64_t size = 0;    // kChunked: bytes of state
  /// The message indexes of connections, by conn_id: they win over those in the connection's
  /// key, so that a message that only moves them writes the head alone, one key per commit
  /// however many connections it touches.
  std::map<std::string, MessageIndexes> indexes;
  bool operator==(const Head&) const = default;
};

/// A head of `owner` with nothing in it yet.
inline Head owned_by(std::uint32_t owner) {
  Head head;
  head.owner = owner;
  return head;
}

std::string encode_head(const Head& head);
Result<Head> decode_head(std::string_view bytes);

/// How a connection's tunnel id is laid out: as two 4-byte ids, gateway then request (engine
/// mode's record of earlier releases, and connection keys of version 1), or as one opaque field.
enum class ConnLayout { kTwoIds, kTunnelId };

/// The fields of a connection and of a schedule without a version byte (shared with engine
/// mode's record of earlier releases, record_codec.cpp). A read returns false when the bytes
/// do not hold them.
void write_conn_fields(protocol::bare::Writer& w, const PersistedConn& conn, ConnLayout layout);
bool read_conn_fields(protocol::bare::Reader& r, PersistedConn& conn, ConnLayout layout);
void write_schedule_fields(protocol::bare::Writer& w, const PersistedSchedule& schedule);
bool read_schedule_fields(protocol::bare::Reader& r, PersistedSchedule& schedule);

std::string encode_conn(const PersistedConn& conn);
Result<PersistedConn> decode_conn(std::string_view bytes);

std::string encode_schedule(const PersistedSchedule& schedule);
Result<PersistedSchedule> decode_schedule(std::string_view bytes);

}  // namespace rivetkit::storage::runtime_records
