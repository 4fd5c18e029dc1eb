/*
 * apps/openflow/controller/compat/ctl_app.h: the controller's old "ctl_" names, for
 * cl_cluster.c only, while the cluster work on that file is merged (issue 27 renamed the
 * controller's internals to "ofc_", so "ctl" means the control socket alone). After that
 * merge: sed -i 's/\bctl_/ofc_/g; s/\bCTL_/OFC_/g; s/"ctl_app\.h"/"ofc_app.h"/' cl_cluster.c,
 * then delete this directory and its line in CMakeLists.txt.
 */
#ifndef RINGFLOW_OFC_COMPAT_CTL_APP_H
#define RINGFLOW_OFC_COMPAT_CTL_APP_H

#include "ofc_app.h"

#define ctl_net ofc_net
#define ctl_app ofc_app
#define ctl_now_ms ofc_now_ms
#define ctl_put32 ofc_put32
#define ctl_put64 ofc_put64
#define ctl_get64 ofc_get64
#define CTL_SEED_REC OFC_SEED_REC
#define CTL_HOST_AGE_MS OFC_HOST_AGE_MS
#define CTL_LINK_AGE_MS OFC_LINK_AGE_MS
#define CTL_HOST_KEY OFC_HOST_KEY
#define CTL_PORT_KEY OFC_PORT_KEY
#define CTL_MAX_CONNS OFC_MAX_CONNS

#endif /* RINGFLOW_OFC_COMPAT_CTL_APP_H */
