// Debug printing of scheduled tensors and fusions, the way nvFuser users read
// them: each loop axis with IterType, extent and binding; the splits and
// merges from logical to loop; memory type and inline position.
#pragma once

#include <string>

#include "schedlab/ir/fusion.h"

namespace schedlab::sched {

/// Multi-line description of one tensor:
///   T3_l_f32[iblockIdx.x12{ceilDiv((N * K), 128)}, ithreadIdx.x13{128}] ca_pos(2)   # y
///    root domain : (...)        (only when it differs from logical)
///     Split: ...                (the rfactored transforms, root -> logical)
///    logical domain : (iS6{N}, iS7{K})
///     Merge: iS6{N} and iS7{K} -> iS11{(N * K)}
///     Split: iS11{(N * K)} by factor 128 -> ...
///    loop domain : (...)
///    memory : Local
std::string print_tensor(const ir::TensorView* tv);
/// Every expression in topological order (ir::expr_str) followed by the
/// domains, transforms and memory of its output (print_tensor without the
/// header line, which expr_str already shows), then the fusion outputs.
std::string print_scheduled_fusion(const ir::Fusion& f);

}  // namespace schedlab::sched
