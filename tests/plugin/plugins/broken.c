/* broken: plugins written against the raw C ABI, each broken one way,
 * selected by a BROKEN_* definition at build time (tests/plugin/CMakeLists.txt).
 * Built without any define it is a valid C plugin that rejects every segment
 * and fails every schedule with an error status. */
#include <string.h>

#include "schedlab/plugin.h"

static const char* last_error(void) { return "error status from a C plugin"; }

static int32_t can_schedule(SchedlabSegment* seg, const SchedlabParamSet* params,
                            int32_t* accepted, char* reason, uint32_t reason_size) {
  (void)seg;
  (void)params;
  *accepted = 0;
  strncpy(reason, "c_plugin never accepts", reason_size - 1);
  reason[reason_size - 1] = '\0';
  return SCHEDLAB_OK;
}

static int32_t compute_params(SchedlabSegment* seg, SchedlabParamSet* params) {
  (void)seg;
  (void)params;
  return SCHEDLAB_OK;
}

static int32_t schedule(SchedlabSegment* seg, const SchedlabParamSet* params) {
  (void)seg;
  (void)params;
  return SCHEDLAB_ERR_PLUGIN;
}

static const char* const choices[] = {"a", "b"};

/* BROKEN_NO_ENTRY exports the entry under a wrong name. */
#ifdef BROKEN_NO_ENTRY
#define ENTRY schedlab_plugin_entry_typo
SCHEDLAB_PLUGIN_EXPORT int32_t ENTRY(const SchedlabHostApi* host, SchedlabPluginInfo* info);
#else
#define ENTRY schedlab_plugin_entry
#endif

SCHEDLAB_PLUGIN_EXPORT int32_t ENTRY(const SchedlabHostApi* host, SchedlabPluginInfo* info) {
  static SchedlabParamDesc params[2];
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
  params[1].struct_size = sizeof params[1];
  params[1].kind = SCHEDLAB_PARAM_CHOICE;
  params[1].name = "order";
  params[1].doc = "which choice";
  params[1].choices = choices;
  params[1].choice_count = 2;
#ifdef BROKEN_BAD_SCHEMA
  params[0].int_default = 2000;
#endif
  memset(&mine, 0, sizeof mine);
  mine.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION;
#ifdef BROKEN_WRONG_MAJOR
  mine.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION_OF(SCHEDLAB_PLUGIN_ABI_MAJOR + 1, 0);
#endif
#ifdef BROKEN_NEWER_MINOR
  mine.abi_version =
      SCHEDLAB_PLUGIN_ABI_VERSION_OF(SCHEDLAB_PLUGIN_ABI_MAJOR, SCHEDLAB_PLUGIN_ABI_MINOR + 1);
#endif
  mine.name = PLUGIN_NAME;
  mine.version = "0.1";
  mine.description = "a plugin written in C";
  mine.params = params;
  mine.param_count = 2;
  mine.last_error = &last_error;
  mine.can_schedule = &can_schedule;
  mine.compute_params = &compute_params;
  mine.schedule = &schedule;
  n = info->struct_size < sizeof mine ? info->struct_size : (uint32_t)sizeof mine;
  mine.struct_size = n;
  memcpy(info, &mine, n);
#ifdef BROKEN_ENTRY_FAILS
  return SCHEDLAB_ERR_PLUGIN;
#else
  return SCHEDLAB_OK;
#endif
}
