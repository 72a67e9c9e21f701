// type_declarations.hpp. The client types an actor through `config.actions` (each action a
// function whose first parameter, the context, it drops; dotted names are nested objects),
// `config.events` (event tokens: `{_eventType?: T}`) and `config.queues` (queue tokens:
// `{_queueMessage?: M, _queueComplete?: C}`), so each actor is written as an interface with that
// shape; nothing of the client's runtime classes is needed.
#include "registry/type_declarations.hpp"

#include <rivetkit/typescript.hpp>

#include <map>
#include <memory>
#include <sstream>

namespace rivetkit::registry {

namespace {

bool is_identifier(std::string_view name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name.front())) != 0) {
    return false;
  }
  for (char ch : name) {
    if (std::isalnum(static_cast<unsigned char>(ch)) == 0 && ch != '_' && ch != '$') {
      return false;
    }
  }
  return true;
}

/// A property name: as is when it is an identifier, else a JSON string literal.
std::string property(std::string_view name) {
  if (is_identifier(name)) {
    return std::string(name);
  }
  std::string out = "\"";
  for (char ch : name) {
    auto u = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (u < 0x20) {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\u00";
      out += kHex[u >> 4];
      out += kHex[u & 0xF];
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

/// `counter` -> `CounterActor`, `chat-room` -> `ChatRoomActor`.
std::string actor_interface_name(std::string_view actor) {
  std::string out;
  bool upper = true;
  for (char ch : actor) {
    auto u = static_cast<unsigned char>(ch);
    if (std::isalnum(u) == 0) {
      upper = true;
      continue;
    }
    out += upper ? static_cast<char>(std::toupper(u)) : ch;
    upper = false;
  }
  return out + "Actor";
}

std::string signature_text(const TsSignature& sig) {
  // Only a trailing run of optional parameters may be marked optional in TypeScript.
  std::size_t first_optional = sig.params.size();
  while (first_optional > 0 && sig.params[first_optional - 1].optional) {
    --first_optional;
  }
  std::string out = "(c: unknown";
  for (std::size_t i = 0; i < sig.params.size(); ++i) {
    const auto& p = sig.params[i];
    out += ", ";
    if (p.rest) {
      out += "...args: " + p.type;
    } else {
      out += "arg" + std::to_string(i) + (i >= first_optional ? "?: " : ": ") + p.type;
    }
  }
  return out + "): " + sig.result;
}

/// Dotted action names (`calculator.add`) are nested objects, as RivetKit's nested actions.
struct ActionNode {
  std::optional<TsSignature> signature;
  std::map<std::string, std::unique_ptr<ActionNode>> children;
};

void write_actions(std::ostringstream& out, const ActionNode& node, int indent) {
  std::string pad(static_cast<std::size_t>(indent), ' ');
  for (const auto& [name, child] : node.children) {
    if (child->signature) {
      out << pad << property(name) << signature_text(*child->signature) << ";\n";
    } else {
      out << pad << property(name) << ": {\n";
      write_actions(out, *child, indent + 2);
      out << pad << "};\n";
    }
  }
}

}  // namespace

std::string type_declarations(const std::vector<ActorDefinition>& definitions) {
  TsDeclarations ts;
  ts.unique_name("Registry");
  ts.unique_name("RivetkitRegistry");
  std::vector<std::string> actor_names;
  for (const auto& def : definitions) {
    actor_names.push_back(ts.unique_name(actor_interface_name(def.name())));
  }

  // Actor bodies first: describing them declares the struct interfaces, written above them.
  std::ostringstream actors;
  for (std::size_t i = 0; i < definitions.size(); ++i) {
    const auto& data = *detail::Access::data(definitions[i]);
    const auto& types = data.types;
    ActionNode root;
    for (const auto& [name, describe] : types.actions) {
      ActionNode* node = &root;
      std::string_view rest = name;
      while (true) {
        auto dot = rest.find('.');
        auto& slot = node->children[std::string(rest.substr(0, dot))];
        if (!slot) {
          slot = std::make_unique<ActionNode>();
        }
        node = slot.get();
        if (dot == std::string_view::npos) {
          break;
        }
        rest.remove_prefix(dot + 1);
      }
      node->signature = describe(ts);
    }
    actors << "/** Actor \"" << data.name << "\". */\n";
    actors << "export interface " << actor_names[i] << " {\n  readonly config: {\n";
    actors << "    readonly actions: {\n";
    write_actions(actors, root, 6);
    actors << "    };\n    readonly events: {\n";
    for (const auto& [name, event] : data.events) {
      (void)event;
      auto typed = types.events.find(name);
      std::string type =
          typed != types.events.end() && typed->second ? typed->second(ts) : "unknown";
      actors << "      " << property(name) << ": { readonly _eventType?: " << type << " };\n";
    }
    actors << "    };\n    readonly queues: {\n";
    for (const auto& [name, queue] : data.queues) {
      (void)queue;
      std::string message = "unknown";
      std::string complete = "unknown";
      if (auto typed = types.queues.find(name); typed != types.queues.end()) {
        if (typed->second.message) {
          message = typed->second.message(ts);
        }
        if (typed->second.complete) {
          complete = typed->second.complete(ts);
        }
      }
      actors << "      " << property(name) << ": { readonly _queueMessage?: " << message
             << "; readonly _queueComplete?: " << complete << " };\n";
    }
    actors << "    };\n  };\n}\n";
    // The state, connection parameters and input, for the application's own code.
    for (auto [suffix, describe] :
         {std::pair{"State", types.state}, std::pair{"ConnParams", types.conn_params},
          std::pair{"Input", types.input}}) {
      if (describe) {
        std::string alias = ts.unique_name(actor_names[i] + suffix);
        actors << "export type " << alias << " = " << describe(ts) << ";\n";
      }
    }
    actors << "\n";
  }

  std::ostringstream out;
  out << "// TypeScript types of a rivetkit-cpp registry's actors, for the official RivetKit\n"
         "// client. Generated by the server (`--emit-types <file>`): do not edit.\n"
         "//\n"
         "//   import { createClient } from \"rivetkit/client\";\n"
         "//   import type { Registry } from \"./<this file without .d.ts>\";\n"
         "//   const client = createClient<Registry>(\"http://localhost:6420\");\n"
         "import type { Registry as RivetkitRegistry } from \"rivetkit\";\n\n";
  for (const auto& iface : ts.interfaces()) {
    out << "export interface " << iface.name << " {\n";
    for (const auto& field : iface.fields) {
      out << "  " << property(field.name) << ": " << field.type << ";\n";
    }
    out << "}\n\n";
  }
  out << actors.str();
  out << "export type Registry = RivetkitRegistry<{\n";
  for (std::size_t i = 0; i < definitions.size(); ++i) {
    out << "  " << property(definitions[i].name()) << ": " << actor_names[i] << ";\n";
  }
  out << "}>;\n";
  return out.str();
}

}  // namespace rivetkit::registry
