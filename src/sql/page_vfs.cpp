#include "sql/page_vfs.hpp"

#include <sqlite3.h>

#include <atomic>
#include <cstring>
#include <map>
#include <mutex>
#include <string>

namespace rivetkit::sql {
namespace {

constexpr const char* kVfsName = "rivetkit-pages";

// Open files name their PageFile: the VFS's xOpen only gets a path.
std::mutex files_mutex;
std::map<std::string, PageFile*>& files() {
  static std::map<std::string, PageFile*> m;
  return m;
}

struct PageHandle {
  sqlite3_file base;  // first member: SQLite hands us back &base
  PageFile* file;
};

PageFile& file_of(sqlite3_file* f) {
  return *reinterpret_cast<PageHandle*>(f)->file;
}

int x_close(sqlite3_file*) {
  return SQLITE_OK;
}

int x_read(sqlite3_file* f, void* out, int amount, sqlite3_int64 offset) {
  bool short_read = false;
  if (!file_of(f).read(out, amount, offset, short_read)) {
    return SQLITE_IOERR_READ;
  }
  return short_read ? SQLITE_IOERR_SHORT_READ : SQLITE_OK;
}

int x_write(sqlite3_file* f, const void* data, int amount, sqlite3_int64 offset) {
  return file_of(f).write(data, amount, offset) ? SQLITE_OK : SQLITE_IOERR_WRITE;
}

int x_truncate(sqlite3_file* f, sqlite3_int64 size) {
  file_of(f).truncate(size);
  return SQLITE_OK;
}

int x_sync(sqlite3_file*, int) {
  return SQLITE_OK;
}

int x_file_size(sqlite3_file* f, sqlite3_int64* size) {
  *size = file_of(f).size();
  return SQLITE_OK;
}

// One connection per file, opened with locking_mode=EXCLUSIVE: locks have nothing to guard.
int x_lock(sqlite3_file*, int) {
  return SQLITE_OK;
}
int x_unlock(sqlite3_file*, int) {
  return SQLITE_OK;
}
int x_check_reserved_lock(sqlite3_file*, int* out) {
  *out = 0;
  return SQLITE_OK;
}

int x_file_control(sqlite3_file* f, int op, void*) {
  if (op == SQLITE_FCNTL_COMMIT_PHASETWO) {
    file_of(f).commit();
    return SQLITE_OK;
  }
  return SQLITE_NOTFOUND;
}

int x_sector_size(sqlite3_file*) {
  return static_cast<int>(kPageSize);
}
int x_device_characteristics(sqlite3_file*) {
  return SQLITE_IOCAP_POWERSAFE_OVERWRITE;
}

const sqlite3_io_methods kMethods = {
    1,  // iVersion: no shared memory (no WAL), no mmap
    x_close,
    x_read,
    x_write,
    x_truncate,
    x_sync,
    x_file_size,
    x_lock,
    x_unlock,
    x_check_reserved_lock,
    x_file_control,
    x_sector_size,
    x_device_characteristics,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
    nullptr,
};

int v_open(sqlite3_vfs*, sqlite3_filename name, sqlite3_file* f, int flags, int* out_flags) {
  f->pMethods = nullptr;
  if ((flags & SQLITE_OPEN_MAIN_DB) == 0 || name == nullptr) {
    // Journals and temporary files are kept in memory by the pragmas the connection sets;
    // nothing may reach the local disk.
    return SQLITE_CANTOPEN;
  }
  std::lock_guard lock(files_mutex);
  auto it = files().find(name);
  if (it == files().end()) {
    return SQLITE_CANTOPEN;
  }
  auto* h = reinterpret_cast<PageHandle*>(f);
  h->file = it->second;
  h->base.pMethods = &kMethods;
  if (out_flags != nullptr) {
    *out_flags = flags;
  }
  return SQLITE_OK;
}

int v_delete(sqlite3_vfs*, const char*, int) {
  return SQLITE_OK;
}

int v_access(sqlite3_vfs*, const char*, int, int* out) {
  *out = 0;  // no journal ever exists
  return SQLITE_OK;
}

int v_full_pathname(sqlite3_vfs*, const char* name, int n, char* out) {
  std::strncpy(out, name, static_cast<std::size_t>(n));
  out[n - 1] = '\0';
  return SQLITE_OK;
}

sqlite3_vfs* default_vfs() {
  return sqlite3_vfs_find(nullptr);
}

int v_randomness(sqlite3_vfs*, int n, char* out) {
  return default_vfs()->xRandomness(default_vfs(), n, out);
}
int v_sleep(sqlite3_vfs*, int us) {
  return default_vfs()->xSleep(default_vfs(), us);
}
int v_current_time(sqlite3_vfs*, double* out) {
  return default_vfs()->xCurrentTime(default_vfs(), out);
}
int v_current_time_int64(sqlite3_vfs*, sqlite3_int64* out) {
  return default_vfs()->xCurrentTimeInt64(default_vfs(), out);
}
int v_get_last_error(sqlite3_vfs*, int, char*) {
  return 0;
}

sqlite3_vfs* page_vfs() {
  static sqlite3_vfs* vfs = [] {
    static sqlite3_vfs v{};
    v.iVersion = 2;
    v.szOsFile = sizeof(PageHandle);
    v.mxPathname = 256;
    v.zName = kVfsName;
    v.xOpen = v_open;
    v.xDelete = v_delete;
    v.xAccess = v_access;
    v.xFullPathname = v_full_pathname;
    // No xDlOpen: extensions can never be loaded.
    v.xRandomness = v_randomness;
    v.xSleep = v_sleep;
    v.xCurrentTime = v_current_time;
    v.xGetLastError = v_get_last_error;
    v.xCurrentTimeInt64 = v_current_time_int64;
    sqlite3_vfs_register(&v, 0);
    return &v;
  }();
  return vfs;
}

}  // namespace

Result<sqlite3*> open_on_pages(PageFile& file) {
  static std::atomic<std::uint64_t> next{1};
  auto* vfs = page_vfs();
  std::string name = "rivetkit-db-" + std::to_string(next.fetch_add(1));
  {
    std::lock_guard lock(files_mutex);
    files()[name] = &file;
  }
  sqlite3* db = nullptr;
  int rc =
      sqlite3_open_v2(name.c_str(), &db,
                      SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX, vfs->zName);
  {
    // The handle keeps its PageFile from here on: the name is no longer needed.
    std::lock_guard lock(files_mutex);
    files().erase(name);
  }
  if (rc != SQLITE_OK) {
    std::string message = db != nullptr ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
    sqlite3_close(db);
    return fail(Error{"database", "open_failed", "Could not open the actor's database: " + message,
                      std::nullopt, false});
  }
  sqlite3_extended_result_codes(db, 1);
  return db;
}

}  // namespace rivetkit::sql
