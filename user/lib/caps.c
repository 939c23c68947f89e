// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/syscall.h>

#include "caps.h"
#include "log.h"

static const struct {
	int cap;
	const char *name;
} needed_caps[] = {
	/* load programs and maps, read and write maps (verifier: no pointer leaks) */
	{ CAP_BPF, "CAP_BPF" },
	/* load XDP programs, attach them to interfaces */
	{ CAP_NET_ADMIN, "CAP_NET_ADMIN" },
	/* the verifier's full program checks rather than the unprivileged subset */
	{ CAP_PERFMON, "CAP_PERFMON" },
	/* the pins are root's, directories 0700: any other uid needs to override that */
	{ CAP_DAC_OVERRIDE, "CAP_DAC_OVERRIDE" },
};

int require_caps(bool pins)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};
	char missing[128] = "";
	size_t n = sizeof(needed_caps) / sizeof(needed_caps[0]);

	if (syscall(SYS_capget, &hdr, data)) {
		pr_warn("Couldn't read this process's capabilities: %s", strerror(errno));
		return -errno;
	}
	if (!pins || geteuid() == 0)
		n--; /* CAP_DAC_OVERRIDE is last */
	for (size_t i = 0; i < n; i++) {
		int cap = needed_caps[i].cap;

		if (!(data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap)))
			snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
				 *missing ? " " : "", needed_caps[i].name);
	}
	if (!*missing)
		return 0;
	pr_warn("needs CAP_BPF, CAP_NET_ADMIN and CAP_PERFMON%s (missing: %s); run as root or grant them",
		pins && geteuid() ? ", and CAP_DAC_OVERRIDE unless uid 0" : "", missing);
	return -EPERM;
}

bool caps_have(int cap)
{
	struct __user_cap_header_struct hdr = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3] = {};

	return !syscall(SYS_capget, &hdr, data) && (data[CAP_TO_INDEX(cap)].effective & CAP_TO_MASK(cap));
}
