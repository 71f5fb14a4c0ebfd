// schedlab/frontend: schedule scripts, a hand schedule written as text and
// applied to a parsed fusion, so that trying a schedule needs no compile
// (full reference in docs/schedule-scripts.md).
//
// Owns: the meaning of the script language below (its syntax is parsed by
// schedule_ast.h) and the mapping of every diagnostic to file:line:col.
// May depend on: schedlab/base, schedlab/ir, schedlab/sched.
// Invariants: every error is a UserError at the offending token; an error
// raised by a primitive keeps its message and is placed at the call. Lines
// are applied in order and ir::verify holds after each, so on an error the
// fusion keeps the lines before the failing one (it is not rolled back).
//
// Syntax: one statement per line, '#' starts a comment.
//   [name =] primitive(arg, ..., keyword=arg, ...)
//   params(block=128, ...)        # defaults for {placeholders}; callers override
// Arguments:
//   tensor    a name from the fusion body (TensorView::user_name(), including
//             the names caches and rfactor give: x_cache, y_rf), T<n> for any
//             tensor by number, a name bound earlier in the script, or an
//             item of a query's list: r[0], r[-1] (from the end), g[0][1], r[{i}]
//   integer   2, -1, or {param}, replaced by the parameter's value
//   enum      case-insensitive: BIDx BIDy BIDz TIDx TIDy TIDz DIDx Serial;
//             Vectorize Unroll Unswitch Bulk; local shared global;
//             Set CpAsync LdMatrix Tma; Unspecified AllLevels Streaming Global
//   bool      true, false
//   list      [a, b, ...] of integers, tensors or enums; for tensors, also a
//             name bound to a query's list of tensors
//   map       {old: new, ...} of integers (reorder only, as nvFuser's Python)
// Primitives (keyword names in parentheses are the parameter names):
//   split(tv, axis, factor, inner_split=true)
//   merge(tv, axis_o, axis_i=axis_o+1)
//   reorder(tv, {old: new, ...})
//   parallelize(tv, axis, type)                 ParallelType or LoopTransform
//   set_memory_type(tv, memory)
//   c = cache_after(tv, op=Set, cache_op=Unspecified)
//   c = cache_before(tv)
//   c = cache_fork(tv)
//   p = rfactor(tv, [axes])
//   propagate_transformation(reference, selected=[])
//   parallelize_all_like(reference, pos=-1, selected=[], types=[], transforms=[Unroll, Unswitch])
//   inline_at(tv, pos, best_effort=false)
//   inline_selected_at([selected], reference, pos)
//   inline_most(selected=[])                    no selection: every tensor
// Queries (sched/queries.h), which change nothing and return a value:
//   r = get_reduction_tvs()                     list of tensors
//   r = all_tvs_except([tensors])               list of tensors
//   t = find_reference_for()                    tensor
//   g = group_inputs_outputs_by_inner_dim()     list of lists of tensors
// Only calls that return something (the four that create a tensor, and the
// queries) can be bound to a name; a name is bound once and may not shadow a
// fusion name. A query's list is a snapshot taken at its line.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "schedlab/frontend/fusion_file.h"
#include "schedlab/frontend/schedule_ast.h"

namespace schedlab::frontend {

/// Values for {name} placeholders; they override the script's params(...).
using ScheduleParams = std::map<std::string, int64_t>;

/// Applies a parsed script to def.fusion, one statement at a time, resolving
/// names against the fusion as it is at that statement. A placeholder with
/// no value is an error naming it and listing the known params. Returns the
/// log of applied calls, one string per statement ("3: split(y, 0, 128)"),
/// for `schedlab show`.
std::vector<std::string> apply_parsed_schedule(const ParsedSchedule& schedule,
                                               FusionDefinition& def, const ScheduleParams& params);
/// The same on a bare fusion (the plugin host's segments have no definition).
std::vector<std::string> apply_parsed_schedule(const ParsedSchedule& schedule, ir::Fusion& fusion,
                                               const ScheduleParams& params);
/// parse_schedule(text, path), then apply_parsed_schedule; `path` is used in
/// diagnostics only.
std::vector<std::string> apply_schedule_text(const std::string& text, const std::string& path,
                                             FusionDefinition& def, const ScheduleParams& params);
/// Reads the file at `path` and applies it. user_error if it cannot be read.
std::vector<std::string> apply_schedule_file(const std::string& path, FusionDefinition& def,
                                             const ScheduleParams& params);
/// Reads and parses the file at `path`. user_error if it cannot be read.
ParsedSchedule parse_schedule_file(const std::string& path);
/// The text of schedule file `path`; user error if it cannot be read.
std::string read_schedule_file(const std::string& path);

/// A name a script's caller may give a value: one the script uses as
/// {name}, or declares in params(...), or both.
struct SchedulePlaceholder {
  std::string name;                      ///< as written, without braces
  std::optional<int64_t> default_value;  ///< from params(...), if declared there
  SourceLoc loc;                         ///< where it first appears
  bool used = false;                     ///< the script uses it as {name}
};
/// Every placeholder of a parsed script, in order of first appearance (for
/// a sweep or a plugin to check the names it will set). Applies nothing;
/// params(...) statements are checked as applying them would check them.
std::vector<SchedulePlaceholder> schedule_placeholders(const ParsedSchedule& schedule);
/// parse_schedule_file(path), then the above.
std::vector<SchedulePlaceholder> schedule_placeholders(const std::string& path);

/// Parses placeholder values "block=128,persist=-1" (spaces around items
/// allowed; "" for none). `what` names the source in diagnostics ("args").
ScheduleParams parse_schedule_args(const std::string& text, const std::string& what);

}  // namespace schedlab::frontend
