// The general kind's start (fusion_gen.h): sizes over one to three names and
// one to three inputs that broadcast against the full shape, as
// fusion_gen.cpp's statements then read them (docs/fuzz.md, "What is
// generated").
#include <algorithm>

#include "fusion_gen.h"

namespace schedlab::fuzz::gen {

namespace {

class StartDraw : Draws {
 public:
  using Draws::Draws;

  Start run() {
    draw_sizes();
    draw_inputs();
    return std::move(s_);
  }

 private:
  void draw_sizes() {
    const int r = std::vector<int>{1, 2, 2, 2, 3, 3}[static_cast<size_t>(pick(6))];
    static const char* kNames[] = {"N", "K", "M"};
    for (int i = 0; i < r; ++i) s_.full.push_back(kNames[i]);
    for (const std::string& n : s_.full) s_.sizes[n] = draw_extent();
    // Keep the emulated kernels small: at most 2^14 elements.
    for (;;) {
      int64_t total = 1;
      for (const auto& [k, v] : s_.sizes) total *= v;
      if (total <= (1 << 14)) break;
      auto big = std::max_element(s_.sizes.begin(), s_.sizes.end(),
                                  [](const auto& a, const auto& b) { return a.second < b.second; });
      big->second = std::max<int64_t>(1, big->second / (2 + pick(7)));
    }
    for (const auto& [k, v] : s_.sizes) {
      if (v == 1) s_.features.insert("extent_1");
      if (is_prime(v)) s_.features.insert("extent_prime");
      if (v > 4 && v % 4 != 0) s_.features.insert("extent_not_multiple_of_4");
    }
  }
  static bool is_prime(int64_t v) {
    if (v < 3) return false;
    for (int64_t d = 2; d * d <= v; ++d)
      if (v % d == 0) return false;
    return true;
  }
  int64_t draw_extent() {
    static const std::vector<int64_t> small = {2, 3, 4, 5, 7, 8, 13, 16, 17};
    static const std::vector<int64_t> mid = {31, 32, 33, 64, 100, 127, 128};
    static const std::vector<int64_t> large = {255, 256, 1000, 1023};
    const double u = uniform();
    if (u < 0.15) return 1;
    if (u < 0.65) return one_of(small);
    if (u < 0.9) return one_of(mid);
    return one_of(large);
  }

  void draw_inputs() {
    const int n = 1 + pick(3);
    for (int i = 0; i < n; ++i) {
      Value v;
      v.name = "x" + std::to_string(i);
      v.is_input = true;
      std::string dtype = "f32";
      for (size_t p = 0; p < s_.full.size(); ++p) {
        v.shape.push_back(s_.full[p]);
        v.pos.push_back(static_cast<int>(p));
      }
      if (i > 0) reshape_input(v);
      const double u = uniform();
      if (u < 0.06) {
        dtype = "f16";
      } else if (u < 0.1) {
        dtype = "bf16";
      } else if (u < 0.16 && i > 0) {
        dtype = "i32";
        v.is_int = true;
        v.bound = 8;
      }
      if (dtype == "f16" || dtype == "bf16") v.half = dtype;
      if (dtype != "f32") s_.features.insert("input_" + dtype);
      s_.inputs.push_back({v.name, dtype, v.shape});
      s_.values.push_back(v);
    }
  }

  /// A secondary input: the full shape, with size-1 axes, of lower rank, or 0-d.
  void reshape_input(Value& v) {
    const double u = uniform();
    const size_t r = s_.full.size();
    if (u < 0.3) return;
    if (u < 0.6 && r >= 1) {  // some axes of extent 1 (Broadcast), never all
      for (size_t p = 0; p < r; ++p)
        if (chance(0.5)) v.shape[p] = "1";
      if (std::all_of(v.shape.begin(), v.shape.end(), [](auto& s) { return s == "1"; }))
        v.shape[r - 1] = s_.full[r - 1];
      s_.features.insert("input_size1_axis");
      return;
    }
    if (u < 0.85 && r >= 2) {  // a suffix: broadcasts implicitly
      const size_t keep = 1 + static_cast<size_t>(pick(static_cast<int>(r) - 1));
      v.shape.erase(v.shape.begin(), v.shape.end() - static_cast<long>(keep));
      v.pos.erase(v.pos.begin(), v.pos.end() - static_cast<long>(keep));
      s_.features.insert("input_lower_rank");
      return;
    }
    if (u < 0.95 && r >= 2) {  // one axis only, anywhere: needs an explicit broadcast
      const size_t p = static_cast<size_t>(pick(static_cast<int>(r)));
      v.shape = {s_.full[p]};
      v.pos = {static_cast<int>(p)};
      s_.features.insert("input_lower_rank");
      return;
    }
    v.shape.clear();
    v.pos.clear();
    s_.features.insert("input_0d");
  }

  Start s_;
};

}  // namespace

Start draw_start(std::mt19937_64& rng) { return StartDraw(rng).run(); }

}  // namespace schedlab::fuzz::gen
