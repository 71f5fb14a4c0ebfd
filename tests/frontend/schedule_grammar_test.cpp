// The schedule-script grammar in docs/schedule-scripts.md is executable: this
// test reads its EBNF block, recognizes text with it (a small backtracking
// matcher over tokens), and checks that it agrees with the parser
// (core/frontend/schedule_ast.cpp) on the doc's accepted and refused
// examples and on every script in configs/schedules/.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/frontend/schedule_ast.h"

namespace schedlab::frontend {
namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The lines of the doc's fenced block tagged `tag` (```tag ... ```).
std::vector<std::string> fenced(const std::string& doc, const std::string& tag) {
  const std::string open = "```" + tag + "\n";
  const size_t at = doc.find(open);
  if (at == std::string::npos) return {};
  const size_t end = doc.find("```", at + open.size());
  std::vector<std::string> lines;
  std::stringstream ss(doc.substr(at + open.size(), end - at - open.size()));
  for (std::string l; std::getline(ss, l);) lines.push_back(l);
  return lines;
}

// ---- script tokens, as the doc's "Tokens" paragraph describes them --------------

struct Tok {
  std::string kind;  ///< NAME, NUMBER, NEWLINE, or the punctuation character itself
  std::string text;
};

std::vector<Tok> tokens(const std::string& text) {
  std::vector<Tok> out;
  for (size_t i = 0; i < text.size();) {
    const char c = text[i];
    auto is = [&](auto pred) { return i < text.size() && pred(static_cast<unsigned char>(text[i])); };
    if (c == ' ' || c == '\t' || c == '\r') {
      ++i;
    } else if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '\n') {
      out.push_back({"NEWLINE", "\n"});
      ++i;
    } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const size_t s = i;
      while (is([](unsigned char x) { return std::isalnum(x) || x == '_'; })) ++i;
      out.push_back({"NAME", text.substr(s, i - s)});
    } else if (std::isdigit(static_cast<unsigned char>(c))) {
      const size_t s = i;
      while (is([](unsigned char x) { return std::isdigit(x) || x == '.'; })) ++i;
      out.push_back({"NUMBER", text.substr(s, i - s)});
    } else {
      out.push_back({std::string(1, c), std::string(1, c)});
      ++i;
    }
  }
  return out;
}

// ---- the EBNF: rules of alternatives, sequences, [ ], { }, ( ) ------------------

struct Node {
  enum class Kind { Alt, Seq, Optional, Repeat, Rule, Token, Literal } kind;
  std::string name;  ///< Rule, Token (NAME/NUMBER/NEWLINE), Literal
  std::vector<std::unique_ptr<Node>> kids;
};

class Ebnf {
 public:
  explicit Ebnf(const std::string& text) {
    // Words: identifiers, "literals" and the symbols = | ; [ ] { } ( ).
    for (size_t i = 0; i < text.size();) {
      const char c = text[i];
      if (std::isspace(static_cast<unsigned char>(c))) {
        ++i;
      } else if (c == '"') {
        const size_t e = text.find('"', i + 1);
        words_.push_back(text.substr(i, e - i + 1));
        i = e + 1;
      } else if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
        const size_t s = i;
        while (i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_')) ++i;
        words_.push_back(text.substr(s, i - s));
      } else {
        words_.push_back(std::string(1, c));
        ++i;
      }
    }
    while (pos_ < words_.size()) {
      const std::string name = words_[pos_++];
      EXPECT_EQ(next(), "=") << "rule " << name;
      rules_[name] = alternatives();
      EXPECT_EQ(next(), ";") << "rule " << name;
      if (first_.empty()) first_ = name;
    }
  }

  size_t rules() const { return rules_.size(); }

  /// Whether the start rule matches all of `toks`.
  bool accepts(const std::vector<Tok>& toks) const {
    for (size_t end : match(*rules_.at(first_), toks, 0))
      if (end == toks.size()) return true;
    return false;
  }

  /// Every rule the grammar names is defined, and every token class is known.
  void check_closed() const { check_closed(*rules_.at(first_), {}); }

 private:
  std::string next() { return pos_ < words_.size() ? words_[pos_++] : ""; }
  const std::string& peek() const {
    static const std::string end;
    return pos_ < words_.size() ? words_[pos_] : end;
  }

  std::unique_ptr<Node> alternatives() {
    auto alt = std::make_unique<Node>(Node{Node::Kind::Alt, "", {}});
    alt->kids.push_back(sequence());
    while (peek() == "|") {
      ++pos_;
      alt->kids.push_back(sequence());
    }
    return alt;
  }
  std::unique_ptr<Node> sequence() {
    auto seq = std::make_unique<Node>(Node{Node::Kind::Seq, "", {}});
    while (!peek().empty() && peek() != "|" && peek() != ";" && peek() != "]" && peek() != "}" &&
           peek() != ")")
      seq->kids.push_back(term());
    return seq;
  }
  std::unique_ptr<Node> term() {
    const std::string w = next();
    auto group = [&](Node::Kind k, const char* close) {
      auto n = std::make_unique<Node>(Node{k, "", {}});
      n->kids.push_back(alternatives());
      EXPECT_EQ(next(), close);
      return n;
    };
    if (w == "[") return group(Node::Kind::Optional, "]");
    if (w == "{") return group(Node::Kind::Repeat, "}");
    if (w == "(") return group(Node::Kind::Seq, ")");
    if (w.front() == '"')
      return std::make_unique<Node>(Node{Node::Kind::Literal, w.substr(1, w.size() - 2), {}});
    const bool token = std::all_of(w.begin(), w.end(), [](char c) { return std::isupper(c) != 0; });
    return std::make_unique<Node>(Node{token ? Node::Kind::Token : Node::Kind::Rule, w, {}});
  }

  /// Every position where `n` can end when it starts at `at`.
  std::set<size_t> match(const Node& n, const std::vector<Tok>& t, size_t at) const {
    switch (n.kind) {
      case Node::Kind::Token:
        return at < t.size() && t[at].kind == n.name ? std::set<size_t>{at + 1} : std::set<size_t>{};
      case Node::Kind::Literal:
        return at < t.size() && t[at].kind == n.name && t[at].text == n.name ? std::set<size_t>{at + 1}
                                                                             : std::set<size_t>{};
      case Node::Kind::Rule: return match(*rules_.at(n.name), t, at);
      case Node::Kind::Alt: {
        std::set<size_t> r;
        for (const auto& k : n.kids) r.merge(match(*k, t, at));
        return r;
      }
      case Node::Kind::Seq: {
        std::set<size_t> r{at};
        for (const auto& k : n.kids) {
          std::set<size_t> next;
          for (size_t p : r) next.merge(match(*k, t, p));
          r = std::move(next);
        }
        return r;
      }
      case Node::Kind::Optional: {
        std::set<size_t> r = match(*n.kids[0], t, at);
        r.insert(at);
        return r;
      }
      case Node::Kind::Repeat: {
        std::set<size_t> r{at}, frontier{at};
        while (!frontier.empty()) {
          std::set<size_t> next;
          for (size_t p : frontier)
            for (size_t e : match(*n.kids[0], t, p))
              if (e > p && r.insert(e).second) next.insert(e);
          frontier = std::move(next);
        }
        return r;
      }
    }
    return {};
  }

  void check_closed(const Node& n, std::set<std::string> seen) const {
    if (n.kind == Node::Kind::Rule) {
      ASSERT_TRUE(rules_.count(n.name)) << "the grammar uses an undefined rule " << n.name;
      if (!seen.insert(n.name).second) return;
      check_closed(*rules_.at(n.name), seen);
      return;
    }
    if (n.kind == Node::Kind::Token) {
      EXPECT_TRUE(n.name == "NAME" || n.name == "NUMBER" || n.name == "NEWLINE")
          << "unknown token class " << n.name;
    }
    for (const auto& k : n.kids) check_closed(*k, seen);
  }

  std::vector<std::string> words_;
  size_t pos_ = 0;
  std::map<std::string, std::unique_ptr<Node>> rules_;
  std::string first_;
};

bool parser_accepts(const std::string& text) {
  try {
    parse_schedule(text, "grammar.sched");
    return true;
  } catch (const UserError&) {
    return false;
  }
}

const std::string kDoc = std::string(SCHEDLAB_SOURCE_DIR) + "/docs/schedule-scripts.md";

TEST(ScheduleGrammar, DocumentedGrammarIsWellFormed) {
  const std::string doc = read(kDoc);
  std::string ebnf;
  for (const std::string& l : fenced(doc, "ebnf")) ebnf += l + "\n";
  ASSERT_FALSE(ebnf.empty()) << "no ```ebnf block in " << kDoc;
  Ebnf g(ebnf);
  EXPECT_GE(g.rules(), 8u);
  g.check_closed();
}

TEST(ScheduleGrammar, GrammarAndParserAgreeOnTheDocumentedExamples) {
  const std::string doc = read(kDoc);
  std::string ebnf;
  for (const std::string& l : fenced(doc, "ebnf")) ebnf += l + "\n";
  Ebnf g(ebnf);
  const auto accepted = fenced(doc, "sched-accepted"), refused = fenced(doc, "sched-refused");
  ASSERT_GE(accepted.size(), 5u);
  ASSERT_GE(refused.size(), 5u);
  for (const std::string& line : accepted) {
    SCOPED_TRACE(line);
    EXPECT_TRUE(g.accepts(tokens(line + "\n"))) << "the grammar refuses it";
    EXPECT_TRUE(parser_accepts(line + "\n")) << "the parser refuses it";
  }
  for (const std::string& line : refused) {
    SCOPED_TRACE(line);
    EXPECT_FALSE(g.accepts(tokens(line + "\n"))) << "the grammar accepts it";
    EXPECT_FALSE(parser_accepts(line + "\n")) << "the parser accepts it";
  }
}

TEST(ScheduleGrammar, GrammarAcceptsEveryConfigSchedule) {
  const std::string doc = read(kDoc);
  std::string ebnf;
  for (const std::string& l : fenced(doc, "ebnf")) ebnf += l + "\n";
  Ebnf g(ebnf);
  int n = 0;
  for (const auto& e :
       std::filesystem::directory_iterator(std::string(SCHEDLAB_SOURCE_DIR) + "/configs/schedules")) {
    if (e.path().extension() != ".sched") continue;
    SCOPED_TRACE(e.path().string());
    std::string text = read(e.path().string());
    if (!text.empty() && text.back() != '\n') text += "\n";
    EXPECT_TRUE(parser_accepts(text));
    EXPECT_TRUE(g.accepts(tokens(text)));
    ++n;
  }
  EXPECT_GE(n, 5);
}

}  // namespace
}  // namespace schedlab::frontend
