#include "storage/fault_vfs.hpp"

#include <fmt/format.h>
#include <sqlite3.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <new>

namespace rivetkit::storage {

struct FaultVfs::Impl {
  sqlite3_vfs vfs{};  // first member: SQLite hands us back &vfs
  sqlite3_vfs* real = nullptr;
  std::shared_ptr<FaultInjector> faults;
};

namespace {

// The shim file: our header followed by the real VFS's file object.
struct ShimFile {
  sqlite3_file base;
  sqlite3_file* real;
  FaultInjector* faults;
  bool inject;  // main database or WAL file
};

FaultVfs::Impl* impl_of(sqlite3_vfs* vfs) {
  return static_cast<FaultVfs::Impl*>(vfs->pAppData);
}
ShimFile* shim_of(sqlite3_file* f) {
  return reinterpret_cast<ShimFile*>(f);
}
sqlite3_file* real_of(sqlite3_file* f) {
  return shim_of(f)->real;
}

int shim_close(sqlite3_file* f) {
  int rc = real_of(f)->pMethods != nullptr ? real_of(f)->pMethods->xClose(real_of(f)) : SQLITE_OK;
  return rc;
}

int shim_read(sqlite3_file* f, void* buf, int amt, sqlite3_int64 off) {
  return real_of(f)->pMethods->xRead(real_of(f), buf, amt, off);
}

int shim_write(sqlite3_file* f, const void* buf, int amt, sqlite3_int64 off) {
  ShimFile* s = shim_of(f);
  bool tear = false;
  if (s->inject && s->faults->take_write_fault(tear)) {
    if (tear && amt > 1) {
      s->real->pMethods->xWrite(s->real, buf, amt / 2, off);
    }
    return SQLITE_IOERR_WRITE;
  }
  return s->real->pMethods->xWrite(s->real, buf, amt, off);
}

int shim_truncate(sqlite3_file* f, sqlite3_int64 size) {
  return real_of(f)->pMethods->xTruncate(real_of(f), size);
}

int shim_sync(sqlite3_file* f, int flags) {
  ShimFile* s = shim_of(f);
  if (s->inject) {
    if (s->faults->take_sync_fault()) {
      return SQLITE_IOERR_FSYNC;
    }
    s->faults->note_sync();
  }
  return s->real->pMethods->xSync(s->real, flags);
}

int shim_file_size(sqlite3_file* f, sqlite3_int64* size) {
  return real_of(f)->pMethods->xFileSize(real_of(f), size);
}

int shim_lock(sqlite3_file* f, int lock) {
  return real_of(f)->pMethods->xLock(real_of(f), lock);
}

int shim_unlock(sqlite3_file* f, int lock) {
  return real_of(f)->pMethods->xUnlock(real_of(f), lock);
}

int shim_check_reserved_lock(sqlite3_file* f, int* out) {
  return real_of(f)->pMethods->xCheckReservedLock(real_of(f), out);
}

int shim_file_control(sqlite3_file* f, int op, void* arg) {
  return real_of(f)->pMethods->xFileControl(real_of(f), op, arg);
}

int shim_sector_size(sqlite3_file* f) {
  return real_of(f)->pMethods->xSectorSize(real_of(f));
}

int shim_device_characteristics(sqlite3_file* f) {
  return real_of(f)->pMethods->xDeviceCharacteristics(real_of(f));
}

int shim_shm_map(sqlite3_file* f, int region, int size, int extend, volatile void** out) {
  return real_of(f)->pMethods->xShmMap(real_of(f), region, size, extend, out);
}

int shim_shm_lock(sqlite3_file* f, int offset, int n, int flags) {
  return real_of(f)->pMethods->xShmLock(real_of(f), offset, n, flags);
}

void shim_shm_barrier(sqlite3_file* f) {
  real_of(f)->pMethods->xShmBarrier(real_of(f));
}

int shim_shm_unmap(sqlite3_file* f, int delete_flag) {
  return real_of(f)->pMethods->xShmUnmap(real_of(f), delete_flag);
}

int shim_fetch(sqlite3_file* f, sqlite3_int64 off, int amt, void** out) {
  return real_of(f)->pMethods->xFetch(real_of(f), off, amt, out);
}

int shim_unfetch(sqlite3_file* f, sqlite3_int64 off, void* p) {
  return real_of(f)->pMethods->xUnfetch(real_of(f), off, p);
}

// Version 1 (no shm: temp files, journals), 2 (shm) and 3 (mmap) method tables, chosen to match
// what the real file supports so SQLite sees the same capabilities.
sqlite3_io_methods make_methods(int version) {
  sqlite3_io_methods m{};
  m.iVersion = version;
  m.xClose = shim_close;
  m.xRead = shim_read;
  m.xWrite = shim_write;
  m.xTruncate = shim_truncate;
  m.xSync = shim_sync;
  m.xFileSize = shim_file_size;
  m.xLock = shim_lock;
  m.xUnlock = shim_unlock;
  m.xCheckReservedLock = shim_check_reserved_lock;
  m.xFileControl = shim_file_control;
  m.xSectorSize = shim_sector_size;
  m.xDeviceCharacteristics = shim_device_characteristics;
  if (version >= 2) {
    m.xShmMap = shim_shm_map;
    m.xShmLock = shim_shm_lock;
    m.xShmBarrier = shim_shm_barrier;
    m.xShmUnmap = shim_shm_unmap;
  }
  if (version >= 3) {
    m.xFetch = shim_fetch;
    m.xUnfetch = shim_unfetch;
  }
  return m;
}

const sqlite3_io_methods kMethods1 = make_methods(1);
const sqlite3_io_methods kMethods2 = make_methods(2);
const sqlite3_io_methods kMethods3 = make_methods(3);

int vfs_open(
    sqlite3_vfs* vfs, sqlite3_filename name, sqlite3_file* file, int flags, int* out_flags) {
  FaultVfs::Impl* impl = impl_of(vfs);
  ShimFile* s = shim_of(file);
  s->base.pMethods = nullptr;
  s->real = reinterpret_cast<sqlite3_file*>(reinterpret_cast<char*>(file) + sizeof(ShimFile));
  s->faults = impl->faults.get();
  s->inject = (flags & (SQLITE_OPEN_MAIN_DB | SQLITE_OPEN_WAL)) != 0;
  int rc = impl->real->xOpen(impl->real, name, s->real, flags, out_flags);
  if (s->real->pMethods != nullptr) {
    int v = s->real->pMethods->iVersion;
    s->base.pMethods = v >= 3 ? &kMethods3 : (v == 2 ? &kMethods2 : &kMethods1);
  }
  return rc;
}

int vfs_delete(sqlite3_vfs* vfs, const char* name, int sync_dir) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  return real->xDelete(real, name, sync_dir);
}

int vfs_access(sqlite3_vfs* vfs, const char* name, int flags, int* out) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  return real->xAccess(real, name, flags, out);
}

int vfs_full_pathname(sqlite3_vfs* vfs, const char* name, int n, char* out) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  return real->xFullPathname(real, name, n, out);
}

void* vfs_dl_open(sqlite3_vfs* vfs, const char* name) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  return real->xDlOpen(real, name);
}

void vfs_dl_error(sqlite3_vfs* vfs, int n, char* out) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  real->xDlError(real, n, out);
}

void (*vfs_dl_sym(sqlite3_vfs* vfs, void* handle, const char* sym))(void) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  return real->xDlSym(real, handle, sym);
}

void vfs_dl_close(sqlite3_vfs* vfs, void* handle) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  real->xDlClose(real, handle);
}

int vfs_randomness(sqlite3_vfs* vfs, int n, char* out) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  return real->xRandomness(real, n, out);
}

int vfs_sleep(sqlite3_vfs* vfs, int micros) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  return real->xSleep(real, micros);
}

int vfs_current_time(sqlite3_vfs* vfs, double* out) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  return real->xCurrentTime(real, out);
}

int vfs_get_last_error(sqlite3_vfs* vfs, int n, char* out) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  return real->xGetLastError != nullptr ? real->xGetLastError(real, n, out) : 0;
}

int vfs_current_time_int64(sqlite3_vfs* vfs, sqlite3_int64* out) {
  sqlite3_vfs* real = impl_of(vfs)->real;
  return real->xCurrentTimeInt64(real, out);
}

std::atomic<unsigned> g_vfs_counter{0};

}  // namespace

std::unique_ptr<FaultVfs> FaultVfs::create(std::shared_ptr<FaultInjector> faults) {
  sqlite3_vfs* real = sqlite3_vfs_find(nullptr);
  if (real == nullptr) {
    return nullptr;
  }
  std::unique_ptr<FaultVfs> out(new FaultVfs());
  out->name_ = fmt::format("rivetkit-fault-{}", g_vfs_counter.fetch_add(1));
  out->impl_ = std::make_unique<Impl>();
  Impl& impl = *out->impl_;
  impl.real = real;
  impl.faults = std::move(faults);
  sqlite3_vfs& v = impl.vfs;
  v.iVersion = 2;  // up to xCurrentTimeInt64; the syscall hooks are not forwarded
  v.szOsFile = static_cast<int>(sizeof(ShimFile)) + real->szOsFile;
  v.mxPathname = real->mxPathname;
  v.zName = out->name_.c_str();
  v.pAppData = &impl;
  v.xOpen = vfs_open;
  v.xDelete = vfs_delete;
  v.xAccess = vfs_access;
  v.xFullPathname = vfs_full_pathname;
  v.xDlOpen = vfs_dl_open;
  v.xDlError = vfs_dl_error;
  v.xDlSym = vfs_dl_sym;
  v.xDlClose = vfs_dl_close;
  v.xRandomness = vfs_randomness;
  v.xSleep = vfs_sleep;
  v.xCurrentTime = vfs_current_time;
  v.xGetLastError = vfs_get_last_error;
  v.xCurrentTimeInt64 = vfs_current_time_int64;
  if (sqlite3_vfs_register(&v, 0) != SQLITE_OK) {
    return nullptr;
  }
  return out;
}

FaultVfs::~FaultVfs() {
  if (impl_) {
    sqlite3_vfs_unregister(&impl_->vfs);
  }
}

}  // namespace rivetkit::storage
