// Schedule-script arguments: see schedule_args.h.
#include "schedule_args.h"

#include <cctype>
#include <cerrno>
#include <cstdlib>

#include "parser.h"

namespace schedlab::frontend::script {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

const Choices<ParallelType> kParallelTypes = spelled(
    {ParallelType::BIDx, ParallelType::BIDy, ParallelType::BIDz, ParallelType::TIDx,
     ParallelType::TIDy, ParallelType::TIDz, ParallelType::DIDx, ParallelType::Serial},
    ir::parallel_type_name);
// LoopTransform::Serial is spelled through ParallelType::Serial: one "Serial".
const Choices<LoopTransform> kLoopTransforms =
    spelled({LoopTransform::Vectorize, LoopTransform::Unroll, LoopTransform::Unswitch,
             LoopTransform::Bulk},
            ir::loop_transform_name);
// Memory types are written in lower case in scripts: set_memory_type(t, shared).
const Choices<MemoryType> kMemoryTypes =
    spelled({MemoryType::Local, MemoryType::Shared, MemoryType::Global}, ir::memory_type_name,
            /*lowercase=*/true);
const Choices<LoadStoreOpType> kLoadStoreOps =
    spelled({LoadStoreOpType::Set, LoadStoreOpType::CpAsync, LoadStoreOpType::LdMatrix,
             LoadStoreOpType::Tma},
            ir::load_store_op_name);
const Choices<CacheOp> kCacheOps = spelled(
    {CacheOp::Unspecified, CacheOp::AllLevels, CacheOp::Streaming, CacheOp::Global},
    ir::cache_op_name);
const Choices<bool> kBools = {{"true", true}, {"false", false}};

std::string join(const std::vector<std::string>& v) {
  std::string r;
  for (const auto& s : v) r += (r.empty() ? "" : ", ") + s;
  return r;
}

/// " (did you mean 'X'?)" for the closest of `names`, ignoring case; or "".
std::string did_you_mean(const std::string& name, const std::vector<std::string>& names) {
  std::vector<std::string> lowered;
  for (const auto& n : names) lowered.push_back(lower(n));
  std::string hit = closest_name(lower(name), lowered);
  for (size_t i = 0; i < names.size(); ++i)
    if (!hit.empty() && lowered[i] == hit) return " (did you mean '" + names[i] + "'?)";
  return "";
}

/// The value of an integer literal ("-12"); nullopt if it overflows int64.
std::optional<int64_t> to_integer(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  long long x = std::strtoll(text.c_str(), &end, 10);
  if (errno == ERANGE || *end != '\0') return std::nullopt;
  return x;
}

/// v's first token as Token::describe() spells it ("'4'", "'-'", "'['"): for
/// messages about what was found where a name was expected.
std::string first_token(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Int:
      return v.text[0] == '-' ? "'-'" : "'" + v.text + "'";
    case Value::Kind::Name:
      return "'" + v.text + "'";
    case Value::Kind::List:
      return "'['";
    case Value::Kind::Param:
    case Value::Kind::Map:
      return "'{'";
  }
  return "";
}

void Args::fail(const Value& v, size_t i, const std::string& want,
                const std::vector<std::string>& names) const {
  std::string found;
  switch (v.kind) {
    case Value::Kind::Int:
      found = v.text;
      break;
    case Value::Kind::Param:
      found = "{" + v.text + "}";
      break;
    case Value::Kind::Name:
      found = "'" + v.text + "'" + did_you_mean(v.text, names);
      break;
    case Value::Kind::List:
      found = "a list";
      break;
    case Value::Kind::Map:
      found = "a map";
      break;
  }
  user_error_at(v.loc) << p_.name << ": expected " << want << " for '" << p_.params[i].name
                       << "', found " << found;
}

TensorView* Args::tensor_of(const Value& v, size_t i) const {
  if (v.kind != Value::Kind::Name) fail(v, i, "a tensor");
  return names_.lookup(v.text, v.loc);
}

int64_t Args::integer_of(const Value& v, size_t i) const {
  if (v.kind == Value::Kind::Param) return names_.param(v);
  if (v.kind != Value::Kind::Int || v.text.find_first_of(".eE") != std::string::npos)
    fail(v, i, "an integer");
  auto x = to_integer(v.text);
  if (!x) fail(v, i, "an integer that fits in 64 bits");
  return *x;
}

}  // namespace schedlab::frontend::script
