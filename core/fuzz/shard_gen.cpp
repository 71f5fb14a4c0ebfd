// The sharding of a mesh fuzz case (schedlab/fuzz/mesh.h): which inputs,
// body tensors and outputs are declared sharded or replicated, and the sizes
// made to divide by the mesh (or not).
#include <fmt/core.h>

#include <algorithm>
#include <regex>
#include <sstream>

#include "schedlab/base/error.h"
#include "schedlab/frontend/fusion_file.h"
#include "schedlab/fuzz/mesh.h"

namespace schedlab::fuzz {

std::string GenSharding::keys() const {
  std::string devices;
  for (int i = 0; i < mesh; ++i) devices += (i ? ", " : "") + std::to_string(i);
  std::string s = "mesh: [" + devices + "]\n";
  if (shards.empty()) return s;
  std::string entries;
  for (const GenShard& g : shards)
    entries += (entries.empty() ? "" : ", ") + g.tensor + ": " + g.layout;
  return s + "shard: {" + entries + "}\n";
}

std::string sharded_text(const GenFusion& f, const GenSharding& s) {
  // The keys go before `body:` (any order parses; this one reads well).
  const std::string text = f.text();
  const size_t at = text.find("\nbody: |\n");
  internal_assert(at != std::string::npos) << "fuzz: a generated fusion without a body:\n" << text;
  return text.substr(0, at + 1) + s.keys() + text.substr(at + 1);
}

namespace {

/// Whether `text` parses (the fusion text checks a declaration's axis).
bool parses(const std::string& text) {
  try {
    frontend::parse_fusion_text(text, "fuzz.yaml");
    return true;
  } catch (const UserError&) {
    return false;
  }
}

}  // namespace

GenSharding generate_sharding(GenFusion& f, int mesh, std::mt19937_64& rng) {
  GenSharding s;
  s.mesh = mesh;
  auto chance = [&](double p) { return std::uniform_real_distribution<double>(0, 1)(rng) < p; };
  auto pick = [&](size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng); };
  std::set<std::string> sharded_sizes;

  // A live reduction of an input over one named axis (`sum(x0, axis=1)`),
  // when there is one, six times in ten: that input sharded on the reduced
  // axis and the reduction's result on another of its sizes: a ReduceScatter.
  std::set<std::string> live(f.outputs.begin(), f.outputs.end());
  for (auto st = f.body.rbegin(); st != f.body.rend(); ++st)
    if (live.count(st->name)) live.insert(st->uses.begin(), st->uses.end());
  {
    static const std::regex kReduce(R"(^(sum|max|min|prod)\((x[0-9]+), axis=(-?[0-9]+)(, keepdim=true)?\)$)");
    struct Scatter {
      std::string input, result, reduced, kept;
      size_t axis;
    };
    std::vector<Scatter> found;
    for (const GenStatement& st : f.body) {
      std::smatch m;
      if (!live.count(st.name) || !std::regex_match(st.expr, m, kReduce)) continue;
      auto in = std::find_if(f.inputs.begin(), f.inputs.end(),
                             [&](const GenInput& g) { return g.name == m[2].str(); });
      if (in == f.inputs.end()) continue;
      const auto rank = static_cast<int>(in->shape.size());
      int axis = std::stoi(m[3].str());
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) continue;
      const std::string& reduced = in->shape[static_cast<size_t>(axis)];
      if (reduced == "1") continue;
      for (const std::string& d : in->shape)
        if (d != "1" && d != reduced)
          found.push_back({in->name, st.name, reduced, d, static_cast<size_t>(axis)});
    }
    if (!found.empty() && chance(0.6)) {
      const Scatter& sc = found[pick(found.size())];
      GenSharding trial = s;
      trial.shards.push_back({sc.input, std::to_string(sc.axis)});
      trial.shards.push_back({sc.result, sc.kept});
      if (parses(sharded_text(f, trial))) {
        s = std::move(trial);
        sharded_sizes.insert(sc.reduced);
        sharded_sizes.insert(sc.kept);
        s.features.insert("shard_input");
        s.features.insert("reduce_scatter");
      }
    }
  }

  // Inputs with a named axis (not 0-d, not all Broadcast).
  std::vector<size_t> shardable;
  for (size_t i = 0; i < f.inputs.size(); ++i)
    if (std::any_of(f.inputs[i].shape.begin(), f.inputs[i].shape.end(),
                    [](const std::string& d) { return d != "1"; }))
      shardable.push_back(i);
  std::shuffle(shardable.begin(), shardable.end(), rng);
  const size_t n_inputs =
      s.shards.empty() ? std::min<size_t>(shardable.size(), chance(0.35) ? 2 : 1) : 0;
  for (size_t k = 0; k < n_inputs; ++k) {
    const GenInput& in = f.inputs[shardable[k]];
    std::vector<size_t> axes;
    for (size_t a = 0; a < in.shape.size(); ++a)
      if (in.shape[a] != "1") axes.push_back(a);
    const size_t axis = axes[pick(axes.size())];
    // An index, or (one in three) the size name when it names one axis only.
    const bool by_name =
        chance(0.33) && std::count(in.shape.begin(), in.shape.end(), in.shape[axis]) == 1;
    s.shards.push_back({in.name, by_name ? in.shape[axis] : std::to_string(axis)});
    sharded_sizes.insert(in.shape[axis]);
    s.features.insert("shard_input");
  }
  if (n_inputs == 2) s.features.insert("shard_two_inputs");

  // Sometimes a body tensor or an output: replicated, or sharded on one of
  // the fusion's sizes (dropped when the text refuses it: no such axis, or
  // two of them, or a Broadcast one).
  if (!s.features.count("reduce_scatter") && chance(0.4) && !f.body.empty()) {
    std::vector<std::string> names;
    for (const GenStatement& st : f.body) names.push_back(st.name);
    // Half the time a reduction's result, if any: declared on another axis
    // than the one it reduces, a reduction over a sharded axis becomes a
    // ReduceScatter.
    // (Live ones only: a declaration on a dead tensor changes no plan.)
    std::vector<std::string> reductions;
    for (const GenStatement& st : f.body)
      for (const char* op : {"sum(", "max(", "min(", "prod("})
        if (st.expr.rfind(op, 0) == 0 && live.count(st.name)) reductions.push_back(st.name);
    const bool reduction = !reductions.empty() && chance(0.5);
    const bool output = !reduction && chance(0.5) && !f.outputs.empty();
    std::string name = reduction ? reductions[pick(reductions.size())]
                       : output  ? f.outputs[pick(f.outputs.size())]
                                 : names[pick(names.size())];
    const bool declared = std::any_of(s.shards.begin(), s.shards.end(),
                                      [&](const GenShard& g) { return g.tensor == name; });
    if (!declared) {
      std::string layout = "replicated";
      // A reduction's result on a size the inputs are not sharded on: a
      // reduction over the inputs' sharded axis then scatters.
      std::vector<std::string> sizes;
      for (const auto& [k, v] : f.sizes)
        if (!reduction || !sharded_sizes.count(k)) sizes.push_back(k);
      if ((reduction || chance(0.6)) && !sizes.empty()) layout = sizes[pick(sizes.size())];
      GenSharding trial = s;
      trial.shards.push_back({name, layout});
      if (parses(sharded_text(f, trial))) {
        s = std::move(trial);
        if (layout == "replicated") {
          s.features.insert("replicated");
        } else {
          sharded_sizes.insert(layout);
        }
        const bool is_output = std::count(f.outputs.begin(), f.outputs.end(), name) > 0;
        s.features.insert(is_output ? "shard_output" : "shard_body");
      }
    }
  }

  // Sharded sizes: a multiple of the mesh three times in four, else as drawn.
  for (const std::string& n : sharded_sizes) {
    auto it = f.sizes.find(n);
    if (it == f.sizes.end()) continue;
    int64_t& v = it->second;
    if (chance(0.75)) {
      v = v < mesh ? mesh : v - v % mesh;
    }
    s.features.insert(v % mesh == 0 ? "size_divisible" : "size_indivisible");
  }
  return s;
}

MeshCase generate_mesh_case(uint64_t seed, uint64_t index, int mesh) {
  MeshCase c;
  c.index = index;
  c.fusion = generate_case(seed, index).fusion;
  // The sharding's stream: seeded from the case's own (its first draws, in
  // a copy), so the case's fusion is the one the unsharded fuzzer draws.
  std::mt19937_64 base = case_rng(seed, index);
  std::seed_seq seq{static_cast<uint32_t>(base()), static_cast<uint32_t>(base()),
                    static_cast<uint32_t>(mesh), 0x6d657368u /* "mesh" */};
  std::mt19937_64 rng(seq);
  c.sharding = generate_sharding(c.fusion, mesh, rng);
  const std::string text = c.text();
  try {
    frontend::parse_fusion_text(text, "fuzz.yaml");
  } catch (const UserError& e) {
    internal_error << "fuzz --mesh: case " << index << " of seed " << seed
                   << " is a sharded fusion that does not parse (a generator bug): " << e.what()
                   << "\n"
                   << text;
  }
  return c;
}

}  // namespace schedlab::fuzz
