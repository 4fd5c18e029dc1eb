/*
 * io/xdp/offload_pvt.h: between the xdp driver (io/xdp.c) and its offload table
 * (io/xdp/offload.c): the driver makes a table when it attaches its program and destroys it
 * before detaching; the table's functions (ringflow/offload.h) find it through the driver.
 */
#ifndef RINGFLOW_IO_XDP_OFFLOAD_PVT_H
#define RINGFLOW_IO_XDP_OFFLOAD_PVT_H

struct bpf_object;
struct rf_io_dev;
struct rf_xsk_prog;
struct rf_xdp_ofl;

/* Sizes the program's per-CPU microflow cache for this host's possible CPUs (within
 * RF_OFL_CACHE_BYTES a port); called on the opened object before it is loaded. */
void rf_xdp_ofl_size(struct bpf_object *obj);

/* The table over prog's maps, or NULL (out of memory: the port works without offload). */
struct rf_xdp_ofl *rf_xdp_ofl_create(const struct rf_xsk_prog *prog);
void rf_xdp_ofl_destroy(struct rf_xdp_ofl *t);
/* The table of an open xdp port; NULL for any other port (io/xdp.c). */
struct rf_xdp_ofl *rf_xdp_ofl_of(struct rf_io_dev *dev);

#endif
