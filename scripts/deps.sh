#!/usr/bin/env bash
# Installs every Debian package ringflow needs to build, test, benchmark and demo.
# One list, one place: the Makefile and .ci/run both call this. Missing packages only;
# `apt-get update` runs once, and only when something is missing.
set -euo pipefail

PACKAGES=(
  # toolchain
  build-essential cmake pkg-config clang llvm lld libclang-rt-14-dev
  # libraries the product links
  libdpdk-dev liburcu-dev libjemalloc-dev libevent-dev liburing-dev
  libxdp-dev libbpf-dev libelf-dev zlib1g-dev
  # the controller's cluster on etcd (--cluster): libcurl speaks etcd's JSON gateway; the
  # cluster tests run a private three-member etcd (etcd-server) and check it with etcdctl
  libcurl4-openssl-dev etcd-server etcd-client
  # benchmark peers and test framework
  libck-dev libcriterion-dev
  # counting what a ring call executes and which lines cross cores (bench/ringlines/lines.sh),
  # and a hash writer's instructions and cache misses (bench/observe/hash_cost.c: its callgrind
  # marks come from valgrind's header, so it must be there at build time)
  valgrind
  # test bed and reports
  iproute2 ethtool sockperf gnuplot-nox procps python3-os-ken
  # stream peer of the load generator's stream mode (bench/echo/modes.sh)
  iperf3
  # non-root checks (tests/nonroot: setcap; setpriv is util-linux)
  libcap2-bin util-linux
  # OpenFlow peers
  openvswitch-testcontroller
  # OVS interop tests (tests/openflow/ovs_bed.sh runs its own daemons in a private directory and
  # never uses the system openvswitch-switch service, so a running one does not conflict)
  openvswitch-switch iputils-ping curl
  # the forwarding bed (bench/fwd): trafgen, dpdk-testpmd
  netsniff-ng dpdk-dev
  # tests/l2fwd: capsh (the no-CAP_NET_RAW case)
  libcap2-bin
  # the controller web page test (headless)
  chromium
  # observing (docs/observing.md): promtool checks the metrics, a real server scrapes them
  prometheus
  # the ABI check (docs/abi.md, tests/abi): abidw/abidiff against abi/ringflow.abi
  abigail-tools
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

if [ "$(id -u)" -ne 0 ]; then
  echo "deps.sh: missing packages: ${missing[*]}; run as root (or: sudo apt-get install -y ${missing[*]})" >&2
  exit 1
fi

echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends "${missing[@]}"
