// schedlab/frontend: the parsed form of a schedule script (syntax in
// schedule_script.h and docs/schedule-scripts.md), kept apart from the code
// that applies it so that other appliers (the `script` plugin, through the
// plugin ABI) can run the same statements.
//
// Owns: the script's grammar and its syntax diagnostics. May depend on:
// schedlab/base and the fusion-body lexer (core/frontend/lexer.h) only; it
// knows no fusion and no primitive.
// Invariants: every node carries the file:line:col of its first token, so an
// applier can place any later error exactly. Parsing resolves nothing: an
// identifier argument is a Name whether it will mean a tensor, a list a query
// returned, an enum or a bool, because only the parameter it fills (and the
// script's bindings, when applied) decides that.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "schedlab/base/error.h"

namespace schedlab::frontend {

/// One argument value as written; the applier converts it to a parameter's type.
struct ScheduleValue {
  enum class Kind {
    Int,    ///< an integer literal, possibly negative ("2", "-1")
    Param,  ///< a placeholder "{name}", replaced by a parameter's value
    Name,   ///< an identifier: a tensor, an enum name or true/false
    List,   ///< "[a, b, ...]"
    Map,    ///< "{old: new, ...}"
    Index,  ///< "name[i]": items[0] is the indexed Name or Index, items[1] the Int or Param index
  };
  Kind kind = Kind::Int;  ///< what was written
  SourceLoc loc;          ///< the first token: the number ('-' if negative), '{', '[' or the name
  std::string text;       ///< Int: the spelling with its sign; Param, Name: the name; else ""
  std::vector<ScheduleValue> items;  ///< List: the items; Map: key, value, ...; Index: see above
};

/// One argument of a call, positional or `keyword=value`.
struct ScheduleArg {
  std::string keyword;  ///< "" when positional
  SourceLoc loc;        ///< the keyword; equals value.loc when positional
  ScheduleValue value;  ///< the value passed
};

/// `[bind =] primitive(args)`: one line of a script.
struct ScheduleStatement {
  std::string primitive;            ///< the called name as written, "params" included
  SourceLoc loc;                    ///< the primitive's name
  std::optional<std::string> bind;  ///< the name the result is bound to, if any
  SourceLoc bind_loc;               ///< the bound name; invalid when there is none
  std::vector<ScheduleArg> args;    ///< in source order
};

/// A whole script, statements in source order.
struct ParsedSchedule {
  std::string path;                           ///< as given to parse_schedule, for messages
  std::vector<ScheduleStatement> statements;  ///< one per non-blank line
};

/// Parses `text` (pure syntax: no fusion, no primitive table); `path` is used
/// in locations only. A syntax error is a UserError at the offending token,
/// so a script with one applies nothing.
ParsedSchedule parse_schedule(const std::string& text, const std::string& path);

}  // namespace schedlab::frontend
