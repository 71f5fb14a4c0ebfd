/* abi13: a plugin built against ABI 1.3, before tuned configurations: it
 * reports version 1.3, reads only the fields 1.3 has, and chooses block=64
 * in compute_params whatever the host offers (tuned_test.cpp: an older
 * plugin is unaffected by a tuned file). */
#include <string.h>

#include "schedlab/plugin.h"

static const char* last_error(void) { return "abi13 failed"; }

static int32_t can_schedule(SchedlabSegment* seg, const SchedlabParamSet* params,
                            int32_t* accepted, char* reason, uint32_t reason_size) {
  (void)seg;
  (void)params;
  (void)reason;
  (void)reason_size;
  *accepted = 1;
  return SCHEDLAB_OK;
}

/* As 1.3 knew the struct: count and values only. */
static int32_t compute_params(SchedlabSegment* seg, SchedlabParamSet* params) {
  (void)seg;
  if (params->count != 1) return SCHEDLAB_ERR_PLUGIN;
  params->values[0].int_value = 64;
  return SCHEDLAB_OK;
}

static int32_t schedule(SchedlabSegment* seg, const SchedlabParamSet* params) {
  (void)seg;
  (void)params;
  return SCHEDLAB_OK;
}

SCHEDLAB_PLUGIN_EXPORT int32_t schedlab_plugin_entry(const SchedlabHostApi* host,
                                                     SchedlabPluginInfo* info) {
  static SchedlabParamDesc params[1];
  SchedlabPluginInfo mine;
  uint32_t n;
  (void)host;
  memset(params, 0, sizeof params);
  params[0].struct_size = sizeof params[0];
  params[0].kind = SCHEDLAB_PARAM_INT;
  params[0].name = "block";
  params[0].doc = "threads per block";
  params[0].int_default = 128;
  params[0].int_min = 32;
  params[0].int_max = 1024;
  memset(&mine, 0, sizeof mine);
  mine.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION_OF(1, 3);
  mine.name = "abi13";
  mine.version = "0.1";
  mine.description = "a plugin built against ABI 1.3";
  mine.params = params;
  mine.param_count = 1;
  mine.last_error = &last_error;
  mine.can_schedule = &can_schedule;
  mine.compute_params = &compute_params;
  mine.schedule = &schedule;
  n = info->struct_size < sizeof mine ? info->struct_size : (uint32_t)sizeof mine;
  mine.struct_size = n;
  memcpy(info, &mine, n);
  return SCHEDLAB_OK;
}
