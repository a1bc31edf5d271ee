# apps/flow-mlp: its model library (gradients, fusion, learning, errors) on host and sim:1, and its
# Fashion-MNIST reader, which the tests feed gzip files they write (hence zlib here too). The app's
# own runs on a slice are tests of apps/flow-mlp/CMakeLists.txt.
find_package(ZLIB QUIET)
if(TARGET tessera_flow_mlp AND ZLIB_FOUND)
  tessera_test(test_flow_mlp test_flow_mlp.cpp test_flow_mlp_reader.cpp LABELS apps)
  target_link_libraries(test_flow_mlp PRIVATE tessera_flow_mlp ZLIB::ZLIB)
endif()
