/* schedlab/plugin.h: the C ABI between the schedlab host and a scheduler
 * heuristic plugin (docs/plugins.md is the tour). This header is the whole contract.
 *
 * Pure C99: <stdint.h> and <stddef.h> only, no C++ type, no exception and no
 * allocator crosses the boundary. plugin.hpp wraps it for C++ plugins.
 *
 * Invariants a change must not break:
 *   - Every struct that crosses the boundary starts with `uint32_t
 *     struct_size`. The receiver zero-fills its own copy and copies only
 *     min(its size, struct_size) bytes, so either side may be older.
 *   - Structs and function tables are append-only. A new field or entry goes
 *     at the end and bumps SCHEDLAB_PLUGIN_ABI_MINOR; a changed signature is a
 *     new entry with a `_v2` suffix, the old one stays. Removing or reordering
 *     anything is a new SCHEDLAB_PLUGIN_ABI_MAJOR.
 *
 * Versioning and negotiation (one entry point, as Vulkan's loader does):
 *   The plugin exports exactly one symbol, schedlab_plugin_entry. The host
 *   calls it once after loading, with its API table (struct_size and
 *   abi_version set) and a zero-filled SchedlabPluginInfo whose struct_size is
 *   the host's sizeof. The plugin fills the info (abi_version = the version it
 *   was built against) and returns SCHEDLAB_OK. The host rejects a plugin
 *   whose major differs from its own, or whose minor is newer than its own,
 *   with a message naming both versions.
 *
 * Experimental entries (a leading underscore, `_cache_after_op`) are OUTSIDE
 * the promise: they may change or vanish in any minor; check them for NULL.
 * History: what each minor appended is listed, a section each, in docs/plugins.md.
 *
 * Errors: every call that can fail returns an int32 status, SCHEDLAB_OK (0)
 * or a negative SCHEDLAB_ERR_* code. The message is read with last_error: the
 * host's (SchedlabHostApi.last_error) after a failed host call, the plugin's
 * (SchedlabPluginInfo.last_error) after a failed plugin call.
 *
 * Ownership and lifetimes:
 *   - Handles (SchedlabSegment, SchedlabTensor) are opaque and owned by the
 *     host. They are valid only during the plugin call that received them
 *     (can_schedule, compute_params or schedule); a plugin must not keep them.
 *   - Strings and arrays the host returns stay valid until the plugin call in
 *     progress returns to the host, unless an entry says otherwise. The
 *     plugin never frees them.
 *   - Lists use the two-call idiom of Vulkan: the caller passes a buffer of
 *     `capacity` entries (or NULL and 0); the host writes min(capacity, n)
 *     entries and always stores n, the full count, in *count.
 *   - Strings and tables the plugin hands over in SchedlabPluginInfo (name,
 *     version, description, the parameter schema and its strings) must stay
 *     valid and unchanged until the plugin is unloaded.
 *   - The host API table stays valid for as long as the plugin is loaded.
 *   - Out-structs: the caller zero-fills the struct and sets struct_size to
 *     its own sizeof; the callee writes min(both sizes) bytes and stores that
 *     count in struct_size.
 *   - Arrays of structs (parameter descriptors, parameter values) are laid
 *     out with a stride equal to their first element's struct_size.
 *
 * Threads: the host may call a plugin from several threads at once, each on
 * its own segment. last_error is per thread on both sides.
 */
#ifndef SCHEDLAB_PLUGIN_H
#define SCHEDLAB_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- versions ------------------------------------------------------------ */

/** A layout change: plugins built against another major never load. */
#define SCHEDLAB_PLUGIN_ABI_MAJOR 1
/** Appended fields or entries: a host serves plugins of its minor or older. */
#define SCHEDLAB_PLUGIN_ABI_MINOR 10
/** major in the high 16 bits, minor in the low 16. */
#define SCHEDLAB_PLUGIN_ABI_VERSION_OF(major, minor) \
  ((uint32_t)(((uint32_t)(major) << 16) | ((uint32_t)(minor)&0xffffu)))
#define SCHEDLAB_PLUGIN_ABI_VERSION \
  SCHEDLAB_PLUGIN_ABI_VERSION_OF(SCHEDLAB_PLUGIN_ABI_MAJOR, SCHEDLAB_PLUGIN_ABI_MINOR)
#define SCHEDLAB_PLUGIN_ABI_VERSION_MAJOR(v) ((uint32_t)(v) >> 16)
#define SCHEDLAB_PLUGIN_ABI_VERSION_MINOR(v) ((uint32_t)(v)&0xffffu)

/** The largest row padding pad_shared accepts, in elements (ABI 1.2). */
#define SCHEDLAB_MAX_SHARED_PAD 32
/** The widest XOR swizzle the host entry swizzle accepts (ABI 1.3). */
#define SCHEDLAB_MAX_SWIZZLE_WIDTH 32

/** SchedlabPluginInfo.priority (ABI 1.6) of a plugin that declares none, or built before 1.6. */
#define SCHEDLAB_PRIORITY_DEFAULT 0
/** A priority the segmenter never offers a segment to (a plugin that cannot volunteer, as
 * `script`, which needs a schedule text); any negative one means the same. It still
 * schedules what it is asked to by name. */
#define SCHEDLAB_PRIORITY_NEVER_OFFERED (-1)

/** The one exported symbol's name, for loaders. */
#define SCHEDLAB_PLUGIN_ENTRY_NAME "schedlab_plugin_entry"

/* ---- statuses -------------------------------------------------------------- */

/** The call succeeded. */
#define SCHEDLAB_OK 0
/** A user error: a scheduling primitive refused the call (split factor 0, an
 * axis out of range, ...). last_error holds the primitive's message unchanged,
 * and the host reports it to its caller as the same user error. */
#define SCHEDLAB_ERR_USER (-1)
/** A bug in schedlab (the host's internal_assert fired). */
#define SCHEDLAB_ERR_INTERNAL (-2)
/** An argument the ABI itself rejects: a NULL or foreign handle, an unknown
 * enum value, a negative count. */
#define SCHEDLAB_ERR_INVALID_ARGUMENT (-3)
/** The plugin failed on its own (an exception or error in plugin code). */
#define SCHEDLAB_ERR_PLUGIN (-4)
/** Version negotiation failed. */
#define SCHEDLAB_ERR_VERSION (-5)
/** The entry exists in the table but this host does not implement it. */
#define SCHEDLAB_ERR_UNSUPPORTED (-6)

/* ---- enums (passed as int32_t) ------------------------------------------- */

/** Element types; ir::DataType. */
enum SchedlabDType {
  SCHEDLAB_DTYPE_BOOL = 0,
  SCHEDLAB_DTYPE_I32 = 1,
  SCHEDLAB_DTYPE_I64 = 2,
  SCHEDLAB_DTYPE_F16 = 3,
  SCHEDLAB_DTYPE_BF16 = 4,
  SCHEDLAB_DTYPE_F32 = 5,
  SCHEDLAB_DTYPE_F64 = 6
};

/** How an axis is traversed; ir::IterType. */
enum SchedlabIterType {
  SCHEDLAB_ITER_ITERATION = 0,
  SCHEDLAB_ITER_REDUCTION = 1,
  SCHEDLAB_ITER_BROADCAST = 2
};

/** Hardware binding of a loop axis; ir::ParallelType (apart from loop transforms, as in the IR). */
enum SchedlabParallelType {
  SCHEDLAB_PARALLEL_SERIAL = 0,
  SCHEDLAB_PARALLEL_DIDX = 1,
  SCHEDLAB_PARALLEL_BIDX = 2,
  SCHEDLAB_PARALLEL_BIDY = 3,
  SCHEDLAB_PARALLEL_BIDZ = 4,
  SCHEDLAB_PARALLEL_TIDX = 5,
  SCHEDLAB_PARALLEL_TIDY = 6,
  SCHEDLAB_PARALLEL_TIDZ = 7
};

/** How a loop is emitted; ir::LoopTransform. */
enum SchedlabLoopTransform {
  SCHEDLAB_LOOP_SERIAL = 0,
  SCHEDLAB_LOOP_VECTORIZE = 1,
  SCHEDLAB_LOOP_UNROLL = 2,
  SCHEDLAB_LOOP_UNSWITCH = 3,
  SCHEDLAB_LOOP_BULK = 4
};

/** Where a tensor lives; ir::MemoryType. */
enum SchedlabMemoryType {
  SCHEDLAB_MEMORY_LOCAL = 0,
  SCHEDLAB_MEMORY_SHARED = 1,
  SCHEDLAB_MEMORY_GLOBAL = 2
};

/** The data path of a cache copy; ir::LoadStoreOpType. */
enum SchedlabLoadStoreOp {
  SCHEDLAB_LOAD_SET = 0,
  SCHEDLAB_LOAD_CP_ASYNC = 1,
  SCHEDLAB_LOAD_LDMATRIX = 2,
  SCHEDLAB_LOAD_TMA = 3
};

/** Cache policy of a load; ir::CacheOp. */
enum SchedlabCacheOp {
  SCHEDLAB_CACHE_UNSPECIFIED = 0,
  SCHEDLAB_CACHE_ALL_LEVELS = 1,
  SCHEDLAB_CACHE_STREAMING = 2,
  SCHEDLAB_CACHE_GLOBAL = 3
};

/** The kind of expression that defines a tensor; ir::Expr::Kind, and NONE for a fusion input. */
enum SchedlabOpKind {
  SCHEDLAB_OP_NONE = 0,
  SCHEDLAB_OP_UNARY = 1,
  SCHEDLAB_OP_BINARY = 2,
  SCHEDLAB_OP_WHERE = 3,
  SCHEDLAB_OP_CAST = 4,
  SCHEDLAB_OP_REDUCTION = 5,
  SCHEDLAB_OP_BROADCAST = 6,
  SCHEDLAB_OP_LOAD_STORE = 7,
  SCHEDLAB_OP_PERMUTE = 8,
  SCHEDLAB_OP_MMA = 9, /**< ABI 1.9: fuse_mma's MmaOp */
  SCHEDLAB_OP_VIEW = 10 /**< ABI 1.10: reshape, view, flatten, squeeze, unsqueeze, expand */
};

/** Which tensors segment_tensors lists. */
enum SchedlabTensorSet {
  SCHEDLAB_TENSORS_ALL = 0,    /**< every tensor, in creation order */
  SCHEDLAB_TENSORS_INPUTS = 1, /**< segment inputs, in order */
  SCHEDLAB_TENSORS_OUTPUTS = 2 /**< segment outputs, in order */
};

/** Which domain of a tensor tensor_axis reads. */
enum SchedlabDomain {
  SCHEDLAB_DOMAIN_LOGICAL = 0, /**< the shape, reduction axes included */
  SCHEDLAB_DOMAIN_LOOP = 1,    /**< the scheduled loop nest */
  SCHEDLAB_DOMAIN_ROOT = 2     /**< what the definition indexes (differs after rfactor) */
};

/** Log levels. */
enum SchedlabLogLevel {
  SCHEDLAB_LOG_DEBUG = 0,
  SCHEDLAB_LOG_INFO = 1,
  SCHEDLAB_LOG_WARNING = 2,
  SCHEDLAB_LOG_ERROR = 3
};

/** Kinds of parameter in a plugin's schema. */
enum SchedlabParamKind {
  SCHEDLAB_PARAM_INT = 0,   /**< int64 in [int_min, int_max] */
  SCHEDLAB_PARAM_FLOAT = 1, /**< double in [float_min, float_max] */
  SCHEDLAB_PARAM_BOOL = 2,  /**< 0 or 1, in int_value */
  SCHEDLAB_PARAM_CHOICE = 3, /**< an index into choices, in int_value */
  SCHEDLAB_PARAM_STRING = 4  /**< ABI 1.1: free text, in string_value (never NULL) */
};

/** What an operand of a definition is (SchedlabOperand.kind, ABI 1.7). */
enum SchedlabOperandKind {
  SCHEDLAB_OPERAND_TENSOR = 0,   /**< a tensor of the segment */
  SCHEDLAB_OPERAND_CONSTANT = 1, /**< a compile-time constant (x * 0.5) */
  SCHEDLAB_OPERAND_SIZE = 2      /**< a named size ("K"), known at launch */
};

/* ---- handles --------------------------------------------------------------- */

/** A segment being scheduled: a part of a fusion (today the whole fusion),
 * the concrete sizes it runs at and the target device. Owned by the host. */
typedef struct SchedlabSegment SchedlabSegment;
/** A tensor of a segment. Owned by the host; never dereferenced by a plugin. */
typedef struct SchedlabTensor SchedlabTensor;

/* ---- structs ---------------------------------------------------------------- */

/** What the host says about one tensor (out-struct of tensor_info). */
typedef struct SchedlabTensorInfo {
  uint32_t struct_size;
  int32_t number;         /**< the N of "TN": unique in the segment */
  const char* name;       /**< the user's name ("x") or "" */
  int32_t dtype;          /**< SchedlabDType */
  int32_t op_kind;        /**< SchedlabOpKind of the definition */
  const char* op_name;    /**< "add", "exp", "sum", "max", "broadcast", "set", ... or "" */
  int32_t memory_type;    /**< SchedlabMemoryType */
  int32_t is_input;       /**< 1 for a segment input */
  int32_t is_output;      /**< 1 for a segment output */
  int32_t nlogical;       /**< logical axes, reductions included */
  int32_t nloop;          /**< loop axes */
  int32_t nroot;          /**< root axes (== nlogical unless rfactor made it) */
  int32_t compute_at_pos; /**< inline position, 0 when not inlined */
  int32_t has_reduction;  /**< 1 if any logical axis is a Reduction */
} SchedlabTensorInfo;

/** One axis of a tensor (out-struct of tensor_axis). */
typedef struct SchedlabAxisInfo {
  uint32_t struct_size;
  int32_t id;             /**< fusion-unique IterDomain number */
  int32_t iter_type;      /**< SchedlabIterType */
  int32_t parallel_type;  /**< SchedlabParallelType */
  int32_t loop_transform; /**< SchedlabLoopTransform */
  int32_t reserved0;      /**< zero; keeps extent 8-byte aligned */
  int64_t extent;         /**< the extent at the segment's sizes; -1 if unknown */
  const char* extent_expr; /**< the symbolic extent: "N", "ceilDiv((N * K), 128)" */
} SchedlabAxisInfo;

/** A tensor's definition (out-struct of tensor_definition, ABI 1.7). */
typedef struct SchedlabDefinition {
  uint32_t struct_size;
  int32_t op_kind;       /**< SchedlabOpKind, as tensor_info's */
  int32_t noperands;     /**< tensor_operand's indices: 0 .. noperands-1; 0 for an input */
  int32_t load_store_op; /**< LOAD_STORE: SchedlabLoadStoreOp; else 0 */
  int32_t cache_op;      /**< LOAD_STORE: SchedlabCacheOp; else 0 */
  int32_t naxes;         /**< entries in axes */
  /** PERMUTE: output axis k reads input axis axes[k] (new2old, non-reduction
   * axes); BROADCAST: 1 where output axis k is new, else 0; others: NULL. */
  const int32_t* axes;
} SchedlabDefinition;

/** One operand of a tensor's definition (out-struct of tensor_operand, ABI 1.7). */
typedef struct SchedlabOperand {
  uint32_t struct_size;
  int32_t kind;           /**< SchedlabOperandKind */
  SchedlabTensor* tensor; /**< TENSOR: the operand (x * x: the same handle twice); else NULL */
  double value;           /**< CONSTANT: its value; SIZE: at the segment's sizes (NaN if unknown) */
  const char* text;       /**< as the fusion prints it: "T2", "0.5", "K" */
  int32_t dtype;          /**< SchedlabDType */
  int32_t reserved0;      /**< zero */
} SchedlabOperand;

/** The device a segment is scheduled for (out-struct of device_properties).
 * is_model == 1: a device model's figures (configs/devices), not a driver's:
 * `show --stage profile --device NAME`'s, or on the CPU backend
 * "schedlab-model-sm90", an H100 SXM's (configs/devices/h100.yaml), so a
 * heuristic makes the CPU run's choices as for that GPU. */
typedef struct SchedlabDeviceProperties {
  uint32_t struct_size;
  int32_t is_model;              /**< 1: a device model (above), not a real GPU */
  const char* name;              /**< "NVIDIA H200", "schedlab-model-sm90" */
  const char* arch;              /**< NVRTC target, "sm_90" */
  int32_t cc_major;              /**< compute capability */
  int32_t cc_minor;
  int32_t sm_count;              /**< streaming multiprocessors */
  int32_t warp_size;             /**< threads per warp */
  int32_t max_threads_per_block; /**< block size limit */
  int32_t max_threads_per_sm;    /**< resident threads per SM */
  int32_t registers_per_block;   /**< 32-bit registers one block may use */
  int32_t registers_per_sm;      /**< 32-bit registers per SM */
  uint64_t shared_bytes_per_block;       /**< without opt-in */
  uint64_t shared_bytes_per_block_optin; /**< with opt-in */
  uint64_t shared_bytes_per_sm;          /**< all resident blocks together */
  uint64_t l2_bytes;                     /**< L2 cache */
  uint64_t global_memory_bytes;          /**< device memory */
  double peak_bandwidth_bytes_per_s;     /**< peak DRAM bandwidth */
} SchedlabDeviceProperties;

/** One parameter value. */
typedef struct SchedlabParamValue {
  uint32_t struct_size;
  int32_t kind;        /**< SchedlabParamKind, equal to the schema's */
  int64_t int_value;   /**< INT; BOOL (0 or 1); CHOICE (the index) */
  double float_value;  /**< FLOAT */
  /** STRING (ABI 1.1): never NULL. From the host: valid during the call; from
   * compute_params: until the plugin's next call on this thread. */
  const char* string_value;
} SchedlabParamValue;

/** The parameter values of one call, one per schema entry, in schema order.
 * Owned by the host; valid during the call that receives it. */
typedef struct SchedlabParamSet {
  uint32_t struct_size;
  uint32_t count;              /**< the schema's param_count */
  SchedlabParamValue* values;  /**< stride values[0].struct_size; written only by compute_params */
  /* ---- ABI 1.4: tuned configurations (docs/tuning.md). A plugin reads these
   * only when struct_size covers them (an older host has no such fields). */
  /** compute_params only: the configuration `schedlab tune` found best for
   * this plugin at the segment's fusion and size bucket, one value per schema
   * entry (stride tuned[0].struct_size), valid during the call; NULL when
   * there is none, and in can_schedule and schedule. Copying it into
   * `values` serves the tuned choice, ignoring it keeps the heuristic's. */
  const SchedlabParamValue* tuned;
  /** Where `tuned` comes from, for log lines: "tuned.yaml:12: softmax
   * N=any K=[4096, 8191]"; "" when tuned is NULL. Never NULL from a 1.4 host. */
  const char* tuned_source;
} SchedlabParamSet;

/** One entry of a plugin's parameter schema. */
typedef struct SchedlabParamDesc {
  uint32_t struct_size;
  int32_t kind;             /**< SchedlabParamKind */
  const char* name;         /**< an identifier, [a-z_][a-z0-9_]*, unique in the schema */
  const char* doc;          /**< one line; may be "" */
  int64_t int_default;      /**< INT, BOOL (0/1), CHOICE (an index into choices) */
  int64_t int_min;          /**< INT: smallest value */
  int64_t int_max;          /**< INT: largest value */
  double float_default;     /**< FLOAT */
  double float_min;         /**< FLOAT: smallest value */
  double float_max;         /**< FLOAT: largest value */
  const char* const* choices; /**< CHOICE: choice_count distinct names */
  uint32_t choice_count;    /**< CHOICE: at least 1 */
  const char* string_default; /**< STRING (ABI 1.1): the default, "" for none; not NULL */
} SchedlabParamDesc;

/* ---- the host's API table ----------------------------------------------------
 * Every entry but last_error and log returns a status; on failure
 * last_error() tells why. Tensor arguments must belong to the segment passed
 * with them. Axis arguments are positions in the loop domain; negative counts from the end. */
typedef struct SchedlabHostApi {
  uint32_t struct_size; /**< sizeof the host's table */
  uint32_t abi_version; /**< SCHEDLAB_PLUGIN_ABI_VERSION the host was built with */

  /* errors and logging */
  /** The message of the last failed host call on this thread. Valid until
   * the next host call on this thread; never NULL. */
  const char* (*last_error)(void);
  /** Writes one line to the host's log (stderr by default). */
  void (*log)(int32_t level, const char* message);

  /* segment queries */
  int32_t (*segment_name)(SchedlabSegment* seg, const char** name);
  /** Tensors of a SchedlabTensorSet, in order. */
  int32_t (*segment_tensors)(SchedlabSegment* seg, int32_t which, SchedlabTensor** items,
                             int32_t capacity, int32_t* count);
  /** The concrete value of a named size ("N") at this segment. */
  int32_t (*segment_size)(SchedlabSegment* seg, const char* name, int64_t* value);
  int32_t (*device_properties)(SchedlabSegment* seg, SchedlabDeviceProperties* out);
  int32_t (*tensor_info)(SchedlabSegment* seg, SchedlabTensor* t, SchedlabTensorInfo* out);
  /** Axis `index` of a SchedlabDomain of t. */
  int32_t (*tensor_axis)(SchedlabSegment* seg, SchedlabTensor* t, int32_t domain, int32_t index,
                         SchedlabAxisInfo* out);
  /** The distinct tensor operands of t's definition, in operand order. */
  int32_t (*tensor_producers)(SchedlabSegment* seg, SchedlabTensor* t, SchedlabTensor** items,
                              int32_t capacity, int32_t* count);
  /** Tensors whose definition reads t, each once, in use order. */
  int32_t (*tensor_consumers)(SchedlabSegment* seg, SchedlabTensor* t, SchedlabTensor** items,
                              int32_t capacity, int32_t* count);

  /* loop transforms (TensorView methods) */
  int32_t (*split)(SchedlabSegment* seg, SchedlabTensor* t, int32_t axis, int64_t factor,
                   int32_t inner_split);
  int32_t (*merge)(SchedlabSegment* seg, SchedlabTensor* t, int32_t axis_o, int32_t axis_i);
  /** Moves loop axis old_axes[k] to new_axes[k] for each k < n. */
  int32_t (*reorder)(SchedlabSegment* seg, SchedlabTensor* t, const int32_t* old_axes,
                     const int32_t* new_axes, int32_t n);
  int32_t (*parallelize)(SchedlabSegment* seg, SchedlabTensor* t, int32_t axis,
                         int32_t parallel_type);
  int32_t (*set_loop_transform)(SchedlabSegment* seg, SchedlabTensor* t, int32_t axis,
                                int32_t loop_transform);

  /* memory */
  int32_t (*set_memory_type)(SchedlabSegment* seg, SchedlabTensor* t, int32_t memory_type);
  /** cache_after with a Set copy and a SchedlabCacheOp; the cache in *out. */
  int32_t (*cache_after)(SchedlabSegment* seg, SchedlabTensor* t, int32_t cache_op,
                         SchedlabTensor** out);
  int32_t (*cache_before)(SchedlabSegment* seg, SchedlabTensor* t, SchedlabTensor** out);
  int32_t (*cache_fork)(SchedlabSegment* seg, SchedlabTensor* t, SchedlabTensor** out);
  /** The new producer in *out. */
  int32_t (*rfactor)(SchedlabSegment* seg, SchedlabTensor* t, const int32_t* axes, int32_t n,
                     SchedlabTensor** out);

  /* propagation; a NULL or empty `selected` means every tensor */
  int32_t (*propagate_transformation)(SchedlabSegment* seg, SchedlabTensor* reference,
                                      SchedlabTensor* const* selected, int32_t n_selected);
  /** types: SchedlabParallelType list, NULL/0 = all. transforms:
   * SchedlabLoopTransform list; NULL = the default (Unroll, Unswitch), a
   * non-NULL list with n_transforms 0 = none. pos -1 = every axis. */
  int32_t (*parallelize_all_like)(SchedlabSegment* seg, SchedlabTensor* reference, int32_t pos,
                                  SchedlabTensor* const* selected, int32_t n_selected,
                                  const int32_t* types, int32_t n_types,
                                  const int32_t* transforms, int32_t n_transforms);

  /* inlining */
  int32_t (*inline_at)(SchedlabSegment* seg, SchedlabTensor* t, int32_t pos, int32_t best_effort);
  int32_t (*inline_selected_at)(SchedlabSegment* seg, SchedlabTensor* const* selected,
                                int32_t n_selected, SchedlabTensor* reference, int32_t pos);
  int32_t (*inline_most)(SchedlabSegment* seg, SchedlabTensor* const* selected,
                         int32_t n_selected);

  /* queries */
  int32_t (*max_inline_position)(SchedlabSegment* seg, SchedlabTensor* t, int32_t* pos);
  int32_t (*get_reduction_tvs)(SchedlabSegment* seg, SchedlabTensor** items, int32_t capacity,
                               int32_t* count);
  /** find_reference_for; *out is NULL when there is none. */
  int32_t (*find_reference)(SchedlabSegment* seg, SchedlabTensor** out);
  /** group_inputs_outputs_by_inner_dim, flattened: items[k] is in group
   * groups[k] (0, 1, ...). Both buffers hold `capacity` entries. */
  int32_t (*group_inputs_outputs_by_inner_dim)(SchedlabSegment* seg, SchedlabTensor** items,
                                               int32_t* groups, int32_t capacity,
                                               int32_t* count);
  /** *result = 1 if `of` depends on v (or is v). */
  int32_t (*is_dependency_of)(SchedlabSegment* seg, SchedlabTensor* v, SchedlabTensor* of,
                              int32_t* result);
  /** Tensors on a path from `from` to `to`, in topological order. */
  int32_t (*vals_between)(SchedlabSegment* seg, SchedlabTensor* const* from, int32_t n_from,
                          SchedlabTensor* const* to, int32_t n_to, SchedlabTensor** items,
                          int32_t capacity, int32_t* count);

  /* debug printing; the text lives until the plugin call returns */
  int32_t (*print_tensor)(SchedlabSegment* seg, SchedlabTensor* t, const char** text);
  int32_t (*print_scheduled_fusion)(SchedlabSegment* seg, const char** text);

  /* experimental: outside the compatibility promise (see the top) */
  /** cache_after with a LoadStoreOp other than Set: lowering emits only Set
   * so far, so the meaning of the others may still change. */
  int32_t (*_cache_after_op)(SchedlabSegment* seg, SchedlabTensor* t, int32_t load_store_op,
                             int32_t cache_op, SchedlabTensor** out);
  /** *result = 1 if loop axis a_axis of a and b_axis of b are mapped in the
   * permissive LoopMap (exact = 1: the exact one). */
  int32_t (*_axes_mapped)(SchedlabSegment* seg, SchedlabTensor* a, int32_t a_axis,
                          SchedlabTensor* b, int32_t b_axis, int32_t exact, int32_t* result);

  /* ---- ABI 1.1: schedule scripts (docs/schedule-scripts.md) */
  /** Applies the schedule script at `path` (relative to the host's working
   * directory) to seg, as `schedlab show --schedule` does. `args` ("k=v,k=v",
   * integers; NULL or "" for none) give its {placeholders} values over its
   * params(...); an unknown name is an error. The file is parsed whole, then
   * applied in order; a failing statement leaves those before it applied.
   * Any error: SCHEDLAB_ERR_USER, last_error "file:line:col: message". `log`:
   * NULL, or the applied calls, a line each ("3: split(y, 0, 128)"). */
  int32_t (*apply_schedule_script)(SchedlabSegment* seg, const char* path, const char* args,
                                   const char** log);
  /** Experimental. The names apply_schedule_script's `args` may give for the
   * script at `path`, in order of first appearance, ','-separated, "name" or
   * "name=default"; applies nothing. seg only owns the returned string. */
  int32_t (*_schedule_placeholders)(SchedlabSegment* seg, const char* path, const char** names);

  /* ---- ABI 1.2: shared-memory layout (an older host lacks an entry below: check struct_size) */
  /** Pads each row of t's Shared buffer by `elements` (0 to
   * SCHEDLAB_MAX_SHARED_PAD): the innermost allocation axis's row pitch
   * becomes its extent plus `elements` (no bank conflict reading a tile
   * column-wise). t must already be Shared; 0 removes the padding. */
  int32_t (*pad_shared)(SchedlabSegment* seg, SchedlabTensor* t, int64_t elements);

  /* ---- ABI 1.3 */
  /** XOR-swizzles the rows of t's Shared buffer: with E elements per row (its
   * innermost allocation axis, as for pad_shared), r the row number and u
   * one 4-byte bank word of elements (1 for 4- and 8-byte types), element c
   * of row r is stored at r * E + ((c / u) ^ (r % width)) * u + c % u, so a
   * tile read column-wise meets no bank conflict without padding. width is a
   * power of two from 1 (no swizzle) to SCHEDLAB_MAX_SWIZZLE_WIDTH; t must
   * already be Shared and not padded. Lowering refuses a row that is not a
   * constant multiple of width * u, a one-axis buffer, vectorized copies. */
  int32_t (*swizzle)(SchedlabSegment* seg, SchedlabTensor* t, int64_t width);

  /* ---- ABI 1.5 */
  /** *out = 1 when the segmenter makes this offer (a refusal cuts the segment:
   * one kernel more, docs/segments.md), 0 when the host needs seg whole (a
   * sweep point, exec or show with --plugin: a refusal fails it). Refuse what
   * runs badly but correctly (few long rows) only when 1. */
  int32_t (*offered_by_segmenter)(SchedlabSegment* seg, int32_t* out);
  /** nvFuser's recomputeTv: *out = a new tensor computed by a copy of t's
   * definition, which the n consumers read instead of t (n = 0: every
   * reader). t must not be a reduction, nor it or its producers transformed,
   * bound or inlined; each consumer must read t. */
  int32_t (*recompute)(SchedlabSegment* seg, SchedlabTensor* t, SchedlabTensor* const* consumers,
                       int32_t n, SchedlabTensor** out);

  /* ---- ABI 1.7: a definition, all of it (tensor_producers: distinct tensors only) */
  /** t's definition: its kind, operand count and what no operand says. */
  int32_t (*tensor_definition)(SchedlabSegment* seg, SchedlabTensor* t, SchedlabDefinition* out);
  /** Operand `index` (0 .. noperands-1) of t's definition, in operand order,
   * repeats and scalars kept: x * x is T1, T1; x * 0.5 is T1, 0.5. */
  int32_t (*tensor_operand)(SchedlabSegment* seg, SchedlabTensor* t, int32_t index,
                            SchedlabOperand* out);
  /* ---- ABI 1.8: circular_buffer(t, stages, prefetch), the script's (schedule-scripts.md) */
  int32_t (*circular_buffer)(SchedlabSegment* seg, SchedlabTensor* t, int64_t stages,
                             int64_t prefetch);
  /* ---- ABI 1.9: fuse_mma(t) and mma_tile(t), the script's (schedule-scripts.md) */
  int32_t (*fuse_mma)(SchedlabSegment* seg, SchedlabTensor* t);
  int32_t (*mma_tile)(SchedlabSegment* seg, SchedlabTensor* t);
  /* ---- ABI 1.10, the script's (schedule-scripts.md): swizzle(t, width, bytes) (4 = swizzle; 16
   * XORs 16-byte chunks), grid_persistent(t) (a grid allreduce read in the kernel; the launch
   * checks every block is resident), propagate_reshape() (reshapes replayed on producers) */
  int32_t (*swizzle_bytes)(SchedlabSegment* seg, SchedlabTensor* t, int64_t width, int64_t bytes);
  int32_t (*grid_persistent)(SchedlabSegment* seg, SchedlabTensor* t);
  int32_t (*propagate_reshape)(SchedlabSegment* seg);
} SchedlabHostApi;

/* ---- what a plugin provides ------------------------------------------------- */

typedef struct SchedlabPluginInfo {
  uint32_t struct_size; /**< set by the host; the plugin stores the bytes it wrote */
  uint32_t abi_version; /**< SCHEDLAB_PLUGIN_ABI_VERSION the plugin was built with */
  const char* name;        /**< registry key: an identifier, unique among loaded plugins */
  const char* version;     /**< free form, e.g. "1.2.0" */
  const char* description; /**< one line */
  const SchedlabParamDesc* params; /**< param_count entries (stride params[0].struct_size) */
  uint32_t param_count;
  uint32_t reserved0; /**< zero */

  /** The plugin's message for its last failed call on this thread. Valid
   * until the next call into the plugin on this thread; never NULL. */
  const char* (*last_error)(void);
  /** Whether the plugin can schedule seg with these params: *accepted 1 or
   * 0; on 0 a NUL-terminated reason of at most reason_size bytes in reason. */
  int32_t (*can_schedule)(SchedlabSegment* seg, const SchedlabParamSet* params, int32_t* accepted,
                          char* reason, uint32_t reason_size);
  /** The heuristic's own choice for seg: params arrives holding the
   * defaults; the plugin overwrites the values it chooses. */
  int32_t (*compute_params)(SchedlabSegment* seg, SchedlabParamSet* params);
  /** Schedules seg with params, through the host's primitives. */
  int32_t (*schedule)(SchedlabSegment* seg, const SchedlabParamSet* params);

  /* ---- ABI 1.6. The host reads these only when struct_size covers them: a
   * plugin built against an older minor gets the defaults. */
  /** The segmenter offers a segment to higher priorities first (equal ones
   * by name); negative: never offered. Default SCHEDLAB_PRIORITY_DEFAULT. */
  int32_t priority;
  uint32_t reserved1; /**< zero */
} SchedlabPluginInfo;

/** Marks the entry point exported when everything else is hidden. */
#if defined(_WIN32)
#define SCHEDLAB_PLUGIN_EXPORT __declspec(dllexport)
#elif defined(__GNUC__)
#define SCHEDLAB_PLUGIN_EXPORT __attribute__((visibility("default")))
#else
#define SCHEDLAB_PLUGIN_EXPORT
#endif

typedef int32_t (*SchedlabPluginEntryFn)(const SchedlabHostApi* host, SchedlabPluginInfo* info);

/** The one symbol a plugin exports (SCHEDLAB_PLUGIN defines it for C++).
 * Called once per load, before any other call. It writes info->abi_version
 * and info->last_error first, so that the host can name both versions or
 * read the reason even when it returns an error. */
SCHEDLAB_PLUGIN_EXPORT int32_t schedlab_plugin_entry(const SchedlabHostApi* host,
                                                     SchedlabPluginInfo* info);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* SCHEDLAB_PLUGIN_H */
