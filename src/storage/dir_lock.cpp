// DirLock: flock on <dir>/rivetkit.lock, with the holder's pid in the file for the error message.

#include "storage/dir_lock.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <string>
#include <utility>

namespace rivetkit::storage {

namespace {

Error lock_error(std::string code, std::string message) {
  return Error{"storage", std::move(code), std::move(message), std::nullopt, false};
}

/// The pid the holder wrote (best effort: the holder may be between open and write).
std::string read_holder(int fd) {
  char buf[64] = {};
  const ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
  std::string s = n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) {
    s.pop_back();
  }
  return s.empty() ? std::string("unknown") : s;
}

}  // namespace

Result<DirLock> DirLock::acquire(const std::string& dir) {
  const std::string path = (std::filesystem::path(dir) / "rivetkit.lock").string();
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return fail(lock_error("io_error", fmt::format("cannot open the data directory lock {}: {}",
                                                   path, std::strerror(errno))));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    std::string holder = read_holder(fd);
    ::close(fd);
    if (err == EWOULDBLOCK) {
      return fail(lock_error(
          "data_dir_locked",
          fmt::format("data directory {} is in use by another rivetkit process (pid {}); one "
                      "process per data directory",
                      dir, holder)));
    }
    return fail(
        lock_error("io_error", fmt::format("cannot lock {}: {}", path, std::strerror(err))));
  }
  // Ours now: record who holds it. A failure here only makes a later message less precise.
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd, 0) == 0) {
    [[maybe_unused]] const ssize_t w = ::pwrite(fd, pid.data(), pid.size(), 0);
  }
  return DirLock(fd);
}

DirLock::DirLock(DirLock&& other) noexcept : fd_(std::exchange(other.fd_, -1)) {}

DirLock& DirLock::operator=(DirLock&& other) noexcept {
  if (this != &other) {
    release();
    fd_ = std::exchange(other.fd_, -1);
  }
  return *this;
}

DirLock::~DirLock() {
  release();
}

void DirLock::release() {
  if (fd_ >= 0) {
    ::close(fd_);  // drops the flock; the file stays (removing it would race a new holder)
    fd_ = -1;
  }
}

}  // namespace rivetkit::storage
