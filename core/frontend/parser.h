// Fusion-body parser: `name = expression` lines to IR. Private to frontend.
//
// Needs: a Fusion whose inputs are already created and bound in the Scope.
// Guarantees: on success every statement is built through the builder API
// (ir/arith.h) and bound in the Scope; on failure a UserError at the token
// that caused it (builder errors are re-raised at the operator or call).
#pragma once

#include <map>
#include <string>

#include "lexer.h"
#include "schedlab/base/suggest.h"
#include "schedlab/ir/fusion.h"

namespace schedlab::frontend {

/// A name visible in the body, and where it was bound.
struct Binding {
  ir::Val* val;    ///< a tensor or a constant
  SourceLoc where;  ///< the defining token
};
using Scope = std::map<std::string, Binding>;

/// Parses and builds `body` into `f`, adding one Binding per statement.
void parse_body(const std::string& body, const Locator& loc, ir::Fusion& f, Scope& scope);

}  // namespace schedlab::frontend
