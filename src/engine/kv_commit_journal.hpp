#pragma once
// How engine mode keeps a commit atomic when it does not fit one engine KV request.
//
// The engine applies each KV request atomically, but a request holds at most 128 keys and
// 976 KiB, and puts and deletes are separate requests. A turn that writes more (a SQL
// transaction of a few hundred pages, a large KV batch, deletes together with puts) would be
// sent as several requests, and a crash between two of them would leave half a turn: rows
// without the state that counts them, or a database with half its pages.
//
// Such a commit is written twice. First as a journal, a redo record of the whole commit under
// this generation's journal keys (0x02 | generation u32 BE | chunk u32 BE), chunk 0 last and in
// a request of its own: writing chunk 0 is the commit point. Then applied to its real keys,
// request by request, and the journal is deleted. Loading an actor first re-applies every
// complete journal it finds (one whose chunk 0 and all other chunks are there, with chunk 0's
// sequence number) and deletes the rest, so a crash before the commit point leaves the previous
// commit and a crash after it the new one, never a mix. Applying is idempotent: it only puts and
// deletes keys to the values the journal names.
//
// A commit that fits one request is sent as that one request (the common case: no journal).

#include "protocol/envoy/messages.hpp"
#include "storage/kv.hpp"
#include <rivetkit/result.hpp>

#include <cstdint>
#include <string>
#include <vector>

namespace rivetkit::engine::journal {

namespace envoy = protocol::envoy;

inline constexpr char kJournalPrefix = '\x02';
/// The engine's limits per request (envoy-protocol.md §4.8).
inline constexpr std::size_t kMaxKeysPerRequest = 128;
inline constexpr std::size_t kMaxPutBytes = 976 * 1024;  // keys counted as len + 2
inline constexpr std::size_t kChunkBytes = 120 * 1024;   // a value is at most 128 KiB

/// One commit's writes: ranges first, then deletes and puts (disjoint keys).
using Writes = storage::KvBatch::Normalized;

/// The requests that apply `writes`, each within the engine's limits: the delete ranges, the
/// deletes, then the puts.
std::vector<envoy::KvRequestData> apply_requests(Writes writes);

/// The journal of `writes` as put requests; the last one holds chunk 0 alone (the commit point).
std::vector<envoy::KvPutRequest> journal_puts(const Writes& writes,
                                              std::uint32_t generation,
                                              std::uint64_t seq);

/// [start, end) of every journal key of generations up to and including `generation`.
std::pair<std::string, std::string> journal_range_through(std::uint32_t generation);
/// [start, end) of the journal keys of exactly `generation`.
std::pair<std::string, std::string> journal_range_of(std::uint32_t generation);

struct Found {
  std::uint32_t generation = 0;
  Writes writes;
};

/// The complete journals among `entries` (a listing of the journal prefix) of generations up to
/// `generation`, oldest generation first. Incomplete ones are skipped; a complete one that does
/// not decode is an error (it was written by this code and acknowledged: data would be lost).
Result<std::vector<Found>> complete_journals(const std::vector<storage::KvEntry>& entries,
                                             std::uint32_t generation);

}  // namespace rivetkit::engine::journal
