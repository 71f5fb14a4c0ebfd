#include "schedlab/frontend/fusion_file.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "parser.h"
#include "schedlab/base/error.h"
#include "../base/yaml_reader.h"

namespace schedlab::frontend {

namespace fs = std::filesystem;
using ir::SizeExpr;

namespace {

const std::vector<std::string> kTopKeys = {"fusion", "description", "inputs", "sizes",
                                           "mesh",   "shard",       "body",   "outputs"};
const std::vector<std::string> kInputKeys = {"dtype", "shape", "range"};

/// Maps positions inside the body scalar to file positions. A literal
/// block scalar ('|') starts on the line after its indicator, at the
/// indentation of its first non-blank line; an inline scalar starts at its
/// first character (after the quote, if quoted).
Locator body_locator(const YamlReader& r, const YAML::Node& body) {
  int mline = body.Mark().line, mcol = body.Mark().column;
  const std::string& first = r.line(mline);
  char ind = static_cast<size_t>(mcol) < first.size() ? first[static_cast<size_t>(mcol)] : ' ';
  if (ind == '>')
    user_error_at(r.loc(body)) << "body: expected a literal block scalar ('|'), found a folded "
                               << "one ('>'), which would join the statements into one line";
  if (ind == '|') {
    int indent = 0;
    for (size_t l = static_cast<size_t>(mline) + 1; l < r.lines(); ++l) {
      const std::string& s = r.line(static_cast<int>(l));
      size_t nb = s.find_first_not_of(' ');
      if (nb != std::string::npos) {
        indent = static_cast<int>(nb);
        break;
      }
    }
    std::string path = r.path();
    return [path, mline, indent](int line, int col) {
      return SourceLoc{path, mline + 1 + line, indent + col};
    };
  }
  int offset = mcol + ((ind == '"' || ind == '\'') ? 1 : 0);
  std::string path = r.path();
  return [path, mline, offset](int line, int col) {
    return SourceLoc{path, mline + line, line == 1 ? offset + col : col};
  };
}

SizeExpr shape_entry(const YamlReader& r, const YAML::Node& e, const std::string& input) {
  if (!e.IsScalar())
    user_error_at(r.loc(e)) << "input '" << input << "': expected a named size or a positive "
                            << "integer as a shape entry, found " << kind_name(e);
  const std::string& s = e.Scalar();
  if (auto v = as_int(s)) {
    if (*v <= 0)
      user_error_at(r.loc(e)) << "input '" << input << "': shape entries must be positive, found "
                              << *v;
    return SizeExpr::constant(*v);
  }
  if (!is_identifier(s))
    user_error_at(r.loc(e)) << "input '" << input << "': expected a named size (an identifier "
                            << "such as N) or a positive integer as a shape entry, found '" << s
                            << "'";
  return SizeExpr::symbol(s);
}

ref::ValueRange parse_range(const YamlReader& r, const YAML::Node& n, const std::string& input) {
  if (!n.IsSequence() || n.size() != 2)
    user_error_at(r.loc(n)) << "input '" << input << "': range must be a list [lo, hi], found "
                            << (n.IsSequence() && n.size() > 0
                                    ? "a list of " + std::to_string(n.size()) +
                                          (n.size() == 1 ? " item" : " items")
                                    : kind_name(n));
  std::optional<double> v[2];
  for (size_t i = 0; i < 2; ++i) {
    if (n[i].IsScalar()) v[i] = as_double(n[i].Scalar());
    if (!v[i] || !std::isfinite(*v[i]))
      user_error_at(r.loc(n[i])) << "input '" << input << "': range bounds must be finite "
                                 << "numbers, found " << kind_name(n[i]);
  }
  if (!(*v[0] < *v[1]))
    user_error_at(r.loc(n)) << "input '" << input << "': range [" << *v[0] << ", " << *v[1]
                            << "] is empty; expected lo < hi";
  return {*v[0], *v[1]};
}

void parse_inputs(const YamlReader& r, const YAML::Node& inputs, FusionDefinition& def,
                  Scope& scope) {
  if (!inputs.IsMap() || inputs.size() == 0)
    user_error_at(r.loc(inputs)) << "inputs: expected a mapping from input names to "
                                 << "{dtype, shape}, found " << kind_name(inputs);
  r.check_keys(inputs, [&] {
    std::vector<std::string> names;
    for (auto it = inputs.begin(); it != inputs.end(); ++it) names.push_back(it->first.Scalar());
    return names;
  }(), "inputs");
  for (auto it = inputs.begin(); it != inputs.end(); ++it) {
    const std::string name = it->first.Scalar();
    const YAML::Node spec = it->second;  // a copy: it-> yields a temporary proxy
    if (!is_identifier(name))
      user_error_at(r.loc(it->first)) << "input name '" << name
                                      << "' is not an identifier; expected letters, digits and _";
    if (name == "true" || name == "false" || name == "inf" || name == "nan" || name == "pi")
      user_error_at(r.loc(it->first)) << "input name '" << name
                                      << "' is a reserved constant; expected another name";
    if (!spec.IsMap())
      user_error_at(r.loc(spec)) << "input '" << name << "': expected {dtype: ..., shape: [...]}, "
                                 << "found " << kind_name(spec);
    r.check_keys(spec, kInputKeys, "input '" + name + "'");
    if (!spec["dtype"])
      user_error_at(r.loc(spec)) << "input '" << name << "': missing 'dtype'; expected one of "
                                 << ir::dtype_choices();
    if (!spec["shape"])
      user_error_at(r.loc(spec)) << "input '" << name << "': missing 'shape'; expected a list "
                                 << "such as [N, K]";
    const YAML::Node& dt = spec["dtype"];
    auto dtype = dt.IsScalar() ? ir::parse_dtype(dt.Scalar()) : std::nullopt;
    if (!dtype)
      user_error_at(r.loc(dt)) << "input '" << name << "': unknown dtype " << kind_name(dt)
                               << "; expected one of " << ir::dtype_choices();
    const YAML::Node& sh = spec["shape"];
    if (!sh.IsSequence())
      user_error_at(r.loc(sh)) << "input '" << name << "': shape must be a list such as [N, K], "
                               << "found " << kind_name(sh);
    std::vector<SizeExpr> shape;
    for (const auto& e : sh) shape.push_back(shape_entry(r, e, name));
    ir::TensorView* t = def.fusion->make_tensor(dtype.value_or(ir::DataType::F32), shape);
    t->set_user_name(name);
    def.fusion->add_input(t);
    ref::ValueRange range;
    if (ir::is_integral(t->dtype())) range = {-8.0, 8.0};
    if (spec["range"]) range = parse_range(r, spec["range"], name);
    def.input_ranges.push_back(range);
    scope.emplace(name, Binding{t, r.loc(it->first)});
  }
}

void parse_sizes(const YamlReader& r, const YAML::Node& sizes, FusionDefinition& def) {
  if (!sizes.IsMap())
    user_error_at(r.loc(sizes)) << "sizes: expected a mapping such as {N: 4, K: 8}, found "
                                << kind_name(sizes);
  auto symbols = def.fusion->size_symbols();
  r.check_keys(sizes, symbols, "sizes (the named sizes of the inputs' shapes)");
  for (auto it = sizes.begin(); it != sizes.end(); ++it) {
    int64_t v = it->second.IsScalar() ? as_int(it->second.Scalar()).value_or(0) : 0;
    if (v <= 0)
      user_error_at(r.loc(it->second)) << "sizes: " << it->first.Scalar()
                                       << " must be a positive integer, found "
                                       << kind_name(it->second);
    def.default_sizes[it->first.Scalar()] = v;
  }
}

void parse_outputs(const YamlReader& r, const YAML::Node& outs, FusionDefinition& def,
                   const Scope& scope) {
  if (!outs.IsSequence() || outs.size() == 0)
    user_error_at(r.loc(outs)) << "outputs: expected a non-empty list of names bound in the "
                               << "body, found " << kind_name(outs);
  for (const auto& o : outs) {
    if (!o.IsScalar())
      user_error_at(r.loc(o)) << "outputs: expected a name, found " << kind_name(o);
    auto it = scope.find(o.Scalar());
    if (it == scope.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : scope) names.push_back(k);
      std::string hint = closest_name(o.Scalar(), names);
      user_error_at(r.loc(o)) << "outputs: unknown name '" << o.Scalar()
                              << "'; expected a name bound in the body"
                              << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
    }
    auto* t = it->second.val->as<ir::TensorView>();
    if (!t)
      user_error_at(r.loc(o)) << "outputs: '" << o.Scalar() << "' is the constant "
                              << it->second.val->str() << "; expected a tensor";
    if (def.fusion->is_input(t))
      user_error_at(r.loc(o)) << "outputs: '" << o.Scalar() << "' is a fusion input; expected "
                              << "a tensor computed in the body (write `y = set(x)` to copy)";
    if (def.fusion->is_output(t))
      user_error_at(r.loc(o)) << "outputs: '" << o.Scalar() << "' is listed twice";
    def.fusion->add_output(t);
  }
}

/// `mesh: [0, 1, ...]`: a non-empty list of distinct non-negative device numbers.
void parse_mesh(const YamlReader& r, const YAML::Node& n, ir::Fusion& f) {
  if (!n.IsSequence() || n.size() == 0)
    user_error_at(r.loc(n)) << "mesh: expected a non-empty list of device numbers such as "
                            << "[0, 1], found " << kind_name(n);
  ir::DeviceMesh mesh;
  std::map<int64_t, YAML::Mark> seen;
  for (const auto& d : n) {
    std::optional<int64_t> v = d.IsScalar() ? as_int(d.Scalar()) : std::nullopt;
    if (!v || *v < 0 || *v > std::numeric_limits<int>::max())
      user_error_at(r.loc(d)) << "mesh: expected a non-negative device number, found "
                              << kind_name(d);
    if (auto it = seen.find(*v); it != seen.end())
      user_error_at(r.loc(d)) << "mesh: device " << *v << " is listed twice (first at "
                              << r.loc(it->second).str() << "); expected distinct devices";
    seen.emplace(*v, d.Mark());
    mesh.devices.push_back(static_cast<int>(*v));
  }
  ir::set_device_mesh(f, mesh);
}

/// `shard: {tensor: axis | size name | replicated}` over names bound in
/// inputs and body; an axis index counts the tensor's data axes (its shape).
void parse_shard(const YamlReader& r, const YAML::Node& n, const YAML::Node& mesh_node,
                 const Scope& scope) {
  if (!mesh_node)
    user_error_at(r.loc(n)) << "shard: the fusion has no device mesh; expected a `mesh:` list "
                            << "such as [0, 1] next to `shard:`";
  if (!n.IsMap())
    user_error_at(r.loc(n)) << "shard: expected a mapping from tensor names to an axis, a size "
                            << "name or `replicated`, such as {x: K}, found " << kind_name(n);
  std::map<std::string, YAML::Mark> seen;
  for (auto it = n.begin(); it != n.end(); ++it) {
    const YAML::Node key = it->first;
    const YAML::Node val = it->second;
    const std::string name = key.IsScalar() ? key.Scalar() : "";
    if (auto s = seen.find(name); s != seen.end())
      user_error_at(r.loc(key)) << "shard: '" << name << "' is given twice (first at "
                                << r.loc(s->second).str() << ")";
    seen.emplace(name, key.Mark());
    auto b = scope.find(name);
    if (b == scope.end()) {
      std::vector<std::string> names;
      for (const auto& [k, v] : scope)
        if (v.val->is<ir::TensorView>()) names.push_back(k);
      std::string hint = closest_name(name, names);
      user_error_at(r.loc(key)) << "shard: unknown tensor '" << name
                                << "'; expected an input or a name bound in the body"
                                << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
    }
    auto* t = b->second.val->as<ir::TensorView>();
    if (!t)
      user_error_at(r.loc(key)) << "shard: '" << name << "' is the constant "
                                << b->second.val->str() << "; expected a tensor";
    if (!val.IsScalar())
      user_error_at(r.loc(val)) << "shard: " << name << ": expected an axis index, a size name "
                                << "or `replicated`, found " << kind_name(val);
    const std::string& v = val.Scalar();
    if (v == "replicated") {
      ir::replicate(t);
      continue;
    }
    // The data axes (the shape) and their logical positions.
    std::vector<int> logical_of;
    for (int i = 0; i < t->nlogical(); ++i)
      if (!t->logical()[static_cast<size_t>(i)]->is_reduction()) logical_of.push_back(i);
    const int rank = static_cast<int>(logical_of.size());
    std::string shape;
    for (int i : logical_of)
      shape += (shape.empty() ? "" : ", ") + t->logical()[static_cast<size_t>(i)]->extent().str();
    int axis = -1;
    if (auto a = as_int(v)) {
      if (*a < -rank || *a >= rank)
        user_error_at(r.loc(val)) << "shard: axis " << *a << " is out of range for "
                                  << t->describe() << " of shape [" << shape
                                  << "]; expected an axis in [" << -rank << ", " << rank - 1 << "]";
      axis = static_cast<int>(*a < 0 ? *a + rank : *a);
    } else if (is_identifier(v)) {
      std::vector<int> hits;
      for (int i = 0; i < rank; ++i) {
        const ir::SizeExpr& e =
            t->logical()[static_cast<size_t>(logical_of[static_cast<size_t>(i)])]->extent();
        if (e.is_symbol() && e.symbol_name() == v) hits.push_back(i);
      }
      if (hits.empty())
        user_error_at(r.loc(val)) << "shard: " << v << " is not an axis of " << t->describe()
                                  << " of shape [" << shape << "]; expected one of its named "
                                  << "sizes, an axis index or `replicated`";
      if (hits.size() > 1)
        user_error_at(r.loc(val)) << "shard: " << v << " names axes " << hits[0] << " and "
                                  << hits[1] << " of " << t->describe() << " of shape [" << shape
                                  << "]; expected an axis index to say which";
      axis = hits[0];
    } else {
      user_error_at(r.loc(val)) << "shard: " << name << ": expected an axis index, a size name "
                                << "or `replicated`, found " << kind_name(val);
    }
    const ir::IterDomain* id =
        t->logical()[static_cast<size_t>(logical_of[static_cast<size_t>(axis)])];
    if (id->is_broadcast())
      user_error_at(r.loc(val)) << "shard: axis " << axis << " of " << t->describe()
                                << " of shape [" << shape
                                << "] is a Broadcast axis (extent 1); expected an axis with a "
                                << "named size";
    ir::shard(t, logical_of[static_cast<size_t>(axis)]);
  }
}

}  // namespace

FusionDefinition parse_fusion_text(const std::string& text, const std::string& path) {
  YamlReader r(text, path);
  const YAML::Node root =
      r.root_mapping("a mapping with keys fusion, inputs, body, outputs", kTopKeys,
                     {"inputs", "body", "outputs"}, "the fusion definition")
          .map;

  FusionDefinition def;
  def.path = path;
  std::string name = fs::path(path).stem().string();
  if (const YAML::Node& n = root["fusion"]) {
    if (!n.IsScalar() || !is_identifier(n.Scalar()))
      user_error_at(r.loc(n)) << "fusion: expected a name (an identifier), found " << kind_name(n);
    name = n.Scalar();
  }
  if (const YAML::Node& d = root["description"]) {
    if (!d.IsScalar())
      user_error_at(r.loc(d)) << "description: expected text, found " << kind_name(d);
    def.description = d.Scalar();
  }
  def.fusion = std::make_unique<ir::Fusion>(name);
  Scope scope;
  parse_inputs(r, root["inputs"], def, scope);
  if (const YAML::Node& s = root["sizes"]) parse_sizes(r, s, def);
  const YAML::Node& body = root["body"];
  if (!body.IsScalar())
    user_error_at(r.loc(body)) << "body: expected text with one `name = expression` per line, "
                               << "found " << kind_name(body);
  parse_body(body.Scalar(), body_locator(r, body), *def.fusion, scope);
  parse_outputs(r, root["outputs"], def, scope);
  if (const YAML::Node& m = root["mesh"]) parse_mesh(r, m, *def.fusion);
  if (const YAML::Node& sh = root["shard"]) parse_shard(r, sh, root["mesh"], scope);
  return def;
}

FusionDefinition load_fusion_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  user_assert(in.good()) << "cannot read fusion file '" << path << "': "
                         << (fs::exists(path) ? "permission denied or not a file" : "no such file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_fusion_text(ss.str(), path);
}

std::string resolve_fusion(const std::string& name_or_path, const std::vector<std::string>& dirs) {
  bool looks_like_path = name_or_path.find('/') != std::string::npos ||
                         name_or_path.ends_with(".yaml") || name_or_path.ends_with(".yml");
  if (looks_like_path || fs::is_regular_file(name_or_path)) {
    std::error_code ec;
    user_assert(fs::is_regular_file(name_or_path, ec))
        << "fusion file '" << name_or_path << "' "
        << (!fs::exists(name_or_path, ec)        ? "does not exist"
            : fs::is_directory(name_or_path, ec) ? "is a directory, not a regular file"
                                                 : "is not a regular file");
    return name_or_path;
  }
  std::vector<std::string> known;
  for (const auto& d : dirs) {
    fs::path p = fs::path(d) / (name_or_path + ".yaml");
    if (fs::is_regular_file(p)) return p.string();
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(d, ec))
      if (e.path().extension() == ".yaml") known.push_back(e.path().stem().string());
  }
  std::string searched;
  for (const auto& d : dirs) searched += (searched.empty() ? "" : ", ") + d;
  std::string hint = closest_name(name_or_path, known);
  user_error << "unknown fusion '" << name_or_path << "'; expected a file path or a name from "
             << (searched.empty() ? "(no directories)" : searched)
             << (hint.empty() ? "" : " (did you mean '" + hint + "'?)");
}

ir::SizeBindings parse_size_list(const std::string& text, const std::string& what) {
  ir::SizeBindings b;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    auto eq = item.find('=');
    user_assert(eq != std::string::npos)
        << what << ": expected NAME=VALUE, found '" << item << "' in '" << text << "'";
    std::string name = item.substr(0, eq), value = item.substr(eq + 1);
    user_assert(is_identifier(name))
        << what << ": expected a size name before '=', found '" << name << "'";
    auto v = as_int(value);
    user_assert(!too_large(value)) << what << ": " << name << " = " << value
                                   << " is out of range; expected at most "
                                   << std::numeric_limits<int64_t>::max();
    user_assert(v && *v > 0) << what << ": " << name << " must be a positive integer, found '"
                             << value << "'";
    user_assert(!b.count(name)) << what << ": " << name << " is given twice";
    b[name] = *v;
  }
  return b;
}

ir::SizeBindings bind_sizes(const FusionDefinition& def, const ir::SizeBindings& sizes) {
  auto symbols = def.fusion->size_symbols();
  ir::SizeBindings out = def.default_sizes;
  for (const auto& [k, v] : sizes) {
    if (std::find(symbols.begin(), symbols.end(), k) == symbols.end()) {
      std::string list;
      for (const auto& s : symbols) list += (list.empty() ? "" : ", ") + s;
      user_error << "fusion '" << def.fusion->name() << "' has no size named " << k
                 << "; its sizes are " << (list.empty() ? "(none)" : list);
    }
    user_assert(v > 0) << "fusion '" << def.fusion->name() << "': size " << k
                       << " must be positive, found " << v;
    out[k] = v;
  }
  for (const auto& s : symbols)
    user_assert(out.count(s)) << "fusion '" << def.fusion->name() << "': size " << s
                              << " is not bound; pass it with --size " << s << "=<value>";
  return out;
}

}  // namespace schedlab::frontend
