/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * Live attachments.  Everything roceval keeps for an interface is pinned
 * under ROCEVAL_PIN_ROOT/netns-<inode>/<ifname>/ (directories 0700, pins
 * 0600), one directory per network namespace: the program,
 * the bpf_link, and the maps, so counters survive the CLI exiting and the
 * daemon restarting.  attach, detach, status, stats, top, trace, config and
 * the daemon all go through this header, which brings the rest of live/:
 * the interface (iface.h), the pin tree (pins.h) and attaching to the hook (hook.h).
 */
#ifndef ROCEVAL_LIVE_H
#define ROCEVAL_LIVE_H

#include "hook.h"
#include "iface.h"
#include "pinned.h"
#include "pins.h"

#endif
