# ctest: a run checkpointed halfway and restarted from there ends with the same bytes as the run
# that did not stop (the final checkpoint holds the whole state, the time and the step).
# cmake -DAPP=tessera-euler2d -DOUT=dir -DDEVICES=spec -DPNG=ON|OFF -P restart_is_bit_identical.cmake
file(REMOVE_RECURSE ${OUT})
set(common --size 48 --steps 24 --devices ${DEVICES} --layout strided)
execute_process(COMMAND ${APP} ${common} --checkpoint-every 12 --out ${OUT}/straight RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the straight run failed (${rc})")
endif()
execute_process(COMMAND ${APP} ${common} --restart ${OUT}/straight/checkpoint_000012.ckpt --out ${OUT}/restarted
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the restarted run failed (${rc})")
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${OUT}/straight/final.ckpt ${OUT}/restarted/final.ckpt
                RESULT_VARIABLE differ)
if(NOT differ EQUAL 0)
  message(FATAL_ERROR "the restarted run ended with a different state than the straight run")
endif()
set(expected final.ckpt)
if(PNG)
  list(APPEND expected density_000000.png density_000024.png)
endif()
foreach(f ${expected})
  if(NOT EXISTS ${OUT}/straight/${f})
    message(FATAL_ERROR "the run did not write ${f}")
  endif()
endforeach()
message(STATUS "restart from step 12 is bit-identical at step 24")
