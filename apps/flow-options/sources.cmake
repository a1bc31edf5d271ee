# The pricing library's sources, shared by apps/flow-options and the benchmark's -march=native
# copy (bench/flow/options.cmake).
set(TESSERA_FLOW_OPTIONS_SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/black_scholes.cpp
    ${CMAKE_CURRENT_LIST_DIR}/option_set.cpp
    ${CMAKE_CURRENT_LIST_DIR}/pricer.cpp
    ${CMAKE_CURRENT_LIST_DIR}/pricing_ops.cpp)
