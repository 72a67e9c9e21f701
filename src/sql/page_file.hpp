#pragma once
// PageFile: one actor's SQLite database file as SQLite sees it through the page VFS
// (page_vfs.hpp): fixed 4 KiB pages kept by a PageSource (the actor's ordered KV, or the engine's
// page store), with the pages SQLite wrote in memory until they are handed to storage.
//
// Three layers, read top-down:
// - the open transaction's pages: what SQLite wrote since its last commit;
// - the cache: every page read or committed while the database is open (committed pages stay
//   here until storage made them durable, so a read never sees an older stored copy);
// - the source, for pages not yet cached (read on demand; a page past the end reads as zeros).
//
// The commit point is SQLITE_FCNTL_COMMIT_PHASETWO: SQLite sends it once a transaction is
// committed. The transaction's pages (and the file size) then move to the committed set, which
// the actor's commit takes (take_committed) and writes as one atomic batch with its state. A
// transaction that is rolled back, or cut short by a crash, never reaches storage: the stored
// pages are always a committed database.
//
// Threads: the VFS calls run on the SQL worker that runs the connection (one at a time);
// take_committed runs on the actor's strand. One mutex guards the shared layers; the source is
// read without it.

#include <rivetkit/result.hpp>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
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
  /// `size_pages`: the stored database size; `preloaded`: stored pages already read.
  PageFile(std::uint32_t size_pages,
           std::map<std::uint32_t, std::string> preloaded,
           std::shared_ptr<PageSource> source);

  // ---- the VFS (SQL worker) -------------------------------------------------------------------
  /// SQLite's xRead: false when the source failed (the statement fails with an I/O error).
  /// Bytes past the end of the file read as zeros (`short_read` set).
  bool read(void* out, int amount, std::int64_t offset, bool& short_read);
  /// SQLite's xWrite: into the open transaction's pages.
  void write(const void* data, int amount, std::int64_t offset);
  void truncate(std::int64_t size);
  std::int64_t size() const;
  /// SQLite committed the open transaction.
  void commit();

  // ---- the actor (its strand) -----------------------------------------------------------------
  /// What committed transactions changed since the last take.
  struct Committed {
    /// Pages to store.
    std::map<std::uint32_t, std::string> pages;
    /// The database size after them, in pages; stored pages past it are to be deleted.
    std::uint32_t size_pages = 0;
  };
  /// Takes what was committed since the last take; nullopt when nothing was.
  std::optional<Committed> take_committed();
  /// Whether take_committed would return something.
  bool has_committed() const;

 private:
  /// The page, from the layers above the source; nullopt when not in memory.
  const std::string* cached(std::uint32_t pgno) const;
  std::string* page_for_write(std::uint32_t pgno);

  std::shared_ptr<PageSource> source_;
  mutable std::mutex mutex_;
  // The open transaction: worker only, but read under the mutex with the rest for simplicity.
  std::map<std::uint32_t, std::string> txn_pages_;
  std::uint32_t txn_size_pages_;
  bool txn_dirty_ = false;
  // Committed state.
  std::map<std::uint32_t, std::string> cache_;
  std::uint32_t size_pages_;
  std::map<std::uint32_t, std::string> unsaved_;
  bool unsaved_size_ = false;
};

}  // namespace rivetkit::sql
