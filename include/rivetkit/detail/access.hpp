#pragma once
/// detail::Access: the runtime's one door into the API types. What binds a Context, Conn, Kv,
/// Database, Queue, Client, ... to the runtime (its constructor from a runtime interface, its
/// interface pointer, a definition's data) is private to each type: an application never needs
/// it, and code that used it would break with every change of the runtime. The runtime and the
/// header templates reach it through Access, which each of those types befriends.

#include <utility>

namespace rivetkit::detail {

struct Access {
  /// T(args...) through T's private constructor.
  template <class T, class... A>
  static T make(A&&... args) {
    return T(std::forward<A>(args)...);
  }
  /// The runtime interface behind a Context, Conn or Client.
  template <class T>
  static auto api(const T& object) {
    return object.api();
  }
  /// An ActorDefinition's data.
  template <class T>
  static const auto& data(const T& definition) {
    return definition.data();
  }
};

}  // namespace rivetkit::detail
