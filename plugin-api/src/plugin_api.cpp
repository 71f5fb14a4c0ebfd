// schedlab::plugin_api_impl: the C++ wrapper's out-of-line members (the
// schedlab/plugin_api/*_impl.hpp headers: TensorView, Segment, Param and
// Params, and the entry-point machinery) compiled once, for plugins built
// with SCHEDLAB_PLUGIN_API_SEPARATE. Linked statically into each plugin and
// hidden there, as if the plugin had compiled them itself.
#define SCHEDLAB_PLUGIN_API_SEPARATE
#define SCHEDLAB_PLUGIN_API_INLINE

#include "schedlab/plugin_api/params_impl.hpp"
#include "schedlab/plugin_api/registration_impl.hpp"
#include "schedlab/plugin_api/segment_impl.hpp"
#include "schedlab/plugin_api/tensor_impl.hpp"

// What the headers declare `extern template` for plugins built this way.
template class std::vector<schedlab::plugin_api::ParallelType>;
template class std::vector<schedlab::plugin_api::LoopTransform>;
template class std::vector<schedlab::plugin_api::TensorView>;
template class std::vector<schedlab::plugin_api::Param>;
