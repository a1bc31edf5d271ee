# The options benchmark: the pricing library built again with the benchmark's flags (-O3
# -march=native, like its OpenMP baseline), and the baseline, the only file built with OpenMP.
include(${PROJECT_SOURCE_DIR}/apps/flow-options/sources.cmake)
add_library(tessera_flow_options_bench STATIC EXCLUDE_FROM_ALL ${TESSERA_FLOW_OPTIONS_SOURCES})
target_include_directories(tessera_flow_options_bench PUBLIC ${PROJECT_SOURCE_DIR}/apps)
target_link_libraries(tessera_flow_options_bench PUBLIC tessera::tessera PRIVATE fmt::fmt)
target_compile_options(tessera_flow_options_bench PRIVATE -O3 -march=native)

target_sources(tessera-bench-flow PRIVATE options_openmp.cpp)
target_link_libraries(tessera-bench-flow PRIVATE tessera_flow_options_bench)
if(TESSERA_HAVE_OPENMP)
  set_source_files_properties(options_openmp.cpp PROPERTIES COMPILE_OPTIONS "${OpenMP_CXX_FLAGS}")
  target_link_libraries(tessera-bench-flow PRIVATE OpenMP::OpenMP_CXX)
endif()
