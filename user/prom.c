// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
#include "cmd.h"
#include "common.h"
#include "prom.h"

void prom_label_value(FILE *f, const char *v)
{
	for (; *v; v++) {
		if (*v == '\\')
			fputs("\\\\", f);
		else if (*v == '"')
			fputs("\\\"", f);
		else if (*v == '\n')
			fputs("\\n", f);
		else
			fputc(*v, f);
	}
}

/* HELP text escapes only backslash and newline. */
static void help_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\\\", f);
		else if (*s == '\n')
			fputs("\\n", f);
		else
			fputc(*s, f);
	}
}

static void family(FILE *f, const char *name, const char *type, const char *help,
		   const char *help_tail)
{
	fprintf(f, "# HELP %s ", name);
	help_text(f, help);
	if (help_tail)
		help_text(f, help_tail);
	fprintf(f, "\n# TYPE %s %s\n", name, type);
}

static void iface_label(FILE *f, const char *ifname)
{
	fputs("{interface=\"", f);
	prom_label_value(f, ifname);
	fputc('"', f);
}

void prom_write(FILE *f, const struct prom_iface *ifs, int n)
{
	char name[96], tail[160];

	family(f, "roceval_build_info", "gauge", "roceval version; always 1", NULL);
	fprintf(f, "roceval_build_info{version=\"%s\"} 1\n", ROCEVAL_VERSION);

	family(f, "roceval_attached_info", "gauge",
	       "the roceval program attached to the interface: mode, hook (xdp or tc) and program id; always 1",
	       NULL);
	for (int i = 0; i < n; i++) {
		fputs("roceval_attached_info", f);
		iface_label(f, ifs[i].ifname);
		fputs(",mode=\"", f);
		prom_label_value(f, ifs[i].mode);
		fputs("\",hook=\"", f);
		prom_label_value(f, ifs[i].hook);
		fprintf(f, "\",prog_id=\"%u\"} 1\n", ifs[i].prog_id);
	}
	family(f, "roceval_attached_since_seconds", "gauge",
	       "when the program was attached to the interface, in seconds since the epoch", NULL);
	for (int i = 0; i < n; i++) {
		fputs("roceval_attached_since_seconds", f);
		iface_label(f, ifs[i].ifname);
		fprintf(f, "} %lld\n", (long long)ifs[i].attached_since);
	}

	for (int t = 0; t < TOTAL__COUNT; t++) {
		snprintf(name, sizeof(name), "roceval_%s_total", total_ids[t]);
		family(f, name, "counter", total_descs[t], NULL);
		for (int i = 0; i < n; i++) {
			if (!ifs[i].c)
				continue;
			fputs(name, f);
			iface_label(f, ifs[i].ifname);
			fprintf(f, "} %llu\n", (unsigned long long)ifs[i].c->total[t]);
		}
	}
	for (int r = 0; r < RULE__COUNT; r++) {
		snprintf(name, sizeof(name), "roceval_rule_%s_total", rule_ids[r]);
		snprintf(tail, sizeof(tail), " (%s; %s)", severity_name(rule_sevs[r]), rule_refs[r]);
		family(f, name, "counter", rule_descs[r], tail);
		for (int i = 0; i < n; i++) {
			if (!ifs[i].c)
				continue;
			fputs(name, f);
			iface_label(f, ifs[i].ifname);
			fprintf(f, ",severity=\"%s\"} %llu\n", severity_name(rule_sevs[r]),
				(unsigned long long)ifs[i].c->rule[r]);
		}
	}
}
