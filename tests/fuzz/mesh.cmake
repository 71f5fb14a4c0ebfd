# `schedlab fuzz --mesh N` (docs/fuzz.md, "Many devices"): sharded cases run
# as N ranks, started under mpirun by the command itself. Included by
# CMakeLists.txt. Like the CLI's --mesh tests (tests/cli/mesh.cmake) they
# take 2 processors, share RESOURCE_LOCK mpi and carry label mpi.
set(FUZZ_MESH_TESTS)
function(fuzz_mesh name code regex)
  add_test(NAME fuzz_mesh_${name} COMMAND ${EXPECT} ${code} ${regex} -- ${CLI} fuzz ${ARGN})
  set(FUZZ_MESH_TESTS ${FUZZ_MESH_TESTS} fuzz_mesh_${name} PARENT_SCOPE)
endfunction()

# 20 cases of seed 11 on 2 ranks: nothing wrong, racy or crashed...
fuzz_mesh(seed_11 0 "^20 cases on 2 ranks: [0-9]+ validated, .*, 0 wrong, 0 racy, 0 crashed, 0 internal, 0 timeout$"
          --mesh 2 --cases 20 --seed 11 ${CACHE})
# ...and some validated cases ran a collective.
fuzz_mesh(seed_11_communicates 0 "^with communication: [1-9][0-9]* validated cases? \\(.*all(reduce|gather)"
          --mesh 2 --cases 20 --seed 11 ${CACHE})
# The same, sanitized (a finding would be class racy).
fuzz_mesh(seed_11_sanitized 0 "^10 cases on 2 ranks: [1-9][0-9]* validated, .*, 0 wrong, 0 racy, 0 crashed"
          --mesh 2 --cases 10 --seed 11 --sanitize ${CACHE})
# Four ranks.
fuzz_mesh(mesh_4 0 "^8 cases on 4 ranks: [1-9][0-9]* validated, .*, 0 wrong, 0 racy, 0 crashed"
          --mesh 4 --cases 8 --seed 5 ${CACHE})
# A mutation validation must notice: one:1e-6 moves one element by a relative
# 1e-6, inside the error bounds, so its mutants survive and the run fails
# (as tests/mutation's fuzz_survivor); one:1 is caught every time.
fuzz_mesh(mutate_survivor 1 "^survived case [0-9]+ \\(mesh 2\\): mutation one:1e-06 survived validation"
          --mesh 2 --cases 20 --seed 11 --mutate one:1e-6 ${CACHE})
fuzz_mesh(mutate_killed 0 "^20 cases on 2 ranks: .*. mutants: [1-9][0-9]* killed, 0 survived"
          --mesh 2 --cases 20 --seed 11 --mutate one:1 ${CACHE})
# A kept case replays with exec --mesh: the survivors of one:1e-6 are kept
# whole with their mesh and shard keys; exec --mesh 2 runs the first and
# validates it.
add_test(NAME fuzz_mesh_kept_case_replays
         COMMAND sh -c "rm -rf \"$1\" && \"$0\" fuzz --mesh 2 --cases 20 --seed 11 --mutate one:1e-6 --keep \"$1\" --cache-dir \"$2\" >/dev/null; f=$(ls \"$1\"/survived-*-mesh2.yaml | head -n 1) && grep -q '^shard: ' \"$f\" && \"$0\" exec \"$f\" --mesh 2 --backend cpu --cache-dir \"$2\""
                 ${CLI} ${CMAKE_CURRENT_BINARY_DIR}/mesh_keep ${CMAKE_CURRENT_BINARY_DIR}/kernel_cache)
set_tests_properties(fuzz_mesh_kept_case_replays PROPERTIES PASS_REGULAR_EXPRESSION
  "on cpu: sizes .*, mesh \\[0, 1\\] \\(2 ranks, mpi\\).*output 0 \\([^\n]*\\): ok")
list(APPEND FUZZ_MESH_TESTS fuzz_mesh_kept_case_replays)
# No hang: a case past --timeout on a rank (here every case that crosses the
# watchdog's 0.1 s tick) ends that rank with a message and the launcher the
# job, exit 1.
fuzz_mesh(timeout_ends_the_ranks 1 "^error: fuzz --mesh: rank [01]: case [0-9]+ ran past --timeout \\(0.001 s\\)"
          --mesh 2 --cases 50 --seed 11 --timeout 0.001 ${CACHE})
# Bad arguments: --mesh 0 before any rank starts.
fuzz_cli(mesh_zero 2 "--mesh: expected an integer in \\[1, 1024\\], found '0'" --mesh 0)

set_tests_properties(${FUZZ_MESH_TESTS} PROPERTIES RESOURCE_LOCK mpi PROCESSORS 2 LABELS "mpi;fuzz_mesh"
                     TIMEOUT 600)
