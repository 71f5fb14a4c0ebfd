# Many devices (issue 38, docs/multi-device.md): `exec --mesh N` starts N
# ranks under mpirun itself, every rank runs the plan, rank 0 validates the
# gathered outputs against the unsharded reference; `show --mesh N` prints the
# plan without starting ranks. Included by CMakeLists.txt.
#
# The multi-rank tests share one RESOURCE_LOCK (mpi) and take 2 processors:
# two oversubscribed jobs of 2-4 ranks on a 2-core machine, or one beside
# other tests, would only slow each other into timeouts. Label mpi, as
# add_mpi_test's (ctest -L mpi).
set(MESH_CACHE --backend cpu --cache-dir ${CMAKE_CURRENT_BINARY_DIR}/kernel_cache)
set(MESH_TESTS)
# A function, not a macro: a macro's ${ARGN} would unescape the regex's \\(.
function(mesh_expect name)
  cli_expect(${name} ${ARGN})
  set(MESH_TESTS ${MESH_TESTS} cli_${name} PARENT_SCOPE)
endfunction()

# The standard sharded fusions validate on their meshes.
mesh_expect(mesh_sum_sharded_2 0 "^  output 0 \\(T[0-9]+ \\(y\\)\\): ok"
            exec sum_sharded --mesh 2 ${MESH_CACHE})
mesh_expect(mesh_sum_sharded_2_allreduce 0 "allreduce\\(sum\\)"
            exec sum_sharded --mesh 2 ${MESH_CACHE})
mesh_expect(mesh_softmax_seqsharded_4 0 "^  output 0 \\(T[0-9]+ \\(y\\)\\): ok"
            exec softmax_seqsharded --mesh 4 ${MESH_CACHE})
mesh_expect(mesh_layernorm_rowsharded_2 0 "^  output 0 \\(T[0-9]+ \\(y\\)\\): ok"
            exec layernorm_rowsharded --mesh 2 ${MESH_CACHE})
mesh_expect(mesh_sum_sharded_2_sanitized 0 "^  sanitizer: no findings$"
            exec sum_sharded --mesh 2 --sanitize ${MESH_CACHE})
mesh_expect(mesh_softmax_seqsharded_2_sanitized 0 "^  sanitizer: no findings$"
            exec softmax_seqsharded --mesh 2 --sanitize ${MESH_CACHE})
mesh_expect(mesh_layernorm_rowsharded_2_sanitized 0 "^  sanitizer: no findings$"
            exec layernorm_rowsharded --mesh 2 --sanitize ${MESH_CACHE})
# Tensor parallel: a matmul segment and a reduction per rank, an allreduce,
# then the cast on every rank.
mesh_expect(mesh_mlp_tp_bf16_2 0 "^  output 0 \\(T[0-9]+ \\(y\\)\\): ok"
            exec mlp_tp_bf16 --mesh 2 ${MESH_CACHE})
# --json: rank 0's one record (what a sweep over meshes reads).
mesh_expect(mesh_json_record 0 "^\\{.*\"mesh\":4,\"rank\":[0-3],\"rank_seconds\":.*\"status\":\"ok\",\"times_us\":\\[[0-9.e+-]+\\]\\}$"
            exec softmax_seqsharded --mesh 4 --json ${MESH_CACHE})
# The sweep's measure: and device model: one time per repetition (the
# slowest rank's), the communications' measured time, and the record's
# config (each key its plan step's), bytes and prediction.
mesh_expect(mesh_json_reps 0 "\"times_us\":\\[[0-9.e+-]+,[0-9.e+-]+,[0-9.e+-]+\\]\\}$"
            exec softmax_seqsharded --mesh 2 --warmup 1 --reps 3 --device h200 --json ${MESH_CACHE})
mesh_expect(mesh_json_reps_comm 0 "\"comm_measured_us\":\\[[0-9.e+-]+,[0-9.e+-]+,[0-9.e+-]+\\]"
            exec softmax_seqsharded --mesh 2 --warmup 1 --reps 3 --device h200 --json ${MESH_CACHE})
mesh_expect(mesh_json_reps_record 0 "\"record\":\".*config..:\\{..s0\\.strategy.*bytes_moved..:[1-9][0-9]*,.*tolerance..:\\{..mode..:..error_bound.*\"predicted_us..:[0-9]"
            exec softmax_seqsharded --mesh 2 --reps 2 --device h200 --json ${MESH_CACHE})
mesh_expect(mesh_text_predicted 0 "^  predicted [0-9.]+ us on h200 \\(limited by [a-z ]+\\): the kernels plus 4 us of communication$"
            exec softmax_seqsharded --mesh 2 --device h200 ${MESH_CACHE})
mesh_expect(mesh_reps_without_mesh 2 "^error: --warmup, --reps and --device time and predict a sharded point. they need --mesh$"
            exec sum_sharded --reps 3 ${MESH_CACHE})
mesh_expect(mesh_reps_zero 2 "--reps: .*1" exec sum_sharded --mesh 2 --reps 0 ${MESH_CACHE})
# A plugin that declines a local step: every rank declines, rank 0 says so.
mesh_expect(mesh_plugin_declines 2
            "^error: sum_sharded on mesh \\[0, 1\\]: step 0 \\(sum_sharded_l0\\): transpose schedules fusions without reductions"
            exec sum_sharded --mesh 2 --plugin transpose ${MESH_CACHE})
# A mesh of one needs no launcher: the same path with the self communicator.
mesh_expect(mesh_sum_sharded_1 0 "^sum_sharded on cpu: .*mesh \\[0\\] \\(1 ranks, self\\)"
            exec sum_sharded --mesh 1 ${MESH_CACHE})

# Mutation self-tests: the gathered outputs (--mutate), a wrong local kernel
# (step 0's partial sums on the last rank) and a wrong collective (step 1,
# the allreduce's result on the last rank: y is replicated, so rank 0 checks
# every rank's copy) all fail validation on rank 0.
mesh_expect(mesh_mutate_gathered 1 "wrong_result under mutation scale:0.99"
            exec sum_sharded --mesh 2 --mutate scale:0.99 ${MESH_CACHE})
mesh_expect(mesh_mutate_local_kernel 1 "^  output 0 \\(T[0-9]+ \\(y\\)\\): wrong_result"
            exec sum_sharded --mesh 2 --mutate-step 0:scale:2 ${MESH_CACHE})
mesh_expect(mesh_mutate_collective 1 "^  output 0 \\(T[0-9]+ \\(y\\), rank 1's copy\\): wrong_result"
            exec sum_sharded --mesh 2 --mutate-step 1:one:0.5 ${MESH_CACHE})

# User errors: one message, before any rank starts.
mesh_expect(mesh_zero 2 "--mesh: .*0" exec sum_sharded --mesh 0 ${MESH_CACHE})
mesh_expect(mesh_garbage 2 "--mesh" exec sum_sharded --mesh two ${MESH_CACHE})
mesh_expect(mesh_indivisible 2 "^error: fusion 'sum_sharded': T0 \\(x\\) axis 1 is sharded over 4 devices. expected its extent K to be a multiple of 4, found K = 6$"
            exec sum_sharded --mesh 4 --size N=3,K=6 ${MESH_CACHE})
mesh_expect(mesh_mutate_step_without_mesh 2 "^error: --mutate-step .* needs --mesh$"
            exec sum_sharded --mutate-step 0:zero ${MESH_CACHE})
mesh_expect(mesh_mutate_step_out_of_range 2
            "^error: --mutate-step 9:zero: the plan of sum_sharded on 2 ranks has steps 0 to 1, found step 9$"
            exec sum_sharded --mesh 2 --mutate-step 9:zero ${MESH_CACHE})
mesh_expect(mesh_json_without_mesh 2 "^error: --json prints the record of a sharded point. it needs --mesh$"
            exec sum_sharded --json ${MESH_CACHE})
mesh_expect(mesh_inputs 2 "^error: --inputs with --mesh: not supported yet"
            exec sum_sharded --mesh 2 --inputs x.npy ${MESH_CACHE})
mesh_expect(show_mesh_segments 2 "^error: --segments shows one fusion's segments"
            show sum_sharded --mesh 2 --segments)
mesh_expect(show_mesh_profile_json 2 "^error: --format json with --mesh"
            show sum_sharded --mesh 2 --stage profile --format json)
# A file's mesh: without --mesh: one rank, unsharded, as before issue 38.
mesh_expect(mesh_file_without_flag 0 "^sum_sharded on cpu: sizes N=4, K=16, 1 segment$"
            exec sum_sharded ${MESH_CACHE})
# Started by a launcher with another world size than --mesh.
add_test(NAME cli_mesh_world_mismatch
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh 2
                 "^error: --mesh 2: this process was started with 1 rank .*expected 2"
                 -- ${MPIEXEC_EXECUTABLE} -n 1 --oversubscribe --allow-run-as-root
                 --mca btl self,vader ${SCHEDLAB_CLI} exec sum_sharded --mesh 2 ${MESH_CACHE})
# The other ranks of a wrong world name their rank.
add_test(NAME cli_mesh_world_mismatch_rank_prefix
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/expect_exit.sh 2
                 "^rank 2: error: --mesh 2: this process was started with 3 ranks "
                 -- ${MPIEXEC_EXECUTABLE} -n 3 --oversubscribe --allow-run-as-root
                 --mca btl self,vader ${SCHEDLAB_CLI} exec sum_sharded --mesh 2 ${MESH_CACHE})
list(APPEND MESH_TESTS cli_mesh_world_mismatch cli_mesh_world_mismatch_rank_prefix)

# show --mesh: the plan, each local step's kernel IR under it; no ranks.
mesh_expect(show_mesh_kir_allreduce 0 "allreduce\\(sum\\)"
            show sum_sharded --mesh 2 --stage kir)
mesh_expect(show_mesh_kir_step_kernel 0 "^    kernel \\(int32 indices\\)$"
            show sum_sharded --mesh 2 --stage kir)
mesh_expect(show_mesh_cuda 0 "__global__" show softmax_seqsharded --mesh 4 --stage cuda)
mesh_expect(show_mesh_profile 0 "^step 1: allreduce\\(sum\\) T1 -> T1: predicted [0-9.]+ us$"
            show sum_sharded --mesh 2 --stage profile)
mesh_expect(show_mesh_profile_total 0 "^comm 12 us predicted$"
            show softmax_seqsharded --mesh 4 --stage profile --device h200)
mesh_expect(show_mesh_profile_step 0 "^      predicted +[0-9.]+ us, limited by"
            show sum_sharded --mesh 2 --stage profile)
mesh_expect(show_mesh_schedule 0 "^    Fusion softmax_seqsharded_l1_s0 \\(scheduled\\)$"
            show softmax_seqsharded --mesh 2 --stage schedule)

set_tests_properties(${MESH_TESTS} PROPERTIES RESOURCE_LOCK mpi PROCESSORS 2 LABELS mpi)
