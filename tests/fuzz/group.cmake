# libFuzzer target for GROUP_MOD and the group multiparts (of_group.c) and the switch's
# GROUP_MOD checks (sw_group.c), issue 25. ringflow_of and ringflow_sw are instrumented by
# the targets before this one.
add_executable(fuzz_of_group fuzz_of_group.c)
target_compile_options(fuzz_of_group PRIVATE -fsanitize=fuzzer)
target_link_options(fuzz_of_group PRIVATE -fsanitize=fuzzer)
target_link_libraries(fuzz_of_group PRIVATE ringflow_of ringflow_sw)
