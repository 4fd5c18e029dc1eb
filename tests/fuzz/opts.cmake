# libFuzzer target for the apps' shared option parser (runtime/opts.c and the CPU lists of
# runtime/cpulist.c, built here for coverage); the rest (its error lines) from the library.
add_executable(fuzz_opts fuzz_opts.c ${PROJECT_SOURCE_DIR}/runtime/opts.c
  ${PROJECT_SOURCE_DIR}/runtime/cpulist.c)
target_include_directories(fuzz_opts PRIVATE ${PROJECT_SOURCE_DIR}/include
  ${PROJECT_SOURCE_DIR}/runtime)
target_compile_options(fuzz_opts PRIVATE -fsanitize=fuzzer)
target_link_options(fuzz_opts PRIVATE -fsanitize=fuzzer)
target_link_libraries(fuzz_opts PRIVATE ringflow_flags ringflow_static)
