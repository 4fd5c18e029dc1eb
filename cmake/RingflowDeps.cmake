# Every external library, found once through pkg-config (all are Debian packages installed by
# scripts/deps.sh). Modules link the imported targets named here; nothing else calls find_*.
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(URCU_QSBR REQUIRED IMPORTED_TARGET liburcu-qsbr)
pkg_check_modules(URCU_CDS REQUIRED IMPORTED_TARGET liburcu-cds)
pkg_check_modules(URING REQUIRED IMPORTED_TARGET liburing)
pkg_check_modules(XDP REQUIRED IMPORTED_TARGET libxdp)
pkg_check_modules(BPF REQUIRED IMPORTED_TARGET libbpf)
pkg_check_modules(DPDK REQUIRED IMPORTED_TARGET libdpdk)
pkg_check_modules(CK REQUIRED IMPORTED_TARGET ck)
pkg_check_modules(JEMALLOC REQUIRED IMPORTED_TARGET jemalloc)
pkg_check_modules(EVENT REQUIRED IMPORTED_TARGET libevent_core libevent_extra)
pkg_check_modules(CRITERION IMPORTED_TARGET criterion)

# What the ringflow library itself links (and what ringflow.pc lists as Requires.private).
set(RF_LIB_DEPS PkgConfig::URCU_QSBR PkgConfig::URCU_CDS PkgConfig::URING PkgConfig::XDP
  PkgConfig::BPF PkgConfig::DPDK Threads::Threads)
set(RF_PC_REQUIRES_PRIVATE "liburcu-qsbr liburcu-cds liburing libxdp libbpf libdpdk")
