#pragma once
// A shim SQLite VFS over the default one that injects the faults armed in a FaultInjector:
// failed or torn writes and failed fsyncs of the main database and WAL files. Test-only; the
// store uses it only when LocalStoreOptions::faults is set.

#include "storage/fault_injection.hpp"

#include <memory>
#include <string>

namespace rivetkit::storage {

class FaultVfs {
 public:
  /// Registers a uniquely named VFS (not the default) that forwards to the default VFS.
  static std::unique_ptr<FaultVfs> create(std::shared_ptr<FaultInjector> faults);
  /// Unregisters the VFS. Every connection using it must be closed first.
  ~FaultVfs();
  FaultVfs(const FaultVfs&) = delete;
  FaultVfs& operator=(const FaultVfs&) = delete;

  /// The name to pass to sqlite3_open_v2.
  const char* name() const { return name_.c_str(); }

  struct Impl;

 private:
  FaultVfs() = default;
  std::string name_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace rivetkit::storage
