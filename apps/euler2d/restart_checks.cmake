# ctest: a checkpoint of one problem is refused as the start of another, before any step runs.
# cmake -DAPP=tessera-euler2d -DOUT=dir -P restart_checks.cmake
file(REMOVE_RECURSE ${OUT})
execute_process(COMMAND ${APP} --problem shock-bubble --size 16 --steps 2 --devices host --out ${OUT}/first
                RESULT_VARIABLE rc OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the first run failed (${rc})")
endif()
execute_process(COMMAND ${APP} --problem shock --size 16 --steps 4 --devices host
                        --restart ${OUT}/first/final.ckpt --out ${OUT}/second
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "a shock-bubble checkpoint was accepted as the start of a planar shock run:\n${out}")
endif()
if(NOT err MATCHES "was saved from another problem")
  message(FATAL_ERROR "the refusal does not say why:\n${err}")
endif()
if(out MATCHES "step ")
  message(FATAL_ERROR "the refused run stepped:\n${out}")
endif()
message(STATUS "a checkpoint of another problem is refused: ${err}")
