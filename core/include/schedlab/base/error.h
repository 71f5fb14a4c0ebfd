// schedlab/base: error channels shared by every module.
//
// Two channels, as in Halide's Error.h:
//   * user_error / user_assert: the user's mistake (fusion text, schedule,
//     config, plugin misuse). The message names the object, what was expected
//     and what was found; with a SourceLoc it starts with file:line:col.
//   * internal_assert: a bug in schedlab. The message says so.
// Both build their message only when the check fails. The report ends in a
// [[noreturn]] call that throws (Halide's Error.h: never from a destructor,
// which cannot throw while another exception unwinds and would drop the
// error), so the compiler knows that nothing after an error runs: no fake
// returns after one. base depends on nothing but the standard library.
#pragma once

#include <exception>
#include <sstream>
#include <stdexcept>
#include <string>

namespace schedlab {

/// A position in a user-written file. line and col are 1-based; 0 means unknown.
struct SourceLoc {
  std::string file;  ///< path as the user gave it
  int line = 0;      ///< 1-based line, 0 if unknown
  int col = 0;       ///< 1-based column, 0 if unknown

  bool valid() const { return !file.empty(); }
  /// "file:line:col", dropping the parts that are unknown.
  std::string str() const;
};

/// The user's mistake. what() is the full diagnostic; message() omits the location.
class UserError : public std::runtime_error {
 public:
  UserError(SourceLoc loc, const std::string& message);
  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

/// A bug in schedlab itself.
class InternalError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

namespace detail {

/// Collects a streamed message; Voidifier's operator& then issues it (throws
/// UserError or InternalError). Never outlives the statement that created it.
class ErrorReport {
 public:
  enum class Kind { User, Internal };
  ErrorReport(Kind kind, SourceLoc loc, const char* src_file, int src_line, const char* cond);
  ErrorReport(const ErrorReport&) = delete;
  ErrorReport& operator=(const ErrorReport&) = delete;
  ~ErrorReport() = default;

  /// Throws the report as UserError or InternalError.
  [[noreturn]] void issue() const;

  template <typename T>
  ErrorReport& operator<<(const T& v) {
    msg_ << v;
    return *this;
  }

 private:
  Kind kind_;
  SourceLoc loc_;
  const char* src_file_;
  int src_line_;
  const char* cond_;
  std::ostringstream msg_;
};

/// Ends the streamed report (`&` binds after every `<<`) and issues it: the
/// macros are single void expressions (Halide's trick), safe inside an
/// unbraced if/else, and the compiler sees that they do not return.
struct Voidifier {
  [[noreturn]] void operator&(const ErrorReport& r) const { r.issue(); }
};

}  // namespace detail
}  // namespace schedlab

// NOLINTBEGIN(cppcoreguidelines-macro-usage)
#define SCHEDLAB_ERROR_REPORT(kind, loc, cond)                                          \
  ::schedlab::detail::Voidifier() &                                                     \
      ::schedlab::detail::ErrorReport(::schedlab::detail::ErrorReport::Kind::kind, loc, \
                                      __FILE__, __LINE__, cond)
#define user_error SCHEDLAB_ERROR_REPORT(User, {}, nullptr)
#define user_error_at(loc) SCHEDLAB_ERROR_REPORT(User, (loc), nullptr)
#define user_assert(c) (c) ? (void)0 : SCHEDLAB_ERROR_REPORT(User, {}, nullptr)
#define internal_error SCHEDLAB_ERROR_REPORT(Internal, {}, nullptr)
#define internal_assert(c) (c) ? (void)0 : SCHEDLAB_ERROR_REPORT(Internal, {}, #c)
// NOLINTEND(cppcoreguidelines-macro-usage)
