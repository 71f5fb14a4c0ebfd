// Kernel resources from NVRTC: ptxas' verbose report and the PTX text.
#include "schedlab/model/resources.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <set>
#include <sstream>
#include <vector>

#include "schedlab/base/error.h"
#include "schedlab/runtime/cuda_backend.h"

namespace schedlab::model {
namespace {

int64_t first_number(const std::string& text, const std::regex& re, int64_t fallback) {
  std::smatch m;
  return std::regex_search(text, m, re) ? std::stoll(m[1]) : fallback;
}

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

/// The opcode of one PTX statement: the first word after an optional guard
/// predicate ("@%p1 bra ..." -> "bra").
std::string opcode_of(const std::string& stmt) {
  std::istringstream is(stmt);
  std::string word;
  is >> word;
  if (word.starts_with("@")) is >> word;
  return word;
}

}  // namespace

PtxArithmetic ptx_arithmetic(const std::string& op) {
  PtxArithmetic a;
  std::vector<std::string> parts;
  std::istringstream is(op);
  for (std::string part; std::getline(is, part, '.');) parts.push_back(part);
  if (parts.empty()) return a;
  if (parts[0] == "mma") {
    // mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32: the shape part.
    static const std::regex kShape("m([0-9]+)n([0-9]+)k([0-9]+)");
    std::smatch m;
    for (const std::string& part : parts)
      if (std::regex_match(part, m, kShape))
        a.mma_flops = 2 * std::stoll(m[1]) * std::stoll(m[2]) * std::stoll(m[3]);
    return a;
  }
  static const std::set<std::string> kArithmetic = {"add", "sub",  "mul",   "fma", "mad", "div",
                                                    "rcp", "sqrt", "rsqrt", "ex2", "lg2", "sin",
                                                    "cos", "tanh", "min",   "max"};
  if (!kArithmetic.count(parts[0])) return a;
  // The type is the last part: .f32, .f64, .f16, .bf16 (one lane), .f16x2,
  // .bf16x2 (two). Integer types (.s32, .u64, .lo.s32's) are not FLOPs.
  const std::string& type = parts.back();
  int lanes = 0;
  if (type == "f32" || type == "f64" || type == "f16" || type == "bf16") lanes = 1;
  if (type == "f16x2" || type == "bf16x2") lanes = 2;
  a.fp_ops = lanes;
  a.flops = (parts[0] == "fma" || parts[0] == "mad" ? 2 : 1) * lanes;
  return a;
}

KernelResources parse_ptxas_report(const std::string& log, const std::string& kernel) {
  const std::string entry = "Compiling entry function '" + kernel + "'";
  size_t at = log.find(entry);
  internal_assert(at != std::string::npos)
      << "ptxas' report has no entry function '" << kernel << "' (was --ptxas-options=-v "
      << "passed?); the log was:\n"
      << log;
  size_t end = log.find("Compiling entry function '", at + entry.size());
  const std::string section = log.substr(at, end == std::string::npos ? end : end - at);
  KernelResources r;
  std::smatch m;
  static const std::regex kArch(R"(for '(sm_[0-9]+[a-z]?)')");
  if (std::regex_search(section, m, kArch)) r.arch = m[1];
  static const std::regex kUsed(R"(Used ([0-9]+) registers)");
  internal_assert(std::regex_search(section, m, kUsed))
      << "ptxas' report for '" << kernel << "' has no 'Used N registers' line:\n"
      << section;
  r.registers = int(std::stoll(m[1]));
  static const std::regex kBarriers(R"(used ([0-9]+) barriers)");
  static const std::regex kSmem(R"(([0-9]+) bytes smem)");
  r.barriers = int(first_number(section, kBarriers, 0));
  r.static_shared_bytes = first_number(section, kSmem, 0);
  // The stack line follows "Function properties for <kernel>"; other
  // functions (non-inlined device functions) have their own.
  const std::string props = "Function properties for " + kernel + "\n";
  size_t p = section.find(props);
  internal_assert(p != std::string::npos)
      << "ptxas' report for '" << kernel << "' has no '" << trim(props) << "' line:\n"
      << section;
  size_t line_end = section.find('\n', p + props.size());
  const std::string frame = section.substr(p + props.size(), line_end - (p + props.size()));
  static const std::regex kFrame(
      R"(([0-9]+) bytes stack frame, ([0-9]+) bytes spill stores, ([0-9]+) bytes spill loads)");
  internal_assert(std::regex_search(frame, m, kFrame))
      << "ptxas' report for '" << kernel << "': unexpected stack line '" << frame << "'";
  r.stack_bytes = std::stoll(m[1]);
  r.spill_store_bytes = std::stoll(m[2]);
  r.spill_load_bytes = std::stoll(m[3]);
  return r;
}

PtxCounts count_ptx(const std::string& ptx, const std::string& kernel) {
  size_t at = ptx.find(".entry " + kernel + "(");
  internal_assert(at != std::string::npos) << "PTX has no entry '" << kernel << "'";
  // The body: from the first '{' after the parameter list to its match.
  size_t open = ptx.find('{', ptx.find(')', at));
  internal_assert(open != std::string::npos) << "PTX entry '" << kernel << "' has no body";
  PtxCounts c;
  int depth = 0;
  std::istringstream is(ptx.substr(open));
  for (std::string line; std::getline(is, line);) {
    if (size_t comment = line.find("//"); comment != std::string::npos) line.resize(comment);
    for (char ch : line) depth += ch == '{' ? 1 : ch == '}' ? -1 : 0;
    // Scoped blocks ({ .reg .pred p; ... }) open and close on their own.
    std::string s = trim(line);
    while (!s.empty() && (s.front() == '{' || s.front() == '}')) s = trim(s.substr(1));
    while (!s.empty() && s.back() == '}') s = trim(s.substr(0, s.size() - 1));
    if (!s.empty() && s.back() != ':') {
      // One line may hold several statements ("{ .reg .b32 r; mov.b32 r, 1; }").
      std::istringstream stmts(s);
      for (std::string stmt; std::getline(stmts, stmt, ';');) {
        stmt = trim(stmt);
        if (stmt.empty() || stmt.front() == '.') continue;
        ++c.instructions;
        const std::string op = opcode_of(stmt);
        const PtxArithmetic arith = ptx_arithmetic(op);
        c.flops += arith.flops;
        c.fp_arithmetic_ops += arith.fp_ops;
        c.mma_flops += arith.mma_flops;
        bool access = op.starts_with("ld.") || op.starts_with("st.") || op.starts_with("atom.") ||
                      op.starts_with("red.");
        if (!access || op.find(".param") != std::string::npos ||
            op.find(".const") != std::string::npos)
          continue;
        if (op.find(".local") != std::string::npos)
          ++c.local_instructions;
        else
          ++c.memory_instructions;  // .global, .shared, or generic
      }
    }
    if (depth <= 0) break;
  }
  return c;
}

namespace {

/// The disk cache of resources: one line of numbers per (source, arch), next
/// to the compiled kernels, so that a sweep re-run calls NVRTC only for new
/// kernels. A file that does not parse is ignored (and rewritten).
std::filesystem::path cache_path(const runtime::KernelSource& src, const std::string& arch,
                                 const std::string& cache_dir_flag) {
  return std::filesystem::path(runtime::cache_dir(cache_dir_flag)) /
         (src.hash() + "." + arch + ".resources");
}

std::optional<KernelResources> read_cached(const std::filesystem::path& path,
                                           const std::string& arch) {
  std::ifstream in(path);
  KernelResources r;
  r.arch = arch;
  if (in >> r.registers >> r.stack_bytes >> r.spill_store_bytes >> r.spill_load_bytes >>
      r.static_shared_bytes >> r.barriers >> r.ptx.instructions >> r.ptx.memory_instructions >>
      r.ptx.local_instructions >> r.ptx.flops >> r.ptx.fp_arithmetic_ops >> r.ptx.mma_flops)
    return r;
  return std::nullopt;
}

/// NVRTC 12.9 and later cache compiles in the process (--no-cache turns it off).
bool nvrtc_caches_compiles() {
  int major = 0, minor = 0;
  if (std::sscanf(runtime::nvrtc_version().c_str(), "%d.%d", &major, &minor) != 2) return false;
  return major > 12 || (major == 12 && minor >= 9);
}

void write_cached(const std::filesystem::path& path, const KernelResources& r) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp);
    out << r.registers << ' ' << r.stack_bytes << ' ' << r.spill_store_bytes << ' '
        << r.spill_load_bytes << ' ' << r.static_shared_bytes << ' ' << r.barriers << ' '
        << r.ptx.instructions << ' ' << r.ptx.memory_instructions << ' ' << r.ptx.local_instructions
        << ' ' << r.ptx.flops << ' ' << r.ptx.fp_arithmetic_ops << ' ' << r.ptx.mma_flops << '\n';
  }
  // Only saves time: an unwritable cache must not stop a profile.
  std::filesystem::rename(tmp, path, ec);
  if (ec) std::filesystem::remove(tmp, ec);
}

}  // namespace

KernelResources kernel_resources(const runtime::KernelSource& src, const std::string& arch,
                                 const std::string& cache_dir_flag) {
  const std::filesystem::path cached = cache_path(src, arch, cache_dir_flag);
  if (std::optional<KernelResources> r = read_cached(cached, arch)) return *r;
  std::string log;
  // NVRTC 12.9 and later may serve a unit compiled before in this process
  // from their own cache without running ptxas, whose report is then missing
  // (nvFuser turns the cache off for its verbose compiles too): a sweep on a
  // GPU compiles every kernel for its launches before the model asks.
  std::vector<std::string> options = {"--ptxas-options=-v"};
  if (nvrtc_caches_compiles()) options.push_back("--no-cache");
  runtime::NvrtcOutput out = runtime::nvrtc_compile_all(src, arch, options, &log, cache_dir_flag);
  user_assert(log.find("Compiling entry function '") != std::string::npos)
      << "nvrtc " << runtime::nvrtc_version() << " gave no ptxas report for kernel '" << src.name
      << "' on " << arch << " (options --ptxas-options=-v"
      << (options.size() > 1 ? " --no-cache" : "") << "): the model cannot read its registers"
      << (log.empty() ? "; the log was empty" : "; the log was:\n" + log);
  KernelResources r = parse_ptxas_report(log, src.name);
  if (r.arch.empty()) r.arch = arch;
  r.ptx = count_ptx(out.ptx, src.name);
  write_cached(cached, r);
  return r;
}

}  // namespace schedlab::model
