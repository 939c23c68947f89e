// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/*
 * A run's summary: the faults injected, and from them what a replay of the
 * frames written, or a live attachment that saw them, must count.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "generator.h"
#include "json.h"
#include "report/report.h"
#include "rule_names.h"

/*
 * What replay must count for the frames the run wrote: exp[r] for every rule
 * it can predict (known[r]); returns the frames whose ICRC fails.
 */
/*
 * The congestion rules, under gen_cc_settings when a congestion fault was
 * asked for (else they are off, and count nothing); pacing and CE only for
 * a capture, which alone fixes the frames' times.
 */
static void expected_cc(const struct gen *g, bool capture, uint64_t exp[RULE__COUNT], bool known[RULE__COUNT])
{
	exp[RULE_CNP] = g->cnp;
	exp[RULE_ECN_CE] = g->mutated[M_ECN_CE] + g->injected[F_CE_UNANSWERED];
	if (!g->qos)
		return;
	exp[RULE_DSCP] += g->dscp_mutated[0];
	exp[RULE_CNP_DSCP] += g->dscp_mutated[1];
	exp[RULE_CNP_GAP] = g->cnp_gaps;
	known[RULE_CNP_GAP] = known[RULE_CE_UNANSWERED] = capture;
}

static int expected_rules(const struct gen *g, bool capture, uint64_t exp[RULE__COUNT], bool known[RULE__COUNT])
{
	for (int r = 0; r < RULE__COUNT; r++) {
		exp[r] = 0;
		known[r] = true;
	}
	for (int f = 0; f < F__COUNT; f++)
		if (gen_faults[f].rule >= 0 && f != F_CM_PMTU && f != F_CNP_BURST && f != F_REORDER)
			exp[gen_faults[f].rule] += g->injected[f];
	/* a swap over k requests makes k of them late */
	exp[RULE_PSN_REORDER] += g->reorder_packets;
	exp[RULE_PAYLOAD_LENGTH] += g->pmtu_breaks;
	exp[RULE_PSN_DUPLICATE] += g->injected[F_RETX_CHANGED] + g->injected[F_RNR_EARLY];
	exp[RULE_NAK_RNR] += g->injected[F_RNR_EARLY];
	/* a lost request and a NAK: the go-back resends the lost one and the one after (go-back-0 one more) */
	exp[RULE_PSN_GAP] += g->injected[F_NAK_WRONG] + g->injected[F_GO_BACK_0];
	exp[RULE_NAK_PSN] += g->injected[F_NAK_WRONG] + g->injected[F_GO_BACK_0];
	exp[RULE_PSN_DUPLICATE] += 2 * g->injected[F_NAK_WRONG] + 3 * g->injected[F_GO_BACK_0];
	exp[RULE_GO_BACK_EARLY] += g->injected[F_NAK_WRONG]; /* it resends from before the PSN named */
	exp[RULE_RETX_EPISODE] = g->retx_episodes;
	/* the only NAKs are --rnr-early's; a retry waits out the announced ACK timeout, so none is early */
	exp[RULE_RETX_TIMEOUT] = g->retx_episodes - g->retx_after_nak;
	exp[RULE_RETX_UNCOMPARED] = g->retx_uncompared;
	exp[RULE_CM_PKEY] = g->pkey_breaks;
	exp[RULE_CM] = g->cm_mads;
	exp[RULE_CM_ESTABLISHED] = g->cm_established;
	exp[RULE_CM_REJ] = g->cm_rej;
	known[RULE_CONN_EVICTED] = false; /* depends on the table's size */
	expected_cc(g, capture, exp, known);
	/* how a lost FIRST or LAST echoes through the message depends on the validator's state machine */
	known[RULE_OPCODE_SEQUENCE] = !g->first_last_drops;
	known[RULE_FLOW_EVICTED] = false; /* depends on the flow table's size */
	return (int)exp[RULE_ICRC];
}

/* The distances of the requests --reorder made late, as replay's "reorder" gives them. */
static void expected_reorder(struct json_writer *w, const struct gen *g)
{
	json_object_begin(w, "reorder");
	json_u64(w, "count", g->reorder_packets);
	json_u64(w, "sum_psns", g->reorder_sum);
	json_array_begin(w, "buckets");
	for (int b = 0; b < ROCEVAL_REORDER_BUCKETS; b++) {
		if (!g->reorder[b])
			continue;
		json_object_begin(w, NULL);
		json_u64(w, "le_psns", 1u << b);
		json_u64(w, "count", g->reorder[b]);
		json_object_end(w);
	}
	json_array_end(w);
	json_object_end(w);
}

/*
 * The CM faults exist only with --cm, the congestion ones once one of them
 * is asked for: without, the summary stays as it always was.
 */
static bool fault_shown(const struct gen *g, const struct gen_out *o, int f)
{
	if (f == F_MIRROR_LOSS)
		return o->encap.kind;
	if (gen_cc_fault(f) || f == F_PFC)
		return g->qos || g->rate[F_PFC] > 0;
	return g->cm || (f != F_START_PSN && f != F_CM_PMTU);
}

/* "pfc": each priority's frames, xoff, xon and quanta, as replay --json has them. */
static void pfc_json(struct json_writer *w, const struct gen *g)
{
	json_u64(w, "pfc_frames", g->pfc_frames);
	json_array_begin(w, "pfc");
	for (int p = 0; p < ROCEVAL_PFC_PRIOS; p++) {
		json_object_begin(w, NULL);
		json_u64(w, "priority", p);
		json_u64(w, "frames", g->pfc[p].frames);
		json_u64(w, "xoff", g->pfc[p].xoff);
		json_u64(w, "xon", g->pfc[p].xon);
		json_u64(w, "quanta", g->pfc[p].quanta);
		json_object_end(w);
	}
	json_array_end(w);
}

/* "settings": what the congestion predictions assume, as replay --set takes them. */
static void settings_json(struct json_writer *w, const struct gen *g)
{
	char key[32];

	if (!g->qos)
		return;
	json_object_begin(w, "settings");
	for (int i = 0; gen_cc_settings[i]; i++) {
		const char *eq = strchr(gen_cc_settings[i], '=');

		snprintf(key, sizeof(key), "%.*s", (int)(eq - gen_cc_settings[i]), gen_cc_settings[i]);
		json_string(w, key, eq + 1);
	}
	json_object_end(w);
}

/*
 * The mirror totals (0 for bare frames), and the one session --encap makes
 * as replay lists it in "mirrors".
 */
static void mirror_json(struct json_writer *w, const struct gen *g, const struct gen_out *o)
{
	const struct gen_encap *e = &o->encap;
	bool numbered = gen_encap_numbered(e->kind);

	json_u64(w, "mirror_frames", e->kind ? o->n : 0);
	json_u64(w, "mirror_lost", g->injected[F_MIRROR_LOSS]);
	json_u64(w, "mirror_truncated", 0);
	json_u64(w, "mirror_nested", 0);
	json_u64(w, "mirror_malformed", 0);
	json_u64(w, "mirror_sessions_full", 0);
	json_array_begin(w, "mirrors");
	if (e->kind && o->n) {
		json_object_begin(w, NULL);
		json_string(w, "source", gen_encap_source(e));
		json_string(w, "encap", mirror_encap_id(e->kind));
		json_u64(w, "session", e->session);
		json_u64(w, "frames", o->n);
		json_u64(w, "bytes", e->bytes);
		json_u64(w, "lost", g->injected[F_MIRROR_LOSS]);
		json_bool(w, "numbered", numbered && e->seq > 1);
		json_u64(w, "truncated", 0);
		json_u64(w, "nested", 0);
		if (numbered)
			json_u64(w, "last_seq", e->seq - 1);
		else
			json_null(w, "last_seq");
		json_object_end(w);
	}
	json_array_end(w);
}

void gen_summary_json(FILE *f, const struct gen *g, const struct gen_out *o)
{
	uint64_t exp[RULE__COUNT];
	bool known[RULE__COUNT];
	uint64_t bad = expected_rules(g, o->fd < 0, exp, known);
	struct json_writer w;

	json_init(&w, f);
	json_object_begin(&w, NULL);
	json_u64(&w, "seed", g->seed);
	json_u64(&w, "frames", o->n);
	json_object_begin(&w, "injected");
	for (int i = 0; i < F__COUNT; i++)
		if (fault_shown(g, o, i))
			json_u64(&w, gen_faults[i].json, g->injected[i]);
	json_object_end(&w);
	json_object_begin(&w, "mutations");
	for (int i = 0; i < M__COUNT; i++)
		json_u64(&w, gen_mutation_names[i], g->mutated[i]);
	json_object_end(&w);
	json_u64(&w, "dropped_first_or_last", g->first_last_drops);
	json_object_begin(&w, "expected");
	settings_json(&w, g);
	json_u64(&w, "frames", o->n);
	json_u64(&w, "roce", o->n - g->pfc_frames);
	json_u64(&w, "icrc_ok", o->n - g->pfc_frames - bad);
	json_u64(&w, "icrc_bad", bad);
	json_u64(&w, "icrc_unchecked", 0);
	pfc_json(&w, g);
	mirror_json(&w, g, o);
	json_object_begin(&w, "rules");
	for (int r = 0; r < RULE__COUNT; r++)
		if (known[r])
			json_u64(&w, rule_ids[r], exp[r]);
	json_object_end(&w);
	expected_reorder(&w, g);
	json_object_end(&w);
	json_object_end(&w);
	json_end(&w);
}

void gen_summary_text(FILE *f, const struct gen *g, const struct gen_out *o, const char *dest)
{
	uint64_t exp[RULE__COUNT];
	bool known[RULE__COUNT];
	uint64_t bad = expected_rules(g, o->fd < 0, exp, known);
	uint64_t roce = o->n - g->pfc_frames;
	const char *sep = "";

	fprintf(f, "%llu frames to %s (seed %llu)\n\n%-16s %8s  %s\n", (unsigned long long)o->n, dest,
		(unsigned long long)g->seed, "FAULT", "INJECTED", "COUNTED AS");
	for (int i = 0; i < F__COUNT; i++) {
		if (!fault_shown(g, o, i))
			continue;
		fprintf(f, "%-16s %8llu  ", gen_faults[i].opt, (unsigned long long)g->injected[i]);
		if (i == F_CM_PMTU || i == F_REORDER) {
			fprintf(f, "%s (%llu %s)\n", rule_ids[gen_faults[i].rule],
				(unsigned long long)(i == F_CM_PMTU ? g->pmtu_breaks : g->reorder_packets),
				i == F_CM_PMTU ? "frames" : "requests late");
			continue;
		}
		if (i == F_MIRROR_LOSS) {
			fprintf(f, "psn_gap and mirror_lost\n");
			continue;
		}
		if (i == F_PFC) {
			fprintf(f, "pfc_frames, per priority (--json)\n");
			continue;
		}
		if (gen_faults[i].rule >= 0) {
			fprintf(f, "%s\n", rule_ids[gen_faults[i].rule]);
			continue;
		}
		fprintf(f, "no violation");
		for (int m = 0, first = 1; m < M__COUNT; m++) {
			if (!g->mutated[m])
				continue;
			fprintf(f, "%s%s %llu", first ? " (" : ", ", gen_mutation_names[m], (unsigned long long)g->mutated[m]);
			first = 0;
		}
		fprintf(f, "%s\n", g->injected[i] ? ")" : "");
	}
	fprintf(f, "\nExpected: frames %llu, roce %llu, icrc_ok %llu, icrc_bad %llu, pfc_frames %llu\n",
		(unsigned long long)o->n, (unsigned long long)roce, (unsigned long long)(roce - bad),
		(unsigned long long)bad, (unsigned long long)g->pfc_frames);
	if (o->encap.kind)
		fprintf(f, "Mirror session: %s from %s, session %u: mirror_frames %llu, mirror_lost %llu\n",
			mirror_encap_id(o->encap.kind), gen_encap_source(&o->encap), (unsigned int)o->encap.session,
			(unsigned long long)o->n, (unsigned long long)g->injected[F_MIRROR_LOSS]);
	if (g->qos) {
		fprintf(f, "With the settings");
		for (int i = 0; gen_cc_settings[i]; i++)
			fprintf(f, " %s", gen_cc_settings[i]);
		fprintf(f, "%s\n", o->fd < 0 ? "" : " (cnp_gap and ce_unanswered: live timing, not predicted)");
	}
	fprintf(f, "Expected rules: ");
	for (int r = 0; r < RULE__COUNT; r++) {
		if (!known[r] || !exp[r])
			continue;
		fprintf(f, "%s%s %llu", sep, rule_ids[r], (unsigned long long)exp[r]);
		sep = ", ";
	}
	fprintf(f, "%severy other rule 0", *sep ? "; " : "");
	if (!known[RULE_OPCODE_SEQUENCE])
		fprintf(f, " except opcode_sequence (%llu dropped FIRST/LAST packets break their messages)",
			(unsigned long long)g->first_last_drops);
	fprintf(f, "\n");
}
