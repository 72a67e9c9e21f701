#pragma once
// DirLock: the one-owner rule for a data directory. Two processes serving the same directory
// would both accept writes for the same actors and lose each other's acknowledged changes (each
// caches state and generations in memory), so the second one must refuse to start.

#include <rivetkit/result.hpp>

#include <string>

namespace rivetkit::storage {

class DirLock {
 public:
  /// Takes the exclusive lock `<dir>/rivetkit.lock` (flock, released by the kernel when the
  /// process dies, so a crash never leaves a stale lock) and records this process in it.
  /// Held by another process -> error `storage.data_dir_locked` naming the holder's pid.
  static Result<DirLock> acquire(const std::string& dir);

  DirLock() = default;
  DirLock(DirLock&& other) noexcept;
  DirLock& operator=(DirLock&& other) noexcept;
  DirLock(const DirLock&) = delete;
  DirLock& operator=(const DirLock&) = delete;
  ~DirLock();

  /// Releases the lock (idempotent).
  void release();
  bool held() const { return fd_ >= 0; }

 private:
  explicit DirLock(int fd) : fd_(fd) {}
  int fd_ = -1;
};

}  // namespace rivetkit::storage
