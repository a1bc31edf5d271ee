# ctest: runs of the step graph of 16 steps (the default) and of 7 end with the same bytes as one
# step a run (the host between every two steps), t_final included: steps that overshoot it take
# dt = 0 and change nothing.
# cmake -DAPP=tessera-euler2d -DOUT=dir -DDEVICES=spec -P steps_per_run_is_bit_identical.cmake
file(REMOVE_RECURSE ${OUT})
set(common --size 48 --t-final 0.05 --devices ${DEVICES} --layout strided)
foreach(k 1 16 7)
  execute_process(COMMAND ${APP} ${common} --steps-per-run ${k} --out ${OUT}/k${k} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the run of ${k} step(s) a run failed (${rc}): ${out}")
  endif()
  if(NOT out MATCHES "done: [0-9]+ steps to t = 0.050000")
    message(FATAL_ERROR "the run of ${k} step(s) a run did not end at t_final: ${out}")
  endif()
  string(REGEX MATCH "done: [0-9]+ steps" done_${k} "${out}")
endforeach()
foreach(k 16 7)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/k1/final.ckpt ${OUT}/k${k}/final.ckpt
                  RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "${k} steps a run ended with a different state than one step a run")
  endif()
  if(NOT done_${k} STREQUAL done_1)
    message(FATAL_ERROR "${k} steps a run: '${done_${k}}', one step a run: '${done_1}'")
  endif()
endforeach()
message(STATUS "16 and 7 steps a run are bit-identical to one step a run (${done_1})")
