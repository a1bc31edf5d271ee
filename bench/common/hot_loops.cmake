# Whether each hand-written baseline's hot loops vectorised, from the compiler's own report on the
# compile that produced the baseline's object (issue "honest baselines"): a baseline that runs
# scalar against a vectorised tessera kernel flatters tessera, and nothing in the timings says so.
#
#   add_library(my-baseline OBJECT baseline.cpp)    # the baseline's files, their flags as usual
#   tessera_bench_hot_loops(my-suite my-baseline)   # links it, and generates hot_loops.generated.hpp
#
# Every hot loop is tagged in its source on its `for` line, which must open the body's brace:
#
#   for (std::ptrdiff_t i = 1; i <= nx; ++i) {  // hot-loop: sweep-x
#
# With GCC, each source is compiled with -fdump-tree-vect-optimized-missed=<binary dir>/<lib>-<name>.vect
# (a tree dump, unlike -fopt-info=FILE, starts afresh on each compile rather than appending), and
# hot_loops_header.cmake bakes into the header, for each tag, whether GCC reported "loop
# vectorized" between the tag and the loop's closing brace, or else its first reason not to. Other
# compilers give the suite "unknown". The suite prints it with print_hot_loops (hot_loops.hpp).
set(TESSERA_BENCH_HOT_LOOPS_SCRIPT ${CMAKE_CURRENT_LIST_DIR}/hot_loops_header.cmake)

function(tessera_bench_hot_loops suite baseline)
  get_target_property(sources ${baseline} SOURCES)
  get_target_property(source_dir ${baseline} SOURCE_DIR)
  set(paths)
  set(dumps)
  foreach(src IN LISTS sources)
    get_filename_component(path ${src} ABSOLUTE BASE_DIR ${source_dir})
    list(APPEND paths ${path})
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
      get_filename_component(name ${src} NAME)
      set(dump ${CMAKE_CURRENT_BINARY_DIR}/${baseline}-${name}.vect)
      # The dump is written by the compile itself, so the report always describes the object
      # that is linked. A source property holds for every target that compiles the file (lattice
      # builds its baseline twice), so it applies only when the target is this one.
      set(this_target "$<STREQUAL:$<TARGET_PROPERTY:NAME>,${baseline}>")
      set_property(SOURCE ${src} APPEND PROPERTY COMPILE_OPTIONS
                                                 "$<${this_target}:-fdump-tree-vect-optimized-missed=${dump}>")
      list(APPEND dumps ${dump})
    endif()
  endforeach()
  if(dumps)
    # ccache would restore the object on a hit without writing the dump, leaving an older one.
    set_target_properties(${baseline} PROPERTIES CXX_COMPILER_LAUNCHER "")
  endif()
  set(header ${CMAKE_CURRENT_BINARY_DIR}/hot_loops.generated.hpp)
  # `|` rather than `;` between paths: a `;` would split the -D argument on the command line.
  string(REPLACE ";" "|" path_arg "${paths}")
  string(REPLACE ";" "|" dump_arg "${dumps}")
  add_custom_command(
    OUTPUT ${header}
    COMMAND ${CMAKE_COMMAND} -DSOURCES=${path_arg} -DDUMPS=${dump_arg} -DHEADER=${header}
            "-DCOMPILER=${CMAKE_CXX_COMPILER_ID} ${CMAKE_CXX_COMPILER_VERSION}" -P ${TESSERA_BENCH_HOT_LOOPS_SCRIPT}
    # The objects, not the dumps: a dump is not a declared output of its compile (OBJECT_OUTPUTS
    # could not be limited to this target), but it is written whenever the object is.
    DEPENDS ${paths} $<TARGET_OBJECTS:${baseline}> ${TESSERA_BENCH_HOT_LOOPS_SCRIPT}
    COMMENT "Reading the vectoriser's report on ${baseline}'s hot loops"
    VERBATIM)
  target_sources(${suite} PRIVATE ${header})
  target_include_directories(${suite} PRIVATE ${CMAKE_CURRENT_BINARY_DIR})
  target_link_libraries(${suite} PRIVATE ${baseline})
endfunction()
