add_library(tessera_warnings INTERFACE)
target_compile_options(tessera_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wno-interference-size>
  $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<BOOL:${TESSERA_WERROR}>>:-Werror>)
