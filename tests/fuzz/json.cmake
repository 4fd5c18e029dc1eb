# libFuzzer target for the control socket's JSON reader (runtime/json.c), built from its source.
add_executable(fuzz_json fuzz_json.c ${PROJECT_SOURCE_DIR}/runtime/json.c)
target_include_directories(fuzz_json PRIVATE ${PROJECT_SOURCE_DIR}/include)
target_compile_options(fuzz_json PRIVATE -fsanitize=fuzzer)
target_link_options(fuzz_json PRIVATE -fsanitize=fuzzer)
target_link_libraries(fuzz_json PRIVATE ringflow_flags m)
