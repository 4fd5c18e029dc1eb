# libFuzzer target for the load generator's wire input (the stream sink and the reply parser).
add_executable(fuzz_lg_sink fuzz_lg_sink.c ${PROJECT_SOURCE_DIR}/apps/echo/lg_sink.c)
target_include_directories(fuzz_lg_sink PRIVATE ${PROJECT_SOURCE_DIR}/apps/echo)
target_compile_options(fuzz_lg_sink PRIVATE -fsanitize=fuzzer)
target_link_options(fuzz_lg_sink PRIVATE -fsanitize=fuzzer)
target_link_libraries(fuzz_lg_sink PRIVATE ringflow_static Threads::Threads)
