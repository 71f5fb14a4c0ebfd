// Schedule scripts, text to ParsedSchedule: a recursive-descent parser over
// the fusion-body lexer with "{}:" added for placeholders and maps.
#include "schedlab/frontend/schedule_ast.h"

#include <algorithm>
#include <utility>

#include "lexer.h"
#include "schedlab/base/error.h"
#include "schedlab/base/nesting.h"

namespace schedlab::frontend {

namespace {

class ScriptParser {
 public:
  ScriptParser(std::vector<Token> toks, const Locator& loc) : toks_(std::move(toks)), loc_(loc) {}

  std::vector<ScheduleStatement> run() {
    std::vector<ScheduleStatement> r;
    while (cur().kind != Token::Kind::End) r.push_back(statement());
    return r;
  }

 private:
  const Token& cur() const { return toks_[pos_]; }
  const Token& peek(size_t k = 1) const { return toks_[std::min(pos_ + k, toks_.size() - 1)]; }
  Token take() { return toks_[pos_ < toks_.size() - 1 ? pos_++ : pos_]; }
  SourceLoc at(const Token& t) const { return loc_(t.line, t.col); }

  ScheduleStatement statement() {
    ScheduleStatement s;
    if (cur().kind == Token::Kind::Ident && peek().is("=")) {
      s.bind_loc = at(cur());
      s.bind = take().text;
      take();
    }
    if (cur().kind != Token::Kind::Ident)
      user_error_at(at(cur())) << "expected "
                               << (s.bind ? "a primitive call after '" + *s.bind + " ='"
                                          : std::string("a statement '[name =] primitive(args)'"))
                               << ", found " << cur().describe();
    s.loc = at(cur());
    s.primitive = take().text;
    if (!cur().is("("))
      user_error_at(at(cur())) << "expected '(' after '" << s.primitive << "', found "
                               << cur().describe();
    take();
    while (!cur().is(")")) {
      if (cur().kind == Token::Kind::Newline)
        user_error_at(at(cur())) << "expected ')' to close the call to '" << s.primitive << "' at "
                                 << s.loc.str() << ", found " << cur().describe();
      ScheduleArg a;
      a.loc = at(cur());
      if (cur().kind == Token::Kind::Ident && peek().is("=")) {
        a.keyword = take().text;
        take();
      }
      a.value = value();
      s.args.push_back(std::move(a));
      if (cur().is(","))
        take();
      else if (!cur().is(")") && cur().kind != Token::Kind::Newline)  // unclosed: see above
        user_error_at(at(cur())) << "expected ',' or ')' in the call to '" << s.primitive
                                 << "', found " << cur().describe();
    }
    take();
    if (cur().kind != Token::Kind::Newline)
      user_error_at(at(cur())) << "expected end of line after the call to '" << s.primitive
                               << "', found " << cur().describe();
    take();
    return s;
  }

  ScheduleValue value() {
    using Kind = ScheduleValue::Kind;
    ScheduleValue v;
    const Token open = cur();
    v.loc = at(open);
    if (cur().is("-")) {
      take();
      if (cur().kind != Token::Kind::Number)
        user_error_at(at(cur())) << "expected a number after '-', found " << cur().describe();
      v.text = "-" + take().text;
      return v;
    }
    if (cur().kind == Token::Kind::Number) {
      v.text = take().text;
      return v;
    }
    if (cur().kind == Token::Kind::Ident) {
      v.kind = Kind::Name;
      v.text = take().text;
      while (cur().is("[")) v = index(std::move(v));
      return v;
    }
    if (cur().is("{") && peek().kind == Token::Kind::Ident && peek(2).is("}")) {
      take();
      v.kind = Kind::Param;
      v.text = take().text;
      take();
      return v;
    }
    if (cur().is("[") || cur().is("{")) {
      NestingGuard nest(depth_, at(cur()), "list or map");
      bool map = cur().is("{");
      const char* close = map ? "}" : "]";
      v.kind = map ? Kind::Map : Kind::List;
      take();
      while (!cur().is(close)) {
        if (cur().kind == Token::Kind::Newline)
          user_error_at(at(cur())) << "expected '" << close << "' to close the '" << open.text
                                   << "' at " << v.loc.str() << ", found " << cur().describe();
        v.items.push_back(value());
        if (map) {
          if (!cur().is(":"))
            user_error_at(at(cur())) << "expected ':' after the key in a map {old: new, ...}, "
                                     << "found " << cur().describe();
          take();
          v.items.push_back(value());
        }
        if (cur().is(","))
          take();
        else if (!cur().is(close) && cur().kind != Token::Kind::Newline)
          user_error_at(at(cur())) << "expected ',' or '" << close << "' in the "
                                   << (map ? "map" : "list") << ", found " << cur().describe();
      }
      take();
      return v;
    }
    user_error_at(at(cur())) << "expected an argument (a name, an integer, {param}, a list "
                             << "[...] or a map {old: new}), found " << cur().describe();
  }

  /// `base[i]`, at the '[': i is an integer literal or a {param}. Only a name
  /// (or an index of one) is indexed: a list literal is never worth indexing.
  ScheduleValue index(ScheduleValue base) {
    using Kind = ScheduleValue::Kind;
    const Token open = take();
    ScheduleValue i;
    i.loc = at(cur());
    if (cur().is("-") && peek().kind == Token::Kind::Number) {
      take();
      i.text = "-" + take().text;
    } else if (cur().kind == Token::Kind::Number) {
      i.text = take().text;
    } else if (cur().is("{") && peek().kind == Token::Kind::Ident && peek(2).is("}")) {
      take();
      i.kind = Kind::Param;
      i.text = take().text;
      take();
    } else {
      user_error_at(at(cur())) << "expected an index (an integer such as 0 or -1, or {param}) "
                               << "after '[', found " << cur().describe();
    }
    if (!cur().is("]"))
      user_error_at(at(cur())) << "expected ']' to close the index '[' at " << at(open).str()
                               << ", found " << cur().describe();
    take();
    ScheduleValue r;
    r.kind = Kind::Index;
    r.loc = base.loc;
    r.items.push_back(std::move(base));
    r.items.push_back(std::move(i));
    return r;
  }

  std::vector<Token> toks_;
  size_t pos_ = 0;
  int depth_ = 0;  ///< nesting (NestingGuard)
  const Locator& loc_;
};

}  // namespace

ParsedSchedule parse_schedule(const std::string& text, const std::string& path) {
  Locator loc = [path](int line, int col) { return SourceLoc{path, line, col}; };
  ParsedSchedule r;
  r.path = path;
  r.statements = ScriptParser(tokenize(text, loc, "{}:"), loc).run();
  return r;
}

}  // namespace schedlab::frontend
