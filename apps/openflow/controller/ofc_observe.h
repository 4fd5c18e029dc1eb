/*
 * apps/openflow/controller/ofc_observe.h: ringflow-controller on the control socket and
 * --metrics (docs/observing.md): its pollers, the switch-facing device, the handler rings
 * and counters in the stats registry, and the commands switches, flows, hosts, links and
 * ofstats (the REST API's JSON views, ofc_rest.h, over the socket).
 */
#ifndef RINGFLOW_OFC_OBSERVE_H
#define RINGFLOW_OFC_OBSERVE_H

#include <stddef.h>

#include "ofc.h"
#include "ofc_rest.h"

struct ofc_observe;

/* Start it (view->net may be NULL: the plain learning switch keeps no network view, and
 * the network commands say so). NULL + one line in err. */
struct ofc_observe *ofc_observe_start(const struct ofc_rest_view *view, struct ofc_io *io,
				      const char *metrics, char *err, size_t len);
/* Stop and free (NULL: no-op). Before the runtime, the rings or io are freed. */
void ofc_observe_stop(struct ofc_observe *o);

#endif /* RINGFLOW_OFC_OBSERVE_H */
