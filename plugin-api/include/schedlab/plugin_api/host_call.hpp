// schedlab/plugin_api/host_call.hpp: the host's table as the plugin holds
// it, and the calls through it: a failed call throws Error with the host's
// message; an entry an older host lacks throws Error(UNSUPPORTED). Part of
// the C++ wrapper (schedlab/plugin.hpp includes every part).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/types.hpp"

namespace schedlab::plugin_api {

namespace detail {

/// The host's table as this plugin knows it: zero-filled, then the bytes
/// both sides know copied in, so entries an older host lacks read as null.
inline SchedlabHostApi& host_table() {
  static SchedlabHostApi table;
  return table;
}

inline void bind_host(const SchedlabHostApi* host) {
  SchedlabHostApi& t = host_table();
  std::memset(&t, 0, sizeof t);
  size_t n = std::min<size_t>(host->struct_size, sizeof t);
  std::memcpy(&t, host, n);
  t.struct_size = static_cast<uint32_t>(n);
}

/// Throws Error for a negative status, with the host's message.
inline void check(int32_t status) {
  if (status >= 0) return;
  const SchedlabHostApi& t = host_table();
  throw Error(status, t.last_error != nullptr ? t.last_error() : "host call failed");
}

/// The host entry `member`, or Error(UNSUPPORTED) when the host is too old for it.
template <typename F>
F entry(F SchedlabHostApi::*member, const char* name) {
  F fn = host_table().*member;
  if (fn == nullptr) {
    uint32_t v = host_table().abi_version;
    throw Error(
        SCHEDLAB_ERR_UNSUPPORTED,
        std::string("the host (ABI ") + std::to_string(SCHEDLAB_PLUGIN_ABI_VERSION_MAJOR(v)) + "." +
            std::to_string(SCHEDLAB_PLUGIN_ABI_VERSION_MINOR(v)) + ") has no '" + name + "' entry");
  }
  return fn;
}

template <typename F, typename... Args>
void call(F SchedlabHostApi::*member, const char* name, Args... args) {
  check(entry(member, name)(args...));
}

/// Runs a list entry with the two-call idiom: count, then fill.
template <typename F, typename... Args>
std::vector<SchedlabTensor*> list(F SchedlabHostApi::*member, const char* name, Args... args) {
  int32_t n = 0;
  check(entry(member, name)(args..., nullptr, 0, &n));
  std::vector<SchedlabTensor*> items(static_cast<size_t>(n));
  if (n > 0) check(entry(member, name)(args..., items.data(), n, &n));
  items.resize(static_cast<size_t>(n));
  return items;
}

}  // namespace detail

/// Writes one line to the host's log.
inline void log(LogLevel level, const std::string& message) {
  if (detail::host_table().log != nullptr)
    detail::host_table().log(static_cast<int32_t>(level), message.c_str());
}

}  // namespace schedlab::plugin_api
