// The one translation unit that compiles Boost.Asio (BOOST_ASIO_SEPARATE_COMPILATION is set
// project-wide), so other files only pay for declarations.
#include <boost/asio/impl/src.hpp>
