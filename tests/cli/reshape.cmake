# Reshape and view ops (issue 37): the three standard fusions through the
# built-in plugins (reshape_add and rmsnorm_reshape one segment each: the
# pointwise plugin through a flatten, the normalization plugin after a view),
# sanitized; the example script through reshape and permute; sizes that make
# a reshape inexact are refused with the reason. Included by CMakeLists.txt.
set(RESHAPE_CACHE --backend cpu --cache-dir ${CMAKE_CURRENT_BINARY_DIR}/kernel_cache)
cli_expect(reshape_add_one_pointwise_segment 0 "^reshape_add on cpu: .*, 1 segment$"
           exec reshape_add --size N=4,H=6,W=40 ${RESHAPE_CACHE})
cli_expect(rmsnorm_reshape_one_normalization_segment 0 "^  segment 0 \\(normalization: "
           exec rmsnorm_reshape --size N=4,H=6,W=40 ${RESHAPE_CACHE})
foreach(case reshape_add:N=3,H=5,W=7 rmsnorm_reshape:N=3,H=5,W=7 split_heads:B=2,S=5,E=24
             split_heads:B=3,S=7,E=40)
  string(REPLACE ":" ";" parts ${case})
  list(GET parts 0 fusion)
  list(GET parts 1 sizes)
  string(REPLACE "," "_" tag ${sizes})
  string(REPLACE "=" "" tag ${tag})
  cli_expect(reshape_builtin_${fusion}_${tag} 0 "^  sanitizer: no findings$"
             exec ${fusion} --size ${sizes} --sanitize ${RESHAPE_CACHE})
endforeach()
cli_expect(example_split_heads 0 "^  sanitizer: no findings$"
           exec split_heads --schedule ${PROJECT_SOURCE_DIR}/configs/schedules/split_heads.sched
           --size B=3,S=7,E=40 --sanitize ${RESHAPE_CACHE})
# The other two example scripts (propagate_reshape, then one schedule of the
# output): one kernel each, sanitized, at a size that needs several blocks.
foreach(fusion reshape_add rmsnorm_reshape)
  cli_expect(example_${fusion} 0 "^  sanitizer: no findings$"
             exec ${fusion} --schedule ${PROJECT_SOURCE_DIR}/configs/schedules/${fusion}.sched
             --size N=4,H=33,W=65 --sanitize ${RESHAPE_CACHE})
  cli_expect(example_${fusion}_validates 0 "^  output 0 \\(T[0-9]+ \\(y\\)\\): ok"
             exec ${fusion} --schedule ${PROJECT_SOURCE_DIR}/configs/schedules/${fusion}.sched
             --size N=4,H=33,W=65 ${RESHAPE_CACHE})
endforeach()
cli_expect(reshape_inexact_sizes_refused 2
           "reshape of T3 \\(t\\) into T4 \\(h\\): the axis of extent E = 20 is split into 8 pieces"
           exec split_heads --size E=20 ${RESHAPE_CACHE})
# split_heads (a reshape, then a permute of outer axes; the innermost stays
# innermost): one pointwise segment (H6; the transpose plugin sees one group
# by innermost axis), sanitized with vectors and unrolling.
cli_expect(split_heads_one_pointwise_segment 0 "^split_heads on cpu: .*, 1 segment$"
           exec split_heads --size B=2,S=33,E=256 ${RESHAPE_CACHE})
cli_expect(split_heads_pointwise_vector_unroll 0 "^  sanitizer: no findings$"
           exec split_heads --size B=2,S=33,E=256 --plugin pointwise --set vector=4
           --set block=128 --set unroll=2 --sanitize ${RESHAPE_CACHE})
cli_expect(split_heads_show_one_segment 0 "^segment 0: pointwise \\{T2, T3 \\(t\\), T4 \\(h\\), T5 \\(y\\)\\}$"
           show split_heads --segments)
# A permute past the view that moves the innermost axis ([B, S, D, 8]) is
# refused by the pointwise plugin (a tiled transpose's case; the transpose
# plugin takes the permute alone): two segments, sanitized.
cli_expect(split_heads_inner_swap_pointwise_refuses 0
           "pointwise: T2 \\(h\\) axis 3 iterates axis 2 of the reference T3 \\(y\\), not after its axis 3"
           show ${CMAKE_CURRENT_SOURCE_DIR}/split_heads_inner_swap.yaml --segments)
cli_expect(split_heads_inner_swap_two_segments 0 "^  sanitizer: no findings$"
           exec ${CMAKE_CURRENT_SOURCE_DIR}/split_heads_inner_swap.yaml --size B=2,S=5,E=24
           --sanitize ${RESHAPE_CACHE})
# recompute of a view's output: a copy of the view (its root and its merge
# replayed), read by y, validated and sanitized clean.
cli_expect(recompute_view_validates 0 "^  sanitizer: no findings$"
           exec reshape_add --schedule ${CMAKE_CURRENT_SOURCE_DIR}/recompute_view.sched
           --size N=3,H=5,W=7 --sanitize ${RESHAPE_CACHE})
cli_expect(recompute_view_copies_the_view 0
           "^T[0-9]+_l_f32\\[iS[0-9]+\\{N\\}, iS[0-9]+\\{\\(H \\* W\\)\\}\\]   # f_recompute$"
           show reshape_add --schedule ${CMAKE_CURRENT_SOURCE_DIR}/recompute_view.sched
           --stage schedule)
# rmsnorm_reshape with two rows of 262144 (the CUDA snapshot's large size):
# the normalization plugin's multi-pass and recomputing shared paths would
# recompute the view, whose copy propagation does not reach; auto takes the
# grid path, validated and sanitized clean; forcing multi-pass is refused
# with the reason.
cli_expect(rmsnorm_reshape_long_rows_grid 0 "^  sanitizer: no findings$"
           exec rmsnorm_reshape --size N=2,H=512,W=512 --sanitize ${RESHAPE_CACHE})
cli_expect(rmsnorm_reshape_long_rows_one_grid_segment 0 "persistence=grid\\)"
           exec rmsnorm_reshape --size N=2,H=512,W=512 ${RESHAPE_CACHE})
cli_expect(rmsnorm_reshape_multipass_refuses_view 2
           "T1 \\(v\\) on the way is made by a view, whose copy the schedule's propagation does not reach"
           exec rmsnorm_reshape --size N=2,H=512,W=512 --plugin normalization
           --set persistence=none ${RESHAPE_CACHE})
