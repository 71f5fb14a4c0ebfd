// Self-checking kernel cache entries (cache_entry.h).
#include "cache_entry.h"

#include <unistd.h>

#include <atomic>
#include <fstream>
#include <iterator>
#include <sstream>

#include "schedlab/runtime/kernel.h"

namespace schedlab::runtime::cache {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kSealHeader = "schedlab kernel cache entry 1\n";

bool read_all(const fs::path& p, std::string& out) {
  std::ifstream in(p, std::ios::binary);
  if (!in) return false;
  out.assign(std::istreambuf_iterator<char>(in), {});
  return !in.bad();
}

fs::path seal_path(const fs::path& file) { return fs::path(file.string() + ".sum"); }

}  // namespace

std::string digest(std::string_view bytes) {
  return KernelSource{.source = std::string(bytes)}.hash();
}

void seal(const fs::path& file, std::string_view key, std::string_view bytes) {
  static std::atomic<uint64_t> counter{0};
  const fs::path final_path = seal_path(file);
  const fs::path tmp = final_path.string() + ".tmp." + std::to_string(::getpid()) + "." +
                       std::to_string(counter.fetch_add(1));
  std::error_code ec;
  fs::create_directories(final_path.parent_path(), ec);
  std::string text(kSealHeader);
  text += "key " + std::string(key) + "\ndigest " + digest(bytes) + "\n";
  {
    std::ofstream out(tmp, std::ios::binary);
    out << text;
    if (!out.good()) return;  // the cache only saves time; an unsealed entry is rebuilt
  }
  fs::rename(tmp, final_path, ec);
  if (ec) fs::remove(tmp, ec);
}

std::string check(const fs::path& file, std::string_view key) {
  std::string bytes, seal_text;
  if (!read_all(file, bytes)) return "is missing";
  if (!read_all(seal_path(file), seal_text) || !seal_text.starts_with(kSealHeader))
    return "has no seal (" + seal_path(file).filename().string() + ")";
  std::istringstream in(seal_text.substr(kSealHeader.size()));
  std::string word, sealed_key, sealed_digest;
  in >> word >> sealed_key;
  if (word != "key") return "has a malformed seal";
  in >> word >> sealed_digest;
  if (word != "digest") return "has a malformed seal";
  if (sealed_key != key) return "was built for another kernel (key " + sealed_key + ")";
  if (sealed_digest != digest(bytes)) return "does not match its seal (truncated or overwritten)";
  return "";
}

}  // namespace schedlab::runtime::cache
