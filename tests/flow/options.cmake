# apps/flow-options: its pricing library against Black-Scholes, across backends and sets in flight.
if(TARGET tessera_flow_options)
  tessera_test(test_flow_options test_flow_options.cpp LABELS apps)
  target_link_libraries(test_flow_options PRIVATE tessera_flow_options)
endif()
