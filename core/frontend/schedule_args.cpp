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
    case Value::Kind::Index:
      return first_token(v.items[0]);
  }
  return "";
}

std::string spelling(const Value& v) {
  if (v.kind == Value::Kind::Index) {
    const Value& i = v.items[1];
    return spelling(v.items[0]) + "[" +
           (i.kind == Value::Kind::Param ? "{" + i.text + "}" : i.text) + "]";
  }
  return v.text;
}

Object Object::list(const std::vector<TensorView*>& tensors) {
  Object o;
  o.is_list = true;
  for (TensorView* t : tensors) o.items.emplace_back(t);
  return o;
}

Object Object::list(const std::vector<std::vector<TensorView*>>& lists) {
  Object o;
  o.is_list = true;
  for (const auto& l : lists) o.items.push_back(list(l));
  return o;
}

std::string Object::str() const {
  if (!is_list) return tensor ? tensor->describe() : "nothing";
  std::vector<std::string> parts;
  for (const Object& o : items) parts.push_back(o.str());
  return "[" + join(parts) + "]";
}

std::string Object::what() const {
  if (!is_list) return "a tensor, " + str();
  if (items.empty()) return "an empty list";
  const bool lists = items.front().is_list;
  return "a list of " + std::to_string(items.size()) + (lists ? " list" : " tensor") +
         (items.size() == 1 ? "" : "s");
}

void Args::fail(const Value& v, size_t i, const std::string& want,
                const std::vector<std::string>& names, const Object* is) const {
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
    case Value::Kind::Index:
      found = "'" + spelling(v) + "'";
      break;
  }
  if (is) found += ", " + is->what();
  user_error_at(v.loc) << p_.name << ": expected " << want << " for '" << p_.params[i].name
                       << "', found " << found;
}

Object Args::object_of(const Value& v) const {
  if (v.kind == Value::Kind::Name) return names_.lookup(v.text, v.loc);
  internal_assert(v.kind == Value::Kind::Index) << "object_of: not a name or an index";
  const Value& base = v.items[0];
  const Value& at = v.items[1];
  Object list = object_of(base);
  if (!list.is_list)
    user_error_at(v.loc) << p_.name << ": cannot index '" << spelling(base) << "': it is "
                         << list.what() << ", not a list (queries such as get_reduction_tvs() "
                         << "return lists)";
  int64_t k = 0;
  if (at.kind == Value::Kind::Param) {
    k = names_.param(at);
  } else {
    auto x = at.text.find_first_of(".eE") == std::string::npos ? to_integer(at.text) : std::nullopt;
    if (!x)
      user_error_at(at.loc) << p_.name << ": expected an integer index into '" << spelling(base)
                            << "', found " << at.text;
    k = *x;
  }
  // Python's rule, as for axes: -1 is the last item.
  const auto n = static_cast<int64_t>(list.items.size());
  if (k < -n || k >= n)
    user_error_at(at.loc) << p_.name << ": index " << k << " is out of range for '"
                          << spelling(base) << "', " << list.what()
                          << (n == 0 ? ""
                                     : "; expected an index from " + std::to_string(-n) + " to " +
                                           std::to_string(n - 1));
  return list.items[static_cast<size_t>(k < 0 ? k + n : k)];
}

TensorView* Args::tensor_of(const Value& v, size_t i) const {
  if (v.kind != Value::Kind::Name && v.kind != Value::Kind::Index) fail(v, i, "a tensor");
  Object o = object_of(v);
  if (o.is_list) fail(v, i, "a tensor", {}, &o);
  return o.tensor;
}

std::vector<TensorView*> Args::tensors(size_t i) const {
  std::vector<TensorView*> r;
  if (!given(i)) return r;
  const Value& v = *slots_[i];
  const std::string want = "a list of tensors such as [x, y]";
  if (v.kind == Value::Kind::Name || v.kind == Value::Kind::Index) {
    Object o = object_of(v);
    if (!o.is_list) fail(v, i, want, {}, &o);
    for (const Object& item : o.items) {
      if (item.is_list) fail(v, i, want, {}, &o);
      r.push_back(item.tensor);
    }
    return r;
  }
  for (const Value& item : list(i, "tensors such as [x, y]")) r.push_back(tensor_of(item, i));
  return r;
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
