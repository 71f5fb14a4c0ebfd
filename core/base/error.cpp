#include "schedlab/base/error.h"

namespace schedlab {

std::string SourceLoc::str() const {
  std::string s = file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (col > 0) s += ":" + std::to_string(col);
  }
  return s;
}

static std::string format_user(const SourceLoc& loc, const std::string& message) {
  return loc.valid() ? loc.str() + ": error: " + message : "error: " + message;
}

UserError::UserError(SourceLoc loc, const std::string& message)
    : std::runtime_error(format_user(loc, message)), loc_(std::move(loc)), message_(message) {}

namespace detail {

ErrorReport::ErrorReport(Kind kind, SourceLoc loc, const char* src_file, int src_line,
                         const char* cond)
    : kind_(kind), loc_(std::move(loc)), src_file_(src_file), src_line_(src_line), cond_(cond) {}

void ErrorReport::issue() const {
  if (kind_ == Kind::User) throw UserError(loc_, msg_.str());
  std::string m = "internal error (a bug in schedlab, please report it) at ";
  m += src_file_;
  m += ":" + std::to_string(src_line_);
  if (cond_ != nullptr) m += std::string(": condition `") + cond_ + "` failed";
  if (!msg_.str().empty()) m += ": " + msg_.str();
  throw InternalError(m);
}

}  // namespace detail
}  // namespace schedlab
