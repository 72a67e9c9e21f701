#pragma once
// Builds an Object while decoding, with JavaScript's rule for repeated keys: the last value wins
// and the key keeps the position of its first occurrence. Small objects use a linear scan; large
// ones switch to a hash index so a hostile body with many keys stays linear.

#include <rivetkit/value.hpp>

#include <cstddef>
#include <string>
#include <unordered_map>

namespace rivetkit::protocol {

class ObjectBuilder {
 public:
  void reserve(std::size_t n) { members_.reserve(n); }
  std::size_t size() const { return members_.size(); }

  void set(std::string key, Value value) {
    if (index_.empty() && members_.size() < kLinearLimit) {
      for (auto& m : members_) {
        if (m.key == key) {
          m.value = std::move(value);
          return;
        }
      }
      members_.push_back(Member{std::move(key), std::move(value)});
      return;
    }
    if (index_.empty()) {
      for (std::size_t i = 0; i < members_.size(); ++i) {
        index_.emplace(members_[i].key, i);
      }
    }
    auto [it, inserted] = index_.emplace(key, members_.size());
    if (!inserted) {
      members_[it->second].value = std::move(value);
      return;
    }
    members_.push_back(Member{std::move(key), std::move(value)});
  }

  Object take() { return std::move(members_); }

 private:
  static constexpr std::size_t kLinearLimit = 16;
  Object members_;
  std::unordered_map<std::string, std::size_t> index_;
};

}  // namespace rivetkit::protocol
