#pragma once
// PageFile: one actor's SQLite database file as SQLite sees it through the page VFS
// (page_vfs.hpp): fixed 4 KiB pages kept by a PageSource (the actor's ordered KV, or the engine's
// page store), with the pages SQLite wrote in memory until they are handed to storage.
//
// Three layers, read top-down:
// - the open transaction's pages: what SQLite wrote since its last commit;
// - the cache of at most `cache_pages` pages, least recently used evicted first; a committed page
//   is pinned in it until storage made it durable (publish, take_committed, then durable()), so a
//   read never sees an older stored copy, and may push the cache past its bound only while pinned;
// - the source, for pages not in memory (read on demand; a page past the end reads as zeros).
// So an open database holds its pinned pages plus at most `cache_pages`, however large it is
// (SQLite's own page cache, per connection, sits above this one).
//
// The commit point is SQLITE_FCNTL_COMMIT_PHASETWO: SQLite sends it once a transaction is
// committed. The transaction's pages (and the file size) then move to the staged set, on the
// worker; the actor's strand publishes them (publish) when the statement's caller resumes, and
// from there the actor's next write takes them (take_committed) as one atomic batch with its
// state. Staging is what keeps a statement's rows with the state its caller changes right after
// it: without it, another call's write could take the rows on the strand while the statement's
// result was still on its way back, and a crash then would keep rows whose state was never
// written. A transaction that is rolled back, or cut short by a crash, never reaches storage:
// the stored pages are always a committed database.
//
// Threads: the VFS calls run on the SQL worker that runs the connection (one at a time);
// publish, take_committed and durable run on the actor's strand. One mutex guards the shared
// layers; the source is read without it.

#include <rivetkit/result.hpp>

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>

namespace rivetkit::sql {

inline constexpr std::uint32_t kPageSize = 4096;

/// Where the pages of a database are kept. Called from the SQL worker; may block.
class PageSource {
 public:
  virtual ~PageSource() = default;
  /// Page `pgno` (1-based) as stored; nullopt when it was never written.
  virtual Result<std::optional<std::string>> read_page(std::uint32_t pgno) = 0;
};

class PageFile {
 public:
  /// `size_pages`: the stored database size; `preloaded`: stored pages already read (cached, the
  /// lowest page numbers kept when they are more than `cache_pages`).
  PageFile(std::uint32_t size_pages,
           std::map<std::uint32_t, std::string> preloaded,
           std::shared_ptr<PageSource> source,
           std::size_t cache_pages);

  // ---- the VFS (SQL worker) -------------------------------------------------------------------
  /// SQLite's xRead: false when the source failed (the statement fails with an I/O error).
  /// Bytes past the end of the file read as zeros (`short_read` set).
  bool read(void* out, int amount, std::int64_t offset, bool& short_read);
  /// SQLite's xWrite: into the open transaction's pages. False when a partly written page could
  /// not be read from the source.
  bool write(const void* data, int amount, std::int64_t offset);
  void truncate(std::int64_t size);
  std::int64_t size() const;
  /// SQLite committed the open transaction.
  void commit();

  // ---- the actor (its strand) -----------------------------------------------------------------
  /// Makes what transactions committed since the last call takeable: called on the strand when
  /// the statement that committed them returns to its caller.
  void publish();
  /// What committed transactions changed since the last take.
  struct Committed {
    /// Pages to store.
    std::map<std::uint32_t, std::string> pages;
    /// The database size after them, in pages; stored pages past it are to be deleted.
    std::uint32_t size_pages = 0;
  };
  /// Takes what was published since the last take; nullopt when nothing was. Its pages stay
  /// pinned in the cache until durable().
  std::optional<Committed> take_committed();
  /// What was taken is durable: the store returns it, so its pages may be evicted.
  void durable();
  /// Pages in the cache now (pinned ones included).
  std::size_t cached_pages() const;
  /// Whether take_committed would return something.
  bool has_committed() const;

 private:
  struct CacheEntry {
    std::string page;
    std::list<std::uint32_t>::iterator lru;
  };
  /// The page, from the layers above the source; nullptr when not in memory. A cache hit
  /// counts as a use.
  const std::string* cached(std::uint32_t pgno);
  /// Fetches `pgno` from the source into the cache unless it is in memory already (called
  /// without the mutex). False when the source failed.
  bool fetch(std::uint32_t pgno, std::string* copy_to);
  /// The open transaction's copy of `pgno`, made from memory or `fetched` on first write.
  std::string* page_for_write(std::uint32_t pgno, std::map<std::uint32_t, std::string>& fetched);
  void cache_put(std::uint32_t pgno, std::string page);
  /// Drops cached pages numbered `first` and above.
  void cache_drop_from(std::uint32_t first);
  /// Evicts unpinned pages, least recently used first, down to the bound.
  void evict();

  std::shared_ptr<PageSource> source_;
  const std::size_t cache_pages_;
  mutable std::mutex mutex_;
  // The open transaction: worker only, but read under the mutex with the rest for simplicity.
  std::map<std::uint32_t, std::string> txn_pages_;
  std::uint32_t txn_size_pages_;
  bool txn_dirty_ = false;
  // Committed state.
  std::map<std::uint32_t, CacheEntry> cache_;
  std::list<std::uint32_t> lru_;                  // most recently used first
  std::uint32_t size_pages_;                      // the committed size, for reads
  std::map<std::uint32_t, std::string> staged_;   // committed, not yet published (pinned)
  std::map<std::uint32_t, std::string> unsaved_;  // published, not yet taken (pinned)
  std::set<std::uint32_t> in_flight_;             // taken, not yet durable (pinned)
  std::uint32_t published_size_pages_;            // the size as of the last publish
  bool staged_any_ = false;
  bool unsaved_size_ = false;
};

}  // namespace rivetkit::sql
