# The options benchmark: the pricing library built again with the benchmark's flags (-O3
# -march=native, like its OpenMP baseline), and the baseline, the only file built with OpenMP.
include(${PROJECT_SOURCE_DIR}/apps/flow-options/sources.cmake)
add_library(tessera_flow_options_bench STATIC EXCLUDE_FROM_ALL ${TESSERA_FLOW_OPTIONS_SOURCES})
target_include_directories(tessera_flow_options_bench PUBLIC ${PROJECT_SOURCE_DIR}/apps)
target_link_libraries(tessera_flow_options_bench PUBLIC tessera::tessera PRIVATE fmt::fmt)
target_compile_options(tessera_flow_options_bench PRIVATE -O3 -march=native)

target_link_libraries(tessera-bench-flow PRIVATE tessera_flow_options_bench)
# The baseline is its own object library so its compile can report on its loops
# (bench/common/hot_loops.cmake); options.cpp prints the verdicts.
add_library(tessera-bench-flow-options-baseline OBJECT options_openmp.cpp)
target_link_libraries(tessera-bench-flow-options-baseline PRIVATE tessera_flow_options_bench tessera::tessera)
target_compile_options(tessera-bench-flow-options-baseline PRIVATE -O3 -march=native)
if(TESSERA_HAVE_OPENMP)
  target_link_libraries(tessera-bench-flow-options-baseline PRIVATE OpenMP::OpenMP_CXX)
endif()
tessera_bench_hot_loops(tessera-bench-flow tessera-bench-flow-options-baseline)
