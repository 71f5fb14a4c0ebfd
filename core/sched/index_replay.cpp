// Concrete index replay: loop indices back to logical ones, one split or merge
// at a time, in the reverse of the order they were applied.
#include "schedlab/sched/index_replay.h"

#include <string>
#include <unordered_map>

#include "schedlab/base/error.h"

namespace schedlab::sched {

namespace {

int64_t extent_of(const ir::TensorView* tv, const ir::IterDomain* id,
                  const ir::SizeBindings& sizes) {
  std::optional<int64_t> e = id->extent().evaluate(sizes);
  if (!e) {
    std::vector<std::string> syms;
    id->extent().collect_symbols(syms);
    std::string unbound;
    for (const std::string& s : syms)
      if (!sizes.count(s)) unbound += (unbound.empty() ? "" : ", ") + s;
    user_error << "index replay: extent " << id->extent().str() << " of " << tv->describe()
               << " axis " << id->str() << " cannot be evaluated; expected a value for the "
               << "named size(s) " << unbound;
  }
  return *e;
}

}  // namespace

std::vector<int64_t> loop_extents(const ir::TensorView* tv, const ir::SizeBindings& sizes) {
  std::vector<int64_t> r;
  r.reserve(tv->loop().size());
  for (const ir::IterDomain* id : tv->loop()) r.push_back(extent_of(tv, id, sizes));
  return r;
}

// For an rfactor producer (tv->has_root()), the logical axes are themselves
// derived from the root by the rfactored transforms; this returns the index
// over logical() only, which is what the loop domain is scheduled from.
std::optional<std::vector<int64_t>> loop_to_logical(const ir::TensorView* tv,
                                                    const std::vector<int64_t>& loop_index,
                                                    const ir::SizeBindings& sizes) {
  const auto& loop = tv->loop();
  internal_assert(loop_index.size() == loop.size())
      << "loop_to_logical: " << loop_index.size() << " loop indices for " << tv->describe()
      << " with " << loop.size() << " loop axes";
  std::unordered_map<const ir::IterDomain*, int64_t> idx;
  for (size_t k = 0; k < loop.size(); ++k) {
    int64_t ext = extent_of(tv, loop[k], sizes);
    internal_assert(loop_index[k] >= 0 && loop_index[k] < ext)
        << "loop_to_logical: index " << loop_index[k] << " of " << tv->describe() << " axis "
        << loop[k]->str() << " is outside [0, " << ext << ")";
    idx[loop[k]] = loop_index[k];
  }
  auto get = [&](const ir::IterDomain* id) {
    auto it = idx.find(id);
    internal_assert(it != idx.end()) << "loop_to_logical: " << id->str() << " of " << tv->describe()
                                     << " is neither a loop axis nor produced by a later transform";
    return it->second;
  };
  std::vector<ir::IterDomainExpr*> history = tv->loop_history();
  for (auto e = history.rbegin(); e != history.rend(); ++e) {
    if (const auto* s = (*e)->as<ir::Split>()) {
      int64_t in_ext = extent_of(tv, s->in(), sizes);
      int64_t stride = extent_of(tv, s->inner(), sizes);
      int64_t i = get(s->outer()) * stride + get(s->inner());
      // The remainder of a split that does not divide: lowering predicates it.
      if (i >= in_ext) return std::nullopt;
      idx[s->in()] = i;
    } else if (const auto* m = (*e)->as<ir::Merge>()) {
      int64_t inner_ext = extent_of(tv, m->inner(), sizes);
      int64_t out = get(m->out());
      idx[m->outer()] = out / inner_ext;
      idx[m->inner()] = out % inner_ext;
    }
  }
  std::vector<int64_t> r;
  r.reserve(tv->logical().size());
  for (const ir::IterDomain* id : tv->logical()) r.push_back(get(id));
  return r;
}

}  // namespace schedlab::sched
