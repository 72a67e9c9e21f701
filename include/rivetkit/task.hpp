#pragma once
/// Task<T>: the coroutine type of every asynchronous rivetkit API and of user handlers that
/// need to wait (storage, timers, other actors). It is Boost.Asio's awaitable, so it composes
/// with any Asio operation through `boost::asio::use_awaitable`.

#include <boost/asio/awaitable.hpp>

namespace rivetkit {

template <class T = void>
using Task = boost::asio::awaitable<T>;

}  // namespace rivetkit
