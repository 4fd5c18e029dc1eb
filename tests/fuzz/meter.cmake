# libFuzzer target for meters: of_mparse, the builders, the switch's meter handler and
# buckets (ringflow_of and ringflow_sw are instrumented by the files before this one).
add_executable(fuzz_of_meter fuzz_of_meter.c)
target_compile_options(fuzz_of_meter PRIVATE -fsanitize=fuzzer)
target_link_options(fuzz_of_meter PRIVATE -fsanitize=fuzzer)
target_link_libraries(fuzz_of_meter PRIVATE ringflow_of ringflow_sw)
