/* Compiled by the plugin_header_c99 test with gcc -std=c99 -pedantic -Wall
 * -Werror: plugin.h must stay pure C99. It also pins the layout rules that
 * make struct_size negotiation work: struct_size first, abi_version second. */
#include <stddef.h>

#include "schedlab/plugin.h"

/* C99 has no _Static_assert: a negative array size fails the compile. */
#define CHECK(name, cond) typedef char check_##name[(cond) ? 1 : -1]

CHECK(host_size_first, offsetof(SchedlabHostApi, struct_size) == 0);
CHECK(host_version_second, offsetof(SchedlabHostApi, abi_version) == 4);
CHECK(info_size_first, offsetof(SchedlabPluginInfo, struct_size) == 0);
CHECK(info_version_second, offsetof(SchedlabPluginInfo, abi_version) == 4);
CHECK(tensor_info_size_first, offsetof(SchedlabTensorInfo, struct_size) == 0);
CHECK(axis_info_size_first, offsetof(SchedlabAxisInfo, struct_size) == 0);
CHECK(device_size_first, offsetof(SchedlabDeviceProperties, struct_size) == 0);
CHECK(param_value_size_first, offsetof(SchedlabParamValue, struct_size) == 0);
CHECK(param_set_size_first, offsetof(SchedlabParamSet, struct_size) == 0);
CHECK(param_desc_size_first, offsetof(SchedlabParamDesc, struct_size) == 0);
CHECK(version_packs, SCHEDLAB_PLUGIN_ABI_VERSION_MAJOR(SCHEDLAB_PLUGIN_ABI_VERSION_OF(3, 7)) == 3 &&
                         SCHEDLAB_PLUGIN_ABI_VERSION_MINOR(SCHEDLAB_PLUGIN_ABI_VERSION_OF(3, 7)) == 7);

/* A C plugin's view of the table: every entry callable from C. */
int32_t c99_uses_table(const SchedlabHostApi* host, SchedlabSegment* seg, SchedlabTensor* t);
int32_t c99_uses_table(const SchedlabHostApi* host, SchedlabSegment* seg, SchedlabTensor* t) {
  int32_t status = host->split(seg, t, 0, 128, 1);
  if (status != SCHEDLAB_OK) host->log(SCHEDLAB_LOG_ERROR, host->last_error());
  if (host->_axes_mapped == NULL) return SCHEDLAB_ERR_UNSUPPORTED;
  /* ABI 1.1 */
  if (host->apply_schedule_script == NULL) return SCHEDLAB_ERR_UNSUPPORTED;
  status = host->apply_schedule_script(seg, "a.sched", "block=128", NULL);
  if (status != SCHEDLAB_OK) return status;
  /* ABI 1.2 */
  if (host->pad_shared == NULL) return SCHEDLAB_ERR_UNSUPPORTED;
  status = host->pad_shared(seg, t, SCHEDLAB_MAX_SHARED_PAD);
  if (status != SCHEDLAB_OK) return status;
  /* ABI 1.3 */
  if (host->swizzle == NULL) return SCHEDLAB_ERR_UNSUPPORTED;
  return host->swizzle(seg, t, SCHEDLAB_MAX_SWIZZLE_WIDTH);
}
