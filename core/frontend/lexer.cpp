#include "lexer.h"

#include <cctype>

namespace schedlab::frontend {

std::string Token::describe() const {
  switch (kind) {
    case Kind::Newline: return "end of line";
    case Kind::End: return "end of body";
    default: return "'" + text + "'";
  }
}

namespace {
bool ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }
bool digit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

// Longest match first.
constexpr const char* kPuncts[] = {"**", "==", "!=", "<=", ">=", "+", "-", "*", "/", "(",
                                   ")",  ",",  "=",  "<",  ">",  "[", "]"};
}  // namespace

std::vector<Token> tokenize(const std::string& body, const Locator& loc,
                            std::string_view extra_puncts) {
  std::vector<Token> toks;
  int line = 1;
  size_t line_start = 0;
  size_t i = 0;
  auto col_of = [&](size_t pos) { return static_cast<int>(pos - line_start) + 1; };
  auto push_newline = [&](int l, int c) {
    if (!toks.empty() && toks.back().kind != Token::Kind::Newline)
      toks.push_back({Token::Kind::Newline, "", l, c});
  };
  while (i < body.size()) {
    char c = body[i];
    if (c == '\n') {
      push_newline(line, col_of(i));
      ++line;
      line_start = ++i;
      continue;
    }
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
      continue;
    }
    if (c == '#') {
      while (i < body.size() && body[i] != '\n') ++i;
      continue;
    }
    size_t start = i;
    if (ident_start(c)) {
      while (i < body.size() && ident_char(body[i])) ++i;
      toks.push_back({Token::Kind::Ident, body.substr(start, i - start), line, col_of(start)});
      continue;
    }
    if (digit(c) || (c == '.' && i + 1 < body.size() && digit(body[i + 1]))) {
      while (i < body.size() && (digit(body[i]) || body[i] == '.')) ++i;
      if (i < body.size() && (body[i] == 'e' || body[i] == 'E')) {
        size_t j = i + 1;
        if (j < body.size() && (body[j] == '+' || body[j] == '-')) ++j;
        if (j < body.size() && digit(body[j])) {
          i = j;
          while (i < body.size() && digit(body[i])) ++i;
        }
      }
      // A number glued to letters ("2x", "1.5f") is a typo, not two tokens.
      if (i < body.size() && ident_char(body[i])) {
        size_t end = i;
        while (end < body.size() && ident_char(body[end])) ++end;
        user_error_at(loc(line, col_of(start)))
            << "malformed number '" << body.substr(start, end - start)
            << "'; expected digits with an optional fraction and exponent, e.g. 2, 0.5, 1e-5";
      }
      toks.push_back({Token::Kind::Number, body.substr(start, i - start), line, col_of(start)});
      continue;
    }
    bool matched = false;
    for (const char* p : kPuncts) {
      std::string_view pv(p);
      if (body.compare(i, pv.size(), pv) == 0) {
        toks.push_back({Token::Kind::Punct, std::string(pv), line, col_of(i)});
        i += pv.size();
        matched = true;
        break;
      }
    }
    if (!matched && extra_puncts.find(c) != std::string_view::npos) {
      toks.push_back({Token::Kind::Punct, std::string(1, c), line, col_of(i)});
      ++i;
      matched = true;
    }
    if (!matched) {
      std::string extra;
      for (char e : extra_puncts) extra += std::string(" ") + e;
      user_error_at(loc(line, col_of(i)))
          << "unexpected character '" << c << "'; expected a name, a number, an operator "
          << "(+ - * / ** == != < <= > >=) or one of ( ) [ ] , =" << extra;
    }
  }
  push_newline(line, col_of(i));
  toks.push_back({Token::Kind::End, "", line, col_of(i)});
  return toks;
}

}  // namespace schedlab::frontend
