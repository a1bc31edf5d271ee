if(TESSERA_HAVE_TBB)
  target_link_libraries(tessera-bench-flow PRIVATE TBB::tbb)
  target_compile_definitions(tessera-bench-flow PRIVATE TESSERA_BENCH_TBB=1)
endif()
