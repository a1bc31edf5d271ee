# ctest: runs of the step graph of 16 steps (the default) and of 7, and runs of 16 with the step
# graphs captured (recorded once, then replayed), end with the same bytes as one step a run (the
# host between every two steps), t_final included: steps that overshoot it take dt = 0 and change
# nothing.
# cmake -DAPP=tessera-euler2d -DOUT=dir -DDEVICES=spec -P steps_per_run_is_bit_identical.cmake
file(REMOVE_RECURSE ${OUT})
# Long enough for the 16-step graph to run several times: captured, it records on its second run.
set(common --size 48 --t-final 0.4 --devices ${DEVICES} --layout strided)
foreach(k 1 16 7 16c)
  string(REGEX REPLACE "c$" "" steps ${k})
  set(capture)
  if(k MATCHES "c$")
    set(capture --capture)
  endif()
  execute_process(COMMAND ${APP} ${common} --steps-per-run ${steps} ${capture} --out ${OUT}/k${k} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the run of ${k} step(s) a run failed (${rc}): ${out}")
  endif()
  if(NOT out MATCHES "done: [0-9]+ steps to t = 0.400000")
    message(FATAL_ERROR "the run of ${k} step(s) a run did not end at t_final: ${out}")
  endif()
  string(REGEX MATCH "done: [0-9]+ steps" done_${k} "${out}")
  if(capture AND NOT DEVICES STREQUAL "host")
    # On devices the step graphs record and replay: no recording is refused.
    if(NOT out MATCHES "euler steps captured: [1-9][0-9]* recording" OR out MATCHES "not replayed")
      message(FATAL_ERROR "the captured run did not replay its step graphs: ${out}")
    endif()
  endif()
endforeach()
foreach(k 16 7 16c)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/k1/final.ckpt ${OUT}/k${k}/final.ckpt
                  RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "${k} steps a run ended with a different state than one step a run")
  endif()
  if(NOT done_${k} STREQUAL done_1)
    message(FATAL_ERROR "${k} steps a run: '${done_${k}}', one step a run: '${done_1}'")
  endif()
endforeach()
message(STATUS "16 and 7 steps a run, and 16 captured, are bit-identical to one step a run (${done_1})")
