// Pass: barriers. Inserts __syncthreads() before a statement that reads a
// Shared buffer written earlier in the same block (read after write), and at
// the end of a loop body that both writes and reads a Shared buffer (the next
// iteration's writes must wait for this iteration's reads).
//
// Needs: statements whose only conditionals guard single stores (bound loops
// emit no branch), so a barrier placed between statements is reached by every
// thread of the block; block reductions likewise at points every thread
// reaches. Guarantees: kernel.has_barrier says whether any was inserted or a
// block reduction (whose helper synchronizes) is present.
#pragma once

#include "schedlab/lower/kir.h"

namespace schedlab::lower {

void insert_barriers(kir::Kernel& kernel);

}  // namespace schedlab::lower
