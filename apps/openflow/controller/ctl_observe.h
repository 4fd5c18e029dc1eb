/*
 * apps/openflow/controller/ctl_observe.h: ringflow-controller on the control socket and
 * --metrics (docs/observing.md): its pollers, the switch-facing device, the handler rings
 * and counters in the stats registry, and the commands switches, flows, hosts, links and
 * ofstats (the REST API's JSON views, ctl_rest.h, over the socket).
 */
#ifndef RINGFLOW_CTL_OBSERVE_H
#define RINGFLOW_CTL_OBSERVE_H

#include <stddef.h>

#include "ctl.h"
#include "ctl_rest.h"

struct ctl_observe;

/* Start it (view->net may be NULL: the plain learning switch keeps no network view, and
 * the network commands say so). NULL + one line in err. */
struct ctl_observe *ctl_observe_start(const struct ctl_rest_view *view, struct ctl_io *io,
				      const char *metrics, char *err, size_t len);
/* Stop and free (NULL: no-op). Before the runtime, the rings or io are freed. */
void ctl_observe_stop(struct ctl_observe *o);

#endif /* RINGFLOW_CTL_OBSERVE_H */
