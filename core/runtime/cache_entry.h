// A self-checking kernel cache entry (private to core/runtime): each cached
// binary (a CPU unit's .so, a CUDA cubin) has a seal beside it, <file>.sum,
// naming the key it was built for (the hash of its source, options and
// compiler) and the digest of its bytes. An entry whose seal is missing,
// names another key or another digest (truncated, overwritten, copied from
// another kernel) is rebuilt with a warning instead of being trusted.
//
// Seals are written atomically (temporary + rename) before the binary is
// renamed into place, so a concurrent process that sees the binary sees
// its seal.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace schedlab::runtime::cache {

/// FNV-1a (64 bits) of `bytes`, as 16 hex digits (KernelSource::hash's).
std::string digest(std::string_view bytes);

/// Writes `file`.sum for `bytes` built under `key`.
void seal(const std::filesystem::path& file, std::string_view key, std::string_view bytes);

/// "" when `file` is the sealed entry of `key`; else why not ("is missing",
/// "has no seal", "was built for another kernel", "does not match its
/// seal (truncated or overwritten)").
std::string check(const std::filesystem::path& file, std::string_view key);

}  // namespace schedlab::runtime::cache
