#pragma once
// Helpers shared by the storage tests: temporary directories, running a Task to completion from
// plain test code, and actor records.

#include "storage/local_store.hpp"
#include <rivetkit/task.hpp>

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>

namespace rivetkit::storage::test {

/// A fresh directory under $TMPDIR (mkdtemp), removed with everything in it on destruction.
class TempDir {
 public:
  TempDir() {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "rivetkit-storage-XXXXXX").string();
    char* made = mkdtemp(pattern.data());
    if (made == nullptr) {
      ADD_FAILURE() << "mkdtemp failed";
    }
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string db_path() const { return path_ + "/rivetkit.db"; }

 private:
  std::string path_;
};

/// Runs `task` on a private io_context until it finishes and returns its value.
template <class T>
T run_sync(Task<T> task) {
  boost::asio::io_context io;
  std::optional<T> out;
  std::exception_ptr error;
  boost::asio::co_spawn(io, std::move(task), [&](std::exception_ptr e, T value) {
    error = e;
    if (!e) {
      out.emplace(std::move(value));
    }
  });
  io.run();
  if (error) {
    std::rethrow_exception(error);
  }
  return std::move(*out);
}

inline ActorRecord make_record(std::string actor_id,
                               std::string name,
                               std::string key,
                               std::int64_t create_ts) {
  ActorRecord r;
  r.actor_id = std::move(actor_id);
  r.name = std::move(name);
  r.key = std::move(key);
  r.create_ts = create_ts;
  return r;
}

inline std::shared_ptr<LocalStore> open_store(const std::string& dir,
                                              LocalStoreOptions options = {}) {
  auto opened = LocalStore::open(dir, std::move(options));
  if (!opened) {
    ADD_FAILURE() << "open failed: " << opened.error().message;
    return nullptr;
  }
  return *opened;
}

inline ActorWrite state_write(std::string state, std::optional<bool> has_initialized = true) {
  ActorWrite w;
  w.state = std::move(state);
  w.has_initialized = has_initialized;
  return w;
}

}  // namespace rivetkit::storage::test
