#pragma once
// An in-memory WebSocket pair: what one end sends, the other receives, in order, with no socket
// and no framing. Local mode carries connections one actor opens to another over it (the server
// end runs the actor router's /connect session as for a network client; core/client/), so such a
// connection behaves exactly like a client's, minus the network.
//
// Closing either end (close(), or dropping its last reference: 1006) closes both: each end still
// receives what was sent before, then nullopt, and reports the close's code and reason. Both ends
// share one strand; send() and close() are thread-safe and never block.

#include "net/websocket.hpp"

#include <boost/asio/any_io_executor.hpp>

#include <memory>
#include <utility>

namespace rivetkit::net {

std::pair<std::shared_ptr<WebSocket>, std::shared_ptr<WebSocket>> make_websocket_pipe(
    boost::asio::any_io_executor ex);

}  // namespace rivetkit::net
