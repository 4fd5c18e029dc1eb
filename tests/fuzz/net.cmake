# libFuzzer target for the raw drivers' Ethernet/IPv4/UDP/ARP parser (io/net), built from the
# parser's source alone (RF_SANITIZE gives ASan+UBSan in the fuzz build).
add_executable(fuzz_net_frame fuzz_net_frame.c ${PROJECT_SOURCE_DIR}/io/net/net.c)
target_include_directories(fuzz_net_frame PRIVATE ${PROJECT_SOURCE_DIR})
target_compile_options(fuzz_net_frame PRIVATE -fsanitize=fuzzer)
target_link_options(fuzz_net_frame PRIVATE -fsanitize=fuzzer)
target_link_libraries(fuzz_net_frame PRIVATE ringflow_flags)
