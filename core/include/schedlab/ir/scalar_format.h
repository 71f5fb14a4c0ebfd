// Printing of scalar constants, shared by the IR printer and diagnostics.
#pragma once

#include <string>

#include "schedlab/ir/dtype.h"

namespace schedlab::ir {

/// Shortest text that reads back to the same value: "0.5", "1e-05", "inf",
/// "-inf", "nan", "3" (integers), "true"/"false" (bool).
std::string format_scalar(double v, DataType t);

}  // namespace schedlab::ir
