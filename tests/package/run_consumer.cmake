# Installs tessera into WORK_DIR/prefix and builds and runs the consumer project against it.
file(REMOVE_RECURSE "${WORK_DIR}")
set(prefix "${WORK_DIR}/prefix")

function(step)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "step failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

step(${CMAKE_COMMAND} --install "${TESSERA_BUILD_DIR}" --prefix "${prefix}")
step(${CMAKE_COMMAND} -S "${CONSUMER_SOURCE}" -B "${WORK_DIR}/build" -G "${GENERATOR}"
     -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_BUILD_TYPE=Release)
step(${CMAKE_COMMAND} --build "${WORK_DIR}/build")
step("${WORK_DIR}/build/consumer")
step("${WORK_DIR}/build/consumer_c")
step("${WORK_DIR}/build/heat")
step(${CMAKE_COMMAND} -E env TESSERA_DEVICES=sim:2 "${WORK_DIR}/build/heat")
# Each docs page's whole program (consumer/pages), on the host alone and on two sim devices. They
# run in the build folder: the io page's program writes and removes a checkpoint where it runs.
file(GLOB page_programs "${CONSUMER_SOURCE}/pages/*.cpp")
foreach(program IN LISTS page_programs)
  get_filename_component(page "${program}" NAME_WE)
  foreach(devices IN ITEMS host sim:2)
    step(${CMAKE_COMMAND} -E chdir "${WORK_DIR}/build" ${CMAKE_COMMAND} -E env TESSERA_DEVICES=${devices}
         "${WORK_DIR}/build/page_${page}")
  endforeach()
endforeach()
# The installed command starts with nothing but its RUNPATH to find libtessera.
if(EXISTS "${prefix}/bin/tessera")
  step(${CMAKE_COMMAND} -E env --unset=LD_LIBRARY_PATH "${prefix}/bin/tessera" devices --select host)
endif()
