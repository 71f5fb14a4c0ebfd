// Mutations of a kernel's outputs: see schedlab/sweep/pipeline/mutate.h.
#include "schedlab/sweep/pipeline/mutate.h"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "schedlab/base/error.h"
#include "schedlab/ir/op_semantics.h"
#include "schedlab/sweep/pipeline/pipeline.h"

namespace schedlab::sweep {

namespace {

/// A finite number, the whole of `text`; false otherwise.
bool parse_number(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}

/// Changed in the sense of a comparison: NaN equals NaN here.
bool differs(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) != std::isnan(b);
  return a != b;
}

/// "element 12 [1, 4]".
std::string element_str(const ref::HostTensor& t, int64_t i) {
  std::string idx;
  int64_t rest = i;
  for (int64_t s : t.strides()) {
    idx += fmt::format("{}{}", idx.empty() ? "" : ", ", s > 0 ? rest / s : 0);
    if (s > 0) rest %= s;
  }
  return fmt::format("element {} [{}]", i, idx);
}

/// The element with the largest finite |want| (the first on a tie), or -1
/// when no element is finite or the tensor is empty.
int64_t largest_abs(const ref::HostTensor& want) {
  int64_t best = -1;
  for (int64_t i = 0; i < want.numel(); ++i) {
    const double v = want.data[static_cast<size_t>(i)];
    if (std::isfinite(v) &&
        (best < 0 || std::abs(v) > std::abs(want.data[static_cast<size_t>(best)])))
      best = i;
  }
  return best;
}

/// Sets got[i] to v rounded to the output's dtype; true when that changed it.
bool set(ref::HostTensor& got, int64_t i, double v) {
  double& slot = got.data[static_cast<size_t>(i)];
  const double stored = ir::round_to_dtype(v, got.dtype);
  const bool changed = differs(stored, slot);
  slot = stored;
  return changed;
}

/// Applies m to one output; returns its line and adds to `changed`.
std::string mutate_output(const Mutation& m, ref::HostTensor& got, const ref::HostTensor& want,
                          int64_t& changed) {
  internal_assert(got.numel() == want.numel())
      << "mutate: an output of " << got.numel() << " elements against a reference of "
      << want.numel();
  if (got.numel() == 0) return "unchanged: the output is empty";
  using K = Mutation::Kind;
  switch (m.kind) {
    case K::Zero:
    case K::Scale: {
      int64_t n = 0;
      for (int64_t i = 0; i < got.numel(); ++i)
        n += set(got, i, m.kind == K::Zero ? 0.0 : got.data[static_cast<size_t>(i)] * m.value);
      changed += n;
      if (n == 0)
        return m.kind == K::Zero ? "unchanged: every element is already 0"
                                 : "unchanged: every element rounds back to its own value";
      return fmt::format("{} ({} of {} elements changed)",
                         m.kind == K::Zero ? "every element set to 0"
                                           : fmt::format("every element times {}", m.value),
                         n, got.numel());
    }
    case K::One:
    case K::Nan: {
      const int64_t i = largest_abs(want);
      if (i < 0) return "unchanged: no element of the reference is finite";
      const double scale = std::abs(want.data[static_cast<size_t>(i)]);
      if (m.kind == K::One && scale == 0.0) return "unchanged: the reference is all zeros";
      if (m.kind == K::Nan && !ir::is_float(got.dtype))
        return fmt::format("unchanged: {} cannot hold NaN", ir::dtype_name(got.dtype));
      const double before = got.data[static_cast<size_t>(i)];
      // Away from zero, so that a reference near zero is not crossed; an
      // integer moves by at least 1, the smallest change it can store.
      double by = std::abs(m.value) * scale;
      if (ir::is_integral(got.dtype)) by = std::max(1.0, std::ceil(by));
      const double sign = (m.value < 0) != (want.data[static_cast<size_t>(i)] < 0) ? -1.0 : 1.0;
      const double moved =
          m.kind == K::Nan ? std::numeric_limits<double>::quiet_NaN() : before + sign * by;
      if (!set(got, i, moved))
        return fmt::format("unchanged: {} ({:.6g}) rounds back to its own value",
                           element_str(got, i), before);
      ++changed;
      return fmt::format("{} (largest |reference|, {:.6g}): {:.6g} -> {:.6g}", element_str(got, i),
                         scale, before, got.data[static_cast<size_t>(i)]);
    }
    case K::Swap: {
      int64_t lo = -1, hi = -1;
      for (int64_t i = 0; i < want.numel(); ++i) {
        const double v = want.data[static_cast<size_t>(i)];
        if (!std::isfinite(v)) continue;
        if (hi < 0 || v > want.data[static_cast<size_t>(hi)]) hi = i;
        if (lo < 0 || v < want.data[static_cast<size_t>(lo)]) lo = i;
      }
      if (hi < 0 || want.data[static_cast<size_t>(hi)] == want.data[static_cast<size_t>(lo)])
        return "unchanged: every element of the reference is equal";
      const double a = got.data[static_cast<size_t>(hi)], b = got.data[static_cast<size_t>(lo)];
      if (!differs(a, b))
        return fmt::format("unchanged: the output holds {:.6g} at both {} and {}", a,
                           element_str(got, hi), element_str(got, lo));
      got.data[static_cast<size_t>(hi)] = b;
      got.data[static_cast<size_t>(lo)] = a;
      changed += 2;
      return fmt::format("{} (largest reference) and {} (smallest) exchanged: {:.6g} <-> {:.6g}",
                         element_str(got, hi), element_str(got, lo), a, b);
    }
  }
  internal_error << "mutate: unknown kind";
}

}  // namespace

std::string Mutation::str() const {
  switch (kind) {
    case Kind::Zero:
      return "zero";
    case Kind::Scale:
      return fmt::format("scale:{}", value);
    case Kind::One:
      return fmt::format("one:{}", value);
    case Kind::Swap:
      return "swap";
    case Kind::Nan:
      return "nan";
  }
  return "?";
}

Mutation parse_mutation(const std::string& text, const std::string& flag) {
  const size_t colon = text.find(':');
  const std::string head = text.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : text.substr(colon + 1);
  Mutation m;
  if ((head == "zero" || head == "swap" || head == "nan") && colon == std::string::npos) {
    m.kind = head == "zero"   ? Mutation::Kind::Zero
             : head == "swap" ? Mutation::Kind::Swap
                              : Mutation::Kind::Nan;
    return m;
  }
  if ((head == "scale" || head == "one") && colon != std::string::npos) {
    m.kind = head == "scale" ? Mutation::Kind::Scale : Mutation::Kind::One;
    const bool ok = parse_number(arg, m.value);
    // scale:1 and one:0 change nothing: a mutant that cannot be killed.
    user_assert(ok && m.value != (head == "scale" ? 1.0 : 0.0))
        << flag << " " << head
        << (head == "scale" ? ":F: expected a finite number F other than 1"
                            : ":R: expected a finite number R other than 0")
        << ", got '" << arg << "'";
    return m;
  }
  user_error << flag << ": expected zero, scale:F, one:R, swap or nan, got '" << text << "'";
}

MutationEffect mutate(const Mutation& m, std::vector<ref::HostTensor>& got,
                      const std::vector<ref::HostTensor>& want) {
  internal_assert(got.size() == want.size())
      << "mutate: " << got.size() << " outputs against " << want.size() << " references";
  MutationEffect e;
  for (size_t i = 0; i < got.size(); ++i)
    e.outputs.push_back(mutate_output(m, got[i], want[i], e.changed));
  return e;
}

MutantVerdict judge_mutant(const Mutation& m, const Validation& mutated) {
  if (mutated.ok)
    return {false, fmt::format("mutation {} survived validation: every output within its "
                               "tolerance (max abs error {:.3g})",
                               m.str(), mutated.max_abs_error)};
  std::string why = mutated.summary();
  constexpr std::string_view kPrefix = "wrong_result: ";
  if (why.starts_with(kPrefix)) why.erase(0, kPrefix.size());
  return {true, fmt::format("wrong_result under mutation {}: {}", m.str(), why)};
}

}  // namespace schedlab::sweep
