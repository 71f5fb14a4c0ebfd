// nvFuser's spelling of a tensor and an axis, for print(tv) and
// print(tv.axis(i)) (docs/python.md): the format of TensorView::toString and
// IterDomain::toString in NVIDIA/Fuser, with schedlab's numbers and size
// names. repr(tv) keeps schedlab's own spelling (ir::tensor_str).
#pragma once

#include <string>

#include "schedlab/ir/ir.h"

namespace schedlab::python {

/// "iS5{( ceilDiv(( S0 * S1 ), 256) )}", "ithreadIdx.x6{256}", "iV7{4}",
/// "rS12{( ceilDiv(S1, 4) )}rf": axis `id` of `tv`.
std::string nvfuser_axis(const ir::TensorView* tv, const ir::IterDomain* id);
/// "T1_g_float[iS4{S0}, iS5{S1}] ca_pos( 1 ) produce_pos( 2 )".
std::string nvfuser_tensor(const ir::TensorView* tv);

}  // namespace schedlab::python
