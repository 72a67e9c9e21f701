// The one translation unit that compiles Boost.Beast (BOOST_BEAST_SEPARATE_COMPILATION is set
// project-wide), so the other net files only pay for the templates they instantiate.
#include <boost/beast/src.hpp>
