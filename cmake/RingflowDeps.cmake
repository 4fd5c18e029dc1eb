# Every external library, found once through pkg-config (all are Debian packages installed by
# scripts/deps.sh). Modules link the imported targets named here; nothing else calls find_*.
#
# The core (ring, mempool, hash, runtime, the udp and tcp drivers) needs only libc and liburcu.
# Everything else is optional: -DRF_WITH_<X>=ON (required: configure fails without it), OFF
# (not used even if installed) or AUTO (the default: used when found). What was chosen is
# printed at the end of configure and kept in RF_HAVE_<X>.
#   URING     io_uring driver (liburing)
#   XDP       AF_XDP driver (libxdp, libbpf, and clang to build the XDP program)
#   DPDK      DPDK driver (libdpdk), and the DPDK peers of ringflow-bench
#   CK        Concurrency Kit peers of ringflow-bench (ck_ring, ck_ht)
#   JEMALLOC  jemalloc peer of ringflow-bench
#   LIBEVENT  the OpenFlow controller's REST/web side (libevent); without it no controller
#   CURL      the controller's cluster on etcd (--cluster, libcurl); without it no --cluster
find_package(PkgConfig REQUIRED)
find_package(Threads REQUIRED)

pkg_check_modules(URCU_QSBR REQUIRED IMPORTED_TARGET liburcu-qsbr)
pkg_check_modules(URCU_CDS REQUIRED IMPORTED_TARGET liburcu-cds)
pkg_check_modules(CRITERION IMPORTED_TARGET criterion)

set(RF_OPTIONAL_SUMMARY "")
# rf_optional(X "what it is for" pkg-config-module...): sets RF_HAVE_X and PkgConfig::X.
macro(rf_optional name what)
  set(RF_WITH_${name} AUTO CACHE STRING "${what}: ON, OFF or AUTO (use when found)")
  set_property(CACHE RF_WITH_${name} PROPERTY STRINGS AUTO ON OFF)
  set(RF_HAVE_${name} OFF)
  if(NOT RF_WITH_${name} STREQUAL "OFF")
    if(RF_WITH_${name} STREQUAL "ON")
      pkg_check_modules(${name} REQUIRED IMPORTED_TARGET ${ARGN})
    else()
      pkg_check_modules(${name} IMPORTED_TARGET ${ARGN})
    endif()
    if(${name}_FOUND)
      set(RF_HAVE_${name} ON)
    endif()
  endif()
  if(RF_HAVE_${name})
    string(APPEND RF_OPTIONAL_SUMMARY "  ${name}: yes (${what})\n")
  else()
    string(APPEND RF_OPTIONAL_SUMMARY "  ${name}: no, RF_WITH_${name}=${RF_WITH_${name}} (${what})\n")
  endif()
endmacro()

rf_optional(URING "io_uring driver" liburing)
rf_optional(XDP "AF_XDP driver" libxdp libbpf)
if(RF_HAVE_XDP)
  # The XDP program is compiled with clang -target bpf whatever compiles the rest.
  if(RF_WITH_XDP STREQUAL "ON")
    find_program(RF_BPF_CLANG NAMES clang clang-14 REQUIRED)
  else()
    find_program(RF_BPF_CLANG NAMES clang clang-14)
  endif()
  if(NOT RF_BPF_CLANG)
    set(RF_HAVE_XDP OFF)
    string(APPEND RF_OPTIONAL_SUMMARY "  XDP: switched off: no clang to build the XDP program\n")
  endif()
endif()
rf_optional(DPDK "DPDK driver and bench peers" libdpdk)
rf_optional(CK "Concurrency Kit bench peers" ck)
rf_optional(JEMALLOC "jemalloc bench peer" jemalloc)
rf_optional(LIBEVENT "OpenFlow controller (REST/web)" libevent_core libevent_extra)
if(RF_HAVE_LIBEVENT)
  add_library(PkgConfig::EVENT ALIAS PkgConfig::LIBEVENT)
endif()
rf_optional(CURL "controller cluster on etcd (--cluster)" libcurl)
message(STATUS "ringflow optional parts:\n${RF_OPTIONAL_SUMMARY}")

# What the ringflow library itself links. RF_LIB_DEP_NAMES: the same as plain library names,
# for the installed CMake package and ringflow.pc (Libs.private), so a consumer of the static
# library needs no lookup and a consumer of the shared one sees no dependency at all.
set(RF_LIB_DEPS PkgConfig::URCU_QSBR PkgConfig::URCU_CDS)
set(RF_LIB_DEP_FLAGS ${URCU_QSBR_LDFLAGS} ${URCU_CDS_LDFLAGS})
foreach(x URING XDP DPDK)
  if(RF_HAVE_${x})
    list(APPEND RF_LIB_DEPS PkgConfig::${x})
    list(APPEND RF_LIB_DEP_FLAGS ${${x}_LDFLAGS})
  endif()
endforeach()
list(JOIN RF_LIB_DEP_FLAGS " " RF_PC_LIBS_PRIVATE)
