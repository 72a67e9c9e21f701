#pragma once
/// Helpers that let user handlers be plain functions or coroutines, and that turn an action's
/// C++ signature into argument conversions. Internal to the typed API in actor.hpp.

#include <rivetkit/convert.hpp>
#include <rivetkit/error.hpp>
#include <rivetkit/task.hpp>
#include <rivetkit/typescript.hpp>
#include <rivetkit/value.hpp>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

namespace rivetkit {

/// An action parameter that takes every argument the client sent, as they are (JS `...args`):
///     .action("echo", [](auto& c, rivetkit::RestArgs args) { return args.values; })
struct RestArgs {
  Array values;
};

}  // namespace rivetkit

namespace rivetkit::detail {

template <class R>
struct Awaited {
  using type = R;
  static constexpr bool kIsTask = false;
};
template <class T, class E>
struct Awaited<boost::asio::awaitable<T, E>> {
  using type = T;
  static constexpr bool kIsTask = true;
};

/// Calls f(args...) and, when it returns a Task, awaits it. Everything is taken by value so the
/// coroutine frame owns what the handler refers to.
template <class F, class... A>
Task<typename Awaited<std::invoke_result_t<F&, A&...>>::type> call_async(F f, A... args) {
  using R = std::invoke_result_t<F&, A&...>;
  using T = typename Awaited<R>::type;
  if constexpr (Awaited<R>::kIsTask) {
    auto awaitable = std::invoke(f, args...);
    if constexpr (std::is_void_v<T>) {
      co_await std::move(awaitable);
    } else {
      T result = co_await std::move(awaitable);
      co_return result;
    }
  } else if constexpr (std::is_void_v<T>) {
    std::invoke(f, args...);
    co_return;
  } else {
    co_return std::invoke(f, args...);
  }
}

// ---- action signatures ----------------------------------------------------------------------

template <class M>
struct MemberFn;
template <class C, class R, class... A>
struct MemberFn<R (C::*)(A...) const> {
  using Args = std::tuple<A...>;
};
template <class C, class R, class... A>
struct MemberFn<R (C::*)(A...)> {
  using Args = std::tuple<A...>;
};
template <class C, class R, class... A>
struct MemberFn<R (C::*)(A...) const noexcept> {
  using Args = std::tuple<A...>;
};
template <class C, class R, class... A>
struct MemberFn<R (C::*)(A...) noexcept> {
  using Args = std::tuple<A...>;
};
template <class R, class... A>
struct MemberFn<R (*)(A...)> {
  using Args = std::tuple<A...>;
};
template <class R, class... A>
struct MemberFn<R (*)(A...) noexcept> {
  using Args = std::tuple<A...>;
};

/// The parameter list of a handler whose first parameter is the context. Works for plain
/// functions, lambdas, and generic lambdas whose only `auto` parameter is the context
/// (`[](auto& c, std::int64_t amount) {...}`).
template <class F, class Ctx>
struct HandlerSignature {
  static auto pick() {
    if constexpr (requires { &F::template operator()<Ctx>; }) {
      return &F::template operator()<Ctx>;
    } else if constexpr (requires { &F::operator(); }) {
      return &F::operator();
    } else {
      return static_cast<std::decay_t<F>>(nullptr);
    }
  }
  using Args = typename MemberFn<decltype(pick())>::Args;
};

template <class Tuple>
struct DropFirst;
template <class First, class... Rest>
struct DropFirst<std::tuple<First, Rest...>> {
  using type = std::tuple<std::decay_t<Rest>...>;
};

template <class T>
struct IsOptional : std::false_type {};
template <class T>
struct IsOptional<std::optional<T>> : std::true_type {};

/// RivetKit's `actor.state_not_enabled`: state used by an actor that declares none.
[[noreturn]] void throw_state_not_enabled();

[[noreturn]] void throw_invalid_argument(const std::string& action,
                                         std::size_t index,
                                         const std::string& reason);

template <class T>
T convert_arg(const Array& args, std::size_t index, const std::string& action) {
  if (index >= args.size()) {
    if constexpr (IsOptional<T>::value || std::is_same_v<T, Value>) {
      return T{};
    } else {
      throw_invalid_argument(action, index, "missing argument");
    }
  } else {
    try {
      return from_value<T>(args[index]);
    } catch (const ConversionError& e) {
      throw_invalid_argument(action, index, e.what());
    }
  }
}

template <class Tuple, std::size_t... I>
Tuple convert_args(const Array& args, const std::string& action, std::index_sequence<I...>) {
  return Tuple{convert_arg<std::tuple_element_t<I, Tuple>>(args, I, action)...};
}

template <class Tuple>
Tuple convert_all_args(Array args, const std::string& action) {
  if constexpr (std::is_same_v<Tuple, std::tuple<RestArgs>>) {
    return Tuple{RestArgs{std::move(args)}};
  } else {
    return convert_args<Tuple>(args, action, std::make_index_sequence<std::tuple_size_v<Tuple>>{});
  }
}

template <class F, class Ctx, class Tuple>
struct HandlerResult;
template <class F, class Ctx, class... A>
struct HandlerResult<F, Ctx, std::tuple<A...>> {
  using type = typename Awaited<std::invoke_result_t<F&, Ctx&, A&...>>::type;
};

template <class T>
TsParameter ts_parameter(TsDeclarations& ts) {
  if constexpr (std::is_same_v<T, RestArgs>) {
    return TsParameter{"unknown[]", false, true};
  } else {
    // convert_arg: a missing optional or Value argument is its default.
    return TsParameter{ts.type_of<T>(), IsOptional<T>::value || std::is_same_v<T, Value>, false};
  }
}

/// The TypeScript signature of handler F (after the context), from its C++ parameter and
/// result types (typescript.hpp). Stored as a function pointer: nothing runs unless the registry
/// is asked for its types.
template <class Ctx, class F>
TsSignature describe_action(TsDeclarations& ts) {
  using Params = typename DropFirst<typename HandlerSignature<F, Ctx>::Args>::type;
  using T = typename HandlerResult<F, Ctx, Params>::type;
  TsSignature sig;
  [&ts, &sig]<class... A>(std::type_identity<std::tuple<A...>>) {
    (sig.params.push_back(ts_parameter<A>(ts)), ...);
  }(std::type_identity<Params>{});
  if constexpr (std::is_void_v<T>) {
    sig.result = "void";
  } else {
    sig.result = ts.type_of<T>();
  }
  return sig;
}

/// The TypeScript type of T, as a function pointer (ActorTypeInfo).
template <class T>
std::string ts_type_of(TsDeclarations& ts) {
  return ts.type_of<T>();
}

/// Converts the arguments, calls the handler with (ctx, args...), awaits it if needed and converts
/// the result. A handler returning void yields `undefined` (what a JS action returning nothing
/// gives the client).
template <class Ctx, class F>
Task<Value> invoke_action(F f, Ctx ctx, std::string action, Array raw_args) {
  using Params = typename DropFirst<typename HandlerSignature<F, Ctx>::Args>::type;
  Params params = convert_all_args<Params>(std::move(raw_args), action);
  auto call = [&f, &ctx](auto&... xs) {
    return std::invoke(f, ctx, xs...);
  };
  using R = decltype(std::apply(call, params));
  using T = typename Awaited<R>::type;
  if constexpr (Awaited<R>::kIsTask) {
    auto awaitable = std::apply(call, params);
    if constexpr (std::is_void_v<T>) {
      co_await std::move(awaitable);
      co_return Value{Undefined{}};
    } else {
      T result = co_await std::move(awaitable);
      co_return to_value(result);
    }
  } else if constexpr (std::is_void_v<T>) {
    std::apply(call, params);
    co_return Value{Undefined{}};
  } else {
    co_return to_value(std::apply(call, params));
  }
}

}  // namespace rivetkit::detail
