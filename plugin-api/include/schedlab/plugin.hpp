// schedlab/plugin.hpp: the C++ face of the plugin ABI, header-only
// (docs/plugins.md, "The C++ wrapper, by topic").
//
// Owns: a TensorView-style API over the host's C table (schedlab/plugin.h),
// the parameter schema builders, and SCHEDLAB_PLUGIN(Class), which defines the
// one exported entry point. May use: plugin.h and the C++17 standard library;
// never a schedlab host header (a plugin links nothing from schedlab).
// Invariants: exceptions live only inside the plugin. A host call that fails
// throws plugin_api::Error carrying the host's status and last_error message;
// SCHEDLAB_PLUGIN catches every exception at the boundary and turns it into a
// status plus the plugin's last_error, so a user error raised by a primitive
// reaches the host with its message intact. Handles (Segment, TensorView) are
// valid only during the call that received them.
//
// A plugin:
//   class MyPlugin : public schedlab::plugin_api::Plugin { ... };
//   SCHEDLAB_PLUGIN(MyPlugin)
// built with schedlab_add_plugin(my_plugin my_plugin.cpp) (hidden visibility).
//
// The wrapper is split by topic under schedlab/plugin_api/; this header
// includes every part, for plugins that want all of it. A plugin that
// includes only the parts it uses compiles faster:
//   plugin_api/types.hpp         enums, dtype_bytes, Error
//   plugin_api/arith.hpp         ceil_div, next_pow2, largest_pow2_at_most
//   plugin_api/host_call.hpp     the host table, checked calls, log
//   plugin_api/device.hpp        DeviceProperties, resident_capacity, starves_device
//   plugin_api/tensor.hpp        AxisInfo, TensorView
//   plugin_api/segment.hpp       Segment
//   plugin_api/alignment.hpp     describe, misaligned, row_operands, ... (tensor alignment)
//   plugin_api/params.hpp        Param, Params, Verdict
//   plugin_api/registration.hpp  Plugin, SCHEDLAB_PLUGIN
//   plugin_api/rules.hpp         the built-in heuristics' shared rules (vector widths, limits)
//   plugin_api/loop.hpp          Loop: a tensor's loop axes by role
//   plugin_api/loop_nests.hpp    loop_nest_of, broadcast_read_by_two_nests (nests before scheduling)
//   plugin_api/reduction_reference.hpp  reduction_reference: a reduction heuristic's opening checks
#pragma once

#include "schedlab/plugin.h"
#include "schedlab/plugin_api/alignment.hpp"
#include "schedlab/plugin_api/arith.hpp"
#include "schedlab/plugin_api/device.hpp"
#include "schedlab/plugin_api/host_call.hpp"
#include "schedlab/plugin_api/loop.hpp"
#include "schedlab/plugin_api/loop_nests.hpp"
#include "schedlab/plugin_api/params.hpp"
#include "schedlab/plugin_api/reduction_reference.hpp"
#include "schedlab/plugin_api/registration.hpp"
#include "schedlab/plugin_api/rules.hpp"
#include "schedlab/plugin_api/segment.hpp"
#include "schedlab/plugin_api/tensor.hpp"
#include "schedlab/plugin_api/types.hpp"
