# The MLP training steps (mlp.cpp): the flows of apps/flow-mlp against a loop of the same OpenBLAS
# calls. No contraction into fused multiply-adds in the loop's file: tessera_flow_mlp is built
# without -march=native, so the loop then rounds as the flows do and ends at the same weights bit
# for bit (with FMAs a ReLU at z ~ 1e-8 can flip, and the runs part ways); the loops it affects
# are a few percent of a step.
if(TARGET tessera_flow_mlp AND TESSERA_HAVE_OPENBLAS)
  target_link_libraries(tessera-bench-flow PRIVATE tessera_flow_mlp PkgConfig::OPENBLAS)
  target_compile_definitions(tessera-bench-flow PRIVATE TESSERA_BENCH_FLOW_MLP=1)
  set_source_files_properties(mlp.cpp PROPERTIES COMPILE_OPTIONS $<$<CXX_COMPILER_ID:GNU,Clang>:-ffp-contract=off>)
endif()
