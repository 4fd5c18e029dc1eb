# libFuzzer target for ringflow-switch's key extractor and frame rewrites (ringflow_sw,
# instrumented for coverage; only the target links the fuzzer main).
target_compile_options(ringflow_sw PRIVATE -fsanitize=fuzzer-no-link)
add_executable(fuzz_sw_frame fuzz_sw_frame.c)
target_compile_options(fuzz_sw_frame PRIVATE -fsanitize=fuzzer)
target_link_options(fuzz_sw_frame PRIVATE -fsanitize=fuzzer)
target_link_libraries(fuzz_sw_frame PRIVATE ringflow_sw)
