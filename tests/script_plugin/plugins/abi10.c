/* abi10: a plugin as it was built against plugin ABI 1.0, before 1.1 appended
 * SchedlabParamValue.string_value, SchedlabParamDesc.string_default and the
 * host's schedule-script entries. It uses the 1.0 layouts of those structs
 * (copied below from the 1.0 header) and knows only the 1.0 part of the
 * host's table, so under a 1.1 host it exercises exactly what an old binary
 * would: the host reads its schema with the 1.0 stride, hands it values of
 * the 1.1 size, and reads back what it writes. It schedules like a 1D
 * pointwise scheduler: merge everything, split by `block`, BIDx/TIDx.
 *
 * ABI10_STRING_PARAM (variant abi10_string): also declares a parameter of
 * kind 4, SCHEDLAB_PARAM_STRING, which a 1.0 plugin cannot mean. */
#include <stddef.h>
#include <string.h>

#include "schedlab/plugin.h"

/* ---- the ABI 1.0 layouts */
typedef struct ParamDesc10 {
  uint32_t struct_size;
  int32_t kind;
  const char* name;
  const char* doc;
  int64_t int_default;
  int64_t int_min;
  int64_t int_max;
  double float_default;
  double float_min;
  double float_max;
  const char* const* choices;
  uint32_t choice_count;
} ParamDesc10;

typedef struct ParamValue10 {
  uint32_t struct_size;
  int32_t kind;
  int64_t int_value;
  double float_value;
} ParamValue10;

/* The 1.0 table ended with _axes_mapped. */
#define HOST_TABLE_SIZE_10 (offsetof(SchedlabHostApi, _axes_mapped) + sizeof(void*))

static SchedlabHostApi host; /* zero-filled; the 1.0 part copied in */
static char error[1024];

static const char* last_error(void) {
  return error;
}

static int32_t fail(int32_t status, const char* what) {
  strncpy(error, what, sizeof error - 1);
  error[sizeof error - 1] = '\0';
  return status;
}

/* A host call: on failure, its message becomes ours. */
#define CHECK(call)                                                      \
  do {                                                                   \
    int32_t status_ = (call);                                            \
    if (status_ != SCHEDLAB_OK) return fail(status_, host.last_error()); \
  } while (0)

static int64_t read_block(const SchedlabParamSet* set) {
  ParamValue10 v;
  size_t stride = set->values[0].struct_size;
  memset(&v, 0, sizeof v);
  memcpy(&v, set->values, stride < sizeof v ? stride : sizeof v);
  return v.int_value;
}

static int32_t can_schedule(SchedlabSegment* seg, const SchedlabParamSet* params, int32_t* accepted,
                            char* reason, uint32_t reason_size) {
  int32_t n = 0;
  (void)params;
  CHECK(host.get_reduction_tvs(seg, NULL, 0, &n));
  *accepted = n == 0;
  if (!*accepted) {
    strncpy(reason, "abi10 schedules fusions without reductions", reason_size - 1);
    reason[reason_size - 1] = '\0';
  }
  return SCHEDLAB_OK;
}

/* Chooses block = 32, written with the 1.0 layout: the host's bigger value
 * struct keeps its string_value. */
static int32_t compute_params(SchedlabSegment* seg, SchedlabParamSet* params) {
  ParamValue10 v;
  size_t stride = params->values[0].struct_size;
  (void)seg;
  memset(&v, 0, sizeof v);
  v.struct_size = (uint32_t)stride;
  v.kind = SCHEDLAB_PARAM_INT;
  v.int_value = 32;
  memcpy(params->values, &v, stride < sizeof v ? stride : sizeof v);
  return SCHEDLAB_OK;
}

static int32_t schedule(SchedlabSegment* seg, const SchedlabParamSet* params) {
  SchedlabTensor* out = NULL;
  SchedlabTensorInfo info;
  CHECK(host.find_reference(seg, &out));
  for (;;) {
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    CHECK(host.tensor_info(seg, out, &info));
    if (info.nloop <= 1) break;
    CHECK(host.merge(seg, out, 0, 1));
  }
  CHECK(host.split(seg, out, 0, read_block(params), 1));
  CHECK(host.parallelize(seg, out, 0, SCHEDLAB_PARALLEL_BIDX));
  CHECK(host.parallelize(seg, out, 1, SCHEDLAB_PARALLEL_TIDX));
  CHECK(host.propagate_transformation(seg, out, NULL, 0));
  CHECK(host.parallelize_all_like(seg, out, -1, NULL, 0, NULL, 0, NULL, 0));
  CHECK(host.inline_most(seg, NULL, 0));
  return SCHEDLAB_OK;
}

SCHEDLAB_PLUGIN_EXPORT int32_t schedlab_plugin_entry(const SchedlabHostApi* h,
                                                     SchedlabPluginInfo* info) {
  static ParamDesc10 params[2];
  SchedlabPluginInfo mine;
  uint32_t n;
  size_t table;
  info->abi_version = SCHEDLAB_PLUGIN_ABI_VERSION_OF(1, 0);
  info->last_error = &last_error;
  if (sizeof(ParamDesc10) != offsetof(SchedlabParamDesc, string_default) ||
      sizeof(ParamValue10) != offsetof(SchedlabParamValue, string_value))
    return fail(SCHEDLAB_ERR_INTERNAL, "abi10: the 1.0 layouts above do not match plugin.h");
  memset(&host, 0, sizeof host);
  table = h->struct_size < HOST_TABLE_SIZE_10 ? h->struct_size : HOST_TABLE_SIZE_10;
  memcpy(&host, h, table);
  memset(params, 0, sizeof params);
  params[0].struct_size = sizeof params[0];
  params[0].kind = SCHEDLAB_PARAM_INT;
  params[0].name = "block";
  params[0].doc = "threads per block";
  params[0].int_default = 128;
  params[0].int_min = 32;
  params[0].int_max = 1024;
  params[1].struct_size = sizeof params[1];
  params[1].kind = SCHEDLAB_PARAM_BOOL;
  params[1].name = "quiet";
  params[1].doc = "unused";
#ifdef ABI10_STRING_PARAM
  params[1].kind = 4;
#endif
  memset(&mine, 0, sizeof mine);
  mine.abi_version = SCHEDLAB_PLUGIN_ABI_VERSION_OF(1, 0);
  mine.name = PLUGIN_NAME;
  mine.version = "1.0.0";
  mine.description = "a plugin built against plugin ABI 1.0";
  mine.params = (const SchedlabParamDesc*)(const void*)params;
  mine.param_count = 2;
  mine.last_error = &last_error;
  mine.can_schedule = &can_schedule;
  mine.compute_params = &compute_params;
  mine.schedule = &schedule;
  n = info->struct_size < sizeof mine ? info->struct_size : (uint32_t)sizeof mine;
  mine.struct_size = n;
  memcpy(info, &mine, n);
  return SCHEDLAB_OK;
}
