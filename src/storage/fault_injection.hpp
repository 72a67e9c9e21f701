#pragma once
// Test-only fault injection for LocalStore (DuckDB-style, cpp-guide §8 "tests that bite").
//
// Pass a FaultInjector in LocalStoreOptions::faults. The store then opens its database through a
// shim VFS (fault_vfs.hpp) that can fail or tear writes and fail fsyncs of the database and WAL
// files, and the writer thread consults it at each group commit and after each write op.
//
// Threading: every member is safe to call from any thread. Faults are armed by the test thread
// and consumed by the storage threads; each armed fault fires exactly once.

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string_view>
#include <utility>

namespace rivetkit::storage {

class FaultInjector {
 public:
  /// The next `n` group commits roll back instead of committing; every op in them fails with
  /// `storage.sqlite_error` ("injected commit failure").
  void fail_next_commits(int n = 1) { commit_faults_.fetch_add(n); }
  /// The next `n` fsyncs of the database or WAL file return SQLITE_IOERR_FSYNC without syncing.
  void fail_next_syncs(int n = 1) { sync_faults_.fetch_add(n); }
  /// The next `n` writes to the database or WAL file return SQLITE_IOERR_WRITE. With `tear`, the
  /// first half of the buffer reaches the file first (a torn write).
  void fail_next_writes(int n = 1, bool tear = false) {
    tear_.store(tear);
    write_faults_.fetch_add(n);
  }
  /// Called on the writer thread after each write op's body ran successfully, inside the op's
  /// savepoint. Returning true fails that op: its changes roll back, the rest of the batch
  /// commits. `op` is the operation name ("create_actor", "commit", "destroy_actor", ...).
  void set_op_filter(std::function<bool(std::string_view op)> filter) {
    std::lock_guard<std::mutex> lock(mu_);
    op_filter_ = std::move(filter);
  }

  // --- consumed by the store and the VFS shim --------------------------------------------------
  bool take_commit_fault() { return take(commit_faults_); }
  bool take_sync_fault() { return take(sync_faults_); }
  bool take_write_fault(bool& tear) {
    if (!take(write_faults_)) {
      return false;
    }
    tear = tear_.load();
    return true;
  }
  bool should_fail_op(std::string_view op) {
    std::lock_guard<std::mutex> lock(mu_);
    return op_filter_ && op_filter_(op);
  }

  /// fsyncs of the database and WAL files that went through the shim (counted, not faulted).
  void note_sync() { syncs_.fetch_add(1); }
  std::uint64_t syncs() const { return syncs_.load(); }

 private:
  static bool take(std::atomic<int>& counter) {
    int n = counter.load();
    while (n > 0) {
      if (counter.compare_exchange_weak(n, n - 1)) {
        return true;
      }
    }
    return false;
  }

  std::atomic<int> commit_faults_{0};
  std::atomic<int> sync_faults_{0};
  std::atomic<int> write_faults_{0};
  std::atomic<bool> tear_{false};
  std::atomic<std::uint64_t> syncs_{0};
  std::mutex mu_;
  std::function<bool(std::string_view)> op_filter_;
};

}  // namespace rivetkit::storage
