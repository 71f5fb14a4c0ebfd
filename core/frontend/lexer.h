// Tokenizer for fusion-body text (docs/fusion-text.md). Private to frontend.
//
// Needs: the body text. Guarantees: every token carries the 1-based line and
// column of its first character within the body; a character that can start
// no token is a UserError at its position (through the caller's locator).
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "schedlab/base/error.h"

namespace schedlab::frontend {

/// Maps a body position (1-based line, column) to the file position.
using Locator = std::function<SourceLoc(int line, int col)>;

struct Token {
  enum class Kind { Ident, Number, Punct, Newline, End };
  Kind kind;         ///< token class
  std::string text;  ///< spelling; "" for Newline/End
  int line;          ///< 1-based body line
  int col;           ///< 1-based body column

  /// For messages: "'exp'", "'('", "end of line", "end of body".
  std::string describe() const;
  bool is(const char* punct) const { return kind == Kind::Punct && text == punct; }
};

/// Splits `body` into tokens; comments are dropped, blank lines yield no
/// Newline. The sequence always ends with Newline (if non-empty) then End.
/// `extra_puncts` adds single-character punctuation for another dialect
/// (schedule scripts use "{}:"); the fusion body takes none.
std::vector<Token> tokenize(const std::string& body, const Locator& loc,
                            std::string_view extra_puncts = "");

}  // namespace schedlab::frontend
