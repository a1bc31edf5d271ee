# ctest (label mpi): tessera-euler2d on NP ranks writes the checkpoints, bit for bit, that it
# writes on one process; and each run's halfway checkpoint restarts on the other's rank count into
# the same final state.
# cmake -DAPP=tessera-euler2d -DMPIEXEC=mpiexec -DNP=2 -DOUT=dir -DDEVICES=spec -DLAYOUT=name -DPNG=ON|OFF
#       -P ranks_are_bit_identical.cmake
file(REMOVE_RECURSE ${OUT})
set(common --size 64 --steps 20 --devices ${DEVICES} --layout ${LAYOUT})
set(mpirun ${MPIEXEC} --oversubscribe --bind-to none -np ${NP})
function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the ${what} failed (${rc})")
  endif()
endfunction()
function(same a b what)
  execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${a} ${b} RESULT_VARIABLE differ)
  if(NOT differ EQUAL 0)
    message(FATAL_ERROR "${what}: ${a} and ${b} differ")
  endif()
endfunction()

run("run on one process" ${APP} ${common} --checkpoint-every 10 --out ${OUT}/one)
run("run on ${NP} ranks" ${mpirun} ${APP} ${common} --checkpoint-every 10 --out ${OUT}/ranks)
foreach(f checkpoint_000010.ckpt final.ckpt)
  same(${OUT}/one/${f} ${OUT}/ranks/${f} "${NP} ranks against one process")
endforeach()
if(PNG)
  same(${OUT}/one/density_000020.png ${OUT}/ranks/density_000020.png "${NP} ranks against one process")
endif()
run("restart on ${NP} ranks" ${mpirun} ${APP} ${common} --restart ${OUT}/one/checkpoint_000010.ckpt
    --out ${OUT}/restarted-on-ranks)
same(${OUT}/one/final.ckpt ${OUT}/restarted-on-ranks/final.ckpt "restarted on ${NP} ranks from one process's checkpoint")
run("restart on one process" ${APP} ${common} --restart ${OUT}/ranks/checkpoint_000010.ckpt
    --out ${OUT}/restarted-on-one)
same(${OUT}/one/final.ckpt ${OUT}/restarted-on-one/final.ckpt "restarted on one process from the ranks' checkpoint")
message(STATUS "${NP} ranks write one process's bits, and restart from and into it")
