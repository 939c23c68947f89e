/* SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause) */
/*
 * The one definition of every rule and telemetry counter roceval has.
 *
 * The BPF program, the CLI, the JSON and Prometheus output and the
 * generated docs (docs/rules.md, `roceval rules`) all expand this table,
 * so a rule is added in exactly one place.  The ids (second column) are a
 * public interface: scripts, dashboards and alerts key on them.
 *
 * X(ENUM, id, severity, spec reference, one-line description)
 */
#ifndef ROCEVAL_RULES_H
#define ROCEVAL_RULES_H

enum roceval_severity {
	SEV_INFO = 0,
	SEV_WARNING = 1,
	SEV_ERROR = 2,
};

#define ROCEVAL_RULES(X)                                                                   \
	X(ICRC, "icrc", SEV_ERROR, "IBA A17.4.2",                             \
	  "ICRC mismatch: an invariant field changed on the way or the sender computed it wrongly") \
	X(TRUNCATED, "truncated", SEV_ERROR, "IBA A17.4, 9.2",                              \
	  "frame (as long as it was on the wire) shorter than its IP/UDP or GRH lengths, or than the headers its opcode needs") \
	X(IP_FRAGMENT, "ip_fragment", SEV_WARNING, "IBA A17.4, RFC 791",                    \
	  "first fragment of a fragmented IP datagram to a RoCEv2 port (cannot be validated)") \
	X(TVER, "tver", SEV_ERROR, "IBA 9.2", "BTH.TVer is not 0")              \
	X(OPCODE, "opcode", SEV_ERROR, "IBA 9.2.1",                            \
	  "opcode reserved or undefined for its transport")                               \
	X(PKEY, "pkey", SEV_ERROR, "IBA 9.2.3",                                \
	  "P_Key invalid (low 15 bits zero) or not in the allowed list")                   \
	X(RESERVED, "reserved", SEV_ERROR, "IBA 9.2, 9.3",                   \
	  "non-zero reserved bits (BTH Resv6/Resv7, DETH/RDETH/XRCETH Resv8, CNP reserved bytes)") \
	X(PAD, "pad", SEV_ERROR, "IBA 9.2.2",                                  \
	  "PadCnt non-zero where no pad is allowed, transport length not a multiple of 4, or PadCnt beyond the payload") \
	X(PAYLOAD_LENGTH, "payload_length", SEV_ERROR, "IBA 9.7.7",          \
	  "payload size illegal for the opcode, the PMTU or the RETH DMA length")          \
	X(SE, "se", SEV_ERROR, "IBA 9.2.1",                                    \
	  "SE set on a packet other than the LAST/ONLY of a SEND or RDMA WRITE with immediate") \
	X(ATOMIC_ALIGN, "atomic_align", SEV_ERROR, "IBA 9.4.5",                \
	  "AtomicETH virtual address not 8-byte aligned")                                  \
	X(AETH_SYNDROME, "aeth_syndrome", SEV_ERROR, "IBA 9.3.5",              \
	  "reserved AETH syndrome or NAK code")                                            \
	X(PSN_GAP, "psn_gap", SEV_WARNING, "IBA 9.7.1",                        \
	  "request PSNs never seen, one count a run: with reorder_window, once the run leaves the window, is NAKed or gone back over, ages past reorder_time, or a replay ends; with reorder_window=0, at the request ahead of the expected PSN") \
	X(PSN_DUPLICATE, "psn_duplicate", SEV_WARNING, "IBA 9.7.1",            \
	  "request PSN already seen: behind the expected one and not a hole of the reorder window (a retransmission or a duplicate)") \
	X(PSN_REORDER, "psn_reorder", SEV_INFO, "IBA 9.7.1, RFC 4737",                     \
	  "request or response that came after a later PSN of its flow, within reorder_window, never seen before and with no NAK or go-back between: reordered on the way, not lost (a request is counted once its place is settled, so trace does not sample it)") \
	X(OPCODE_SEQUENCE, "opcode_sequence", SEV_WARNING, "IBA 9.8.3",        \
	  "MIDDLE/LAST with no open message of that operation, or FIRST/ONLY while one is open (judged across a psn_gap once it is settled, never across reordering)") \
	X(MSN_REGRESS, "msn_regress", SEV_WARNING, "IBA 9.7.5.1",              \
	  "AETH MSN lower than the last MSN seen on the flow")                             \
	X(PMTU_INCONSISTENT, "pmtu_inconsistent", SEV_WARNING, "IBA 9.7.7",    \
	  "FIRST/MIDDLE payload sizes differ within one flow")                             \
	X(PSN_UNJUDGED, "psn_unjudged", SEV_INFO, "IBA 9.7.1",                             \
	  "request whose PSN could not be judged: it follows a READ whose PSN count is unknown (no PMTU negotiated, set or learned, and no response to that READ seen), so it only sets the expectation") \
	X(RETX_EPISODE, "retx_episode", SEV_INFO, "IBA 9.7.1, 9.9.2",                      \
	  "retransmission episodes on reliable connections: a request PSN behind the expected one right after new data") \
	X(RETX_CHANGED, "retx_changed", SEV_ERROR, "IBA 9.7.1, 9.9.2",                      \
	  "retransmitted request that differs from its first transmission in a field the ICRC protects (AckReq, IPv4 Identification and UDP source port may change)") \
	X(RETX_UNCOMPARED, "retx_uncompared", SEV_INFO, "roceval",                           \
	  "retransmitted requests not compared with their first transmission: a READ, or its first transmission's ICRC not held") \
	X(RETX_TIMEOUT, "retx_timeout", SEV_INFO, "IBA 9.9.2",                               \
	  "retransmission episodes with no NAK seen for the connection since its last new request (timeout-driven, or the NAK not seen)") \
	X(NAK_PSN_WRONG, "nak_psn_wrong", SEV_ERROR, "IBA 9.7.5.2.4, 9.9.2",                  \
	  "PSN sequence error NAK that does not name the first request PSN missing on its connection (judged where the loss was seen)") \
	X(GO_BACK_EARLY, "go_back_early", SEV_WARNING, "IBA 9.9.2",                          \
	  "retransmission after a NAK that starts before the NAK's PSN (go-back-0 or over-retransmission)") \
	X(GO_BACK_LATE, "go_back_late", SEV_ERROR, "IBA 9.9.2",                              \
	  "retransmission after a NAK that starts after the NAK's PSN and never resends it (data skipped): at once further past it than reorder_window, else once a new request, another NAK or a replay's end comes first (then on the totals and the flow, so trace does not sample it)") \
	X(RETX_TIMEOUT_EARLY, "retx_timeout_early", SEV_WARNING, "IBA 9.7.6.1, 12.6 (REQ Local ACK Timeout)", \
	  "timeout-driven retransmission sooner after the request's previous transmission than the ACK timeout its CM REQ announced (4.096 us x 2^t)") \
	X(RNR_RETRY_EARLY, "rnr_retry_early", SEV_ERROR, "IBA 9.7.5.2.8",                      \
	  "retry after an RNR NAK sooner than the NAK's RNR timer allows") \
	X(READ_REREQUEST, "read_rerequest", SEV_ERROR, "IBA 9.7.5.1, 9.9.2",                    \
	  "READ re-request (no NAK before it) not starting at the PSN after the last response to that READ received in order: earlier asks again for data received, later (up to the READ's LAST response, once seen) skips data (judged where the responses were seen)") \
	X(FLOW_EVICTED, "flow_evicted", SEV_INFO, "roceval",                                \
	  "flows dropped to make room in a full set of the flow table (their sequence state was lost)")          \
	X(CNP, "cnp", SEV_INFO, "IBA A17.9.3", "congestion notification packets (opcode 0x81)") \
	X(ECN_CE, "ecn_ce", SEV_INFO, "RFC 3168, IBA A17.9", "RoCEv2 frames with IP ECN = CE (11)") \
	X(DSCP, "dscp", SEV_WARNING, "RFC 2474; setting dscp",                                \
	  "RoCEv2 data frame (not a CNP, not QP1) with a DSCP the dscp setting does not allow: another traffic class, which may miss the lossless queue") \
	X(CNP_DSCP, "cnp_dscp", SEV_WARNING, "IBA A17.9.3; setting cnp_dscp",                 \
	  "CNP with another DSCP than the cnp_dscp setting's: it may miss the queue meant to carry CNPs first") \
	X(PCP, "pcp", SEV_WARNING, "IEEE 802.1Q; setting pcp",                                \
	  "tagged RoCE data frame whose outer tag's priority is not the pcp setting's: another PFC class") \
	X(CNP_PCP, "cnp_pcp", SEV_WARNING, "IEEE 802.1Q; setting cnp_pcp",                    \
	  "tagged CNP whose outer tag's priority is not the cnp_pcp setting's")              \
	X(NOT_ECT, "not_ect", SEV_WARNING, "RFC 3168, IBA A17.9; setting ect",                \
	  "RoCEv2 data frame sent Not-ECT (ECN 00) with ect=required: a congested switch can only drop it, never mark it") \
	X(CNP_GAP, "cnp_gap", SEV_WARNING, "IBA A17.9.3; setting cnp_gap",                    \
	  "CNP sooner than cnp_gap after the previous CNP of its pacing scope (cnp_pacing: the CNP's destination QP, or the IP pair)") \
	X(CE_UNANSWERED, "ce_unanswered", SEV_WARNING, "IBA A17.9.3; setting cnp_delay",      \
	  "CE-marked requests or READ responses no CNP from their destination answered within cnp_delay: once per pacing window, counted on the first frame of its scope past it (live by a timer, in a replay at its end when none comes)") \
	X(NAK_PSN, "nak_psn", SEV_INFO, "IBA 9.7.5.2.4", "NAK: PSN sequence error")          \
	X(NAK_INVALID, "nak_invalid", SEV_INFO, "IBA 9.7.5.2.4",                            \
	  "NAK: invalid request (also invalid RD request, code 4)")                       \
	X(NAK_ACCESS, "nak_access", SEV_INFO, "IBA 9.7.5.2.4", "NAK: remote access error")  \
	X(NAK_OPERATIONAL, "nak_operational", SEV_INFO, "IBA 9.7.5.2.4",                    \
	  "NAK: remote operational error")                                                 \
	X(NAK_RNR, "nak_rnr", SEV_INFO, "IBA 9.7.5.2.8", "RNR NAK: receiver not ready")      \
	X(OPCODE_VENDOR, "opcode_vendor", SEV_INFO, "IBA 9.2.1",               \
	  "manufacturer-specific opcodes 0xC0-0xFF (only their BTH is checked)")           \
	X(CM, "cm", SEV_INFO, "IBA 12.6, 13.4", "RDMA CM MADs decoded (UD SEND_ONLY to QP1, class 0x07)") \
	X(CM_ESTABLISHED, "cm_established", SEV_INFO, "IBA 12.6",                          \
	  "connections whose REQ, REP and RTU were all seen (the RTU frames)")             \
	X(CM_REP_UNKNOWN, "cm_rep_unknown", SEV_WARNING, "IBA 12.6, 12.9",                 \
	  "REP that answers no REQ seen (or a capture that started mid-handshake)")        \
	X(CM_RTU_UNKNOWN, "cm_rtu_unknown", SEV_WARNING, "IBA 12.6, 12.9",                 \
	  "RTU for a connection whose REP was not seen")                                   \
	X(CM_DREQ_UNKNOWN, "cm_dreq_unknown", SEV_WARNING, "IBA 12.6, 12.9",               \
	  "DREQ for a connection not in the table (never seen, rejected, or evicted)") \
	X(CM_PENDING, "cm_pending", SEV_WARNING, "IBA 12.9",                               \
	  "responder sent a request before the connection's RTU was seen (once per connection)")                        \
	X(CM_START_PSN, "cm_start_psn", SEV_ERROR, "IBA 12.6 (REQ/REP Starting PSN), 9.7.1", \
	  "first request on a CM-learned connection does not carry the Starting PSN its receiver announced") \
	X(CM_PKEY, "cm_pkey", SEV_ERROR, "IBA 12.6 (REQ P_Key), 9.2.3",                    \
	  "BTH P_Key on a CM-learned connection differs from the negotiated one (low 15 bits)") \
	X(CM_REJ, "cm_rej", SEV_INFO, "IBA 12.6 (REJ)", "connection rejections (per reason in cm_rej_reasons)") \
	X(CM_MRA, "cm_mra", SEV_INFO, "IBA 12.6 (MRA)", "MRA: a side asked for more time to answer") \
	X(CM_RETRY, "cm_retry", SEV_INFO, "IBA 12.6, 12.9",                                \
	  "CM message resent on a connection: the same message with the same TransactionID")               \
	X(CONN_EVICTED, "conn_evicted", SEV_INFO, "roceval",                               \
	  "open connections dropped from a full connection table, oldest first (closed ones go silently)") \
	X(CONN_EXPIRED, "conn_expired", SEV_INFO, "roceval",                               \
	  "connections expired after both ends idled longer than conn_idle: later traffic is judged as if no CM was seen")

enum roceval_rule {
#define ROCEVAL_RULE_ENUM(e, id, sev, ref, desc) RULE_##e,
	ROCEVAL_RULES(ROCEVAL_RULE_ENUM)
#undef ROCEVAL_RULE_ENUM
	RULE__COUNT
};

/*
 * A set of rules, a bit each, in ROCEVAL_RULE_WORDS words: what a frame
 * broke, what a trace filters on.  Room for 128 rules; past that the words
 * grow here, and every set, its helpers and the masks below follow.
 */
#define ROCEVAL_RULE_WORDS 2
_Static_assert(RULE__COUNT <= 64 * ROCEVAL_RULE_WORDS, "more rules than a rule set holds: add a word");

struct roceval_rule_set {
	__u64 w[ROCEVAL_RULE_WORDS];
};

#define RULE_WORD(r) ((r) >> 6)
#define RULE_BIT(r) (1ULL << ((r) & 63))

static inline int rule_set_has(const struct roceval_rule_set *m, int r)
{
	return (m->w[RULE_WORD(r)] & RULE_BIT(r)) != 0;
}

static inline void rule_set_add(struct roceval_rule_set *m, int r)
{
	m->w[RULE_WORD(r)] |= RULE_BIT(r);
}

static inline int rule_set_empty(const struct roceval_rule_set *m)
{
	return !(m->w[0] | m->w[1]);
}

/* Whether a and b share a rule; with mask a ROCEVAL_*_MASK word pair. */
static inline int rule_set_meets(const struct roceval_rule_set *a, __u64 mask0, __u64 mask1)
{
	return ((a->w[0] & mask0) | (a->w[1] & mask1)) != 0;
}

/* The error-severity rules, word by word: what enforce mode may drop for. */
#define ROCEVAL_RULE_SEVBIT(word, e, sev, want) \
	| ((sev) == (want) && RULE_WORD(RULE_##e) == (word) ? RULE_BIT(RULE_##e) : 0ULL)
#define ROCEVAL_RULE_ERR0(e, id, sev, ref, desc) ROCEVAL_RULE_SEVBIT(0, e, sev, SEV_ERROR)
#define ROCEVAL_RULE_ERR1(e, id, sev, ref, desc) ROCEVAL_RULE_SEVBIT(1, e, sev, SEV_ERROR)
#define ROCEVAL_ERROR_MASK0 (0ULL ROCEVAL_RULES(ROCEVAL_RULE_ERR0))
#define ROCEVAL_ERROR_MASK1 (0ULL ROCEVAL_RULES(ROCEVAL_RULE_ERR1))
/* The info-severity counters, word by word: telemetry, not violations. */
#define ROCEVAL_RULE_INFO0(e, id, sev, ref, desc) ROCEVAL_RULE_SEVBIT(0, e, sev, SEV_INFO)
#define ROCEVAL_RULE_INFO1(e, id, sev, ref, desc) ROCEVAL_RULE_SEVBIT(1, e, sev, SEV_INFO)
#define ROCEVAL_INFO_MASK0 (0ULL ROCEVAL_RULES(ROCEVAL_RULE_INFO0))
#define ROCEVAL_INFO_MASK1 (0ULL ROCEVAL_RULES(ROCEVAL_RULE_INFO1))

/*
 * Frame-level counters that are not rules.  Together they account for every
 * frame: roce = icrc_ok + icrc_bad + icrc_unchecked + icrc_skipped, and
 * roce = rocev1 + rocev2_ipv4 + rocev2_ipv6.  The byte counts are of whole
 * frames as XDP sees them (all fragments of a multi-buffer frame).
 *
 * Each row also says where it goes in the Prometheus exposition: the metric
 * family (roceval_<family>_total, a family of ROCEVAL_METRIC_FAMILIES) and
 * the label that tells it from the family's other rows ("" when it is alone
 * in its family).  A row whose family is "" is not exported, because it is
 * the sum of other rows and Prometheus sums them itself.
 *
 * X(ENUM, id, metric family, label, description)
 */
#define ROCEVAL_TOTALS(X)                                                                  \
	X(FRAMES, "frames", "frames", "", "frames seen by the program")                    \
	X(BYTES, "bytes", "bytes", "", "bytes of the frames seen, from the Ethernet header (no FCS)") \
	X(ROCE, "roce", "", "",                                                             \
	  "RoCE frames, valid or not: RoCEv1 (EtherType 0x8915) and RoCEv2 (a RoCEv2 UDP port)") \
	X(ROCEV1, "rocev1", "roce_frames", "family=\"rocev1\"",                              \
	  "RoCEv1 frames: EtherType 0x8915, a GRH, then the BTH")                          \
	X(ROCEV2_IPV4, "rocev2_ipv4", "roce_frames", "family=\"rocev2_ipv4\"",                \
	  "RoCEv2 frames over IPv4")                                                       \
	X(ROCEV2_IPV6, "rocev2_ipv6", "roce_frames", "family=\"rocev2_ipv6\"",                \
	  "RoCEv2 frames over IPv6")                                                       \
	X(ROCE_BYTES, "roce_bytes", "roce_bytes", "", "bytes of the RoCE frames")         \
	X(ICRC_OK, "icrc_ok", "icrc_frames", "result=\"ok\"",                               \
	  "RoCE frames whose ICRC was checked and matched")                               \
	X(ICRC_BAD, "icrc_bad", "icrc_frames", "result=\"bad\"",                            \
	  "RoCE frames whose ICRC was checked and did not match")                         \
	X(ICRC_UNCHECKED, "icrc_unchecked", "icrc_frames", "result=\"unchecked\"",          \
	  "RoCE frames whose ICRC could not be computed (truncated, snapped, IP fragment, or a datagram over 16376 bytes)") \
	X(ICRC_SKIPPED, "icrc_skipped", "icrc_frames", "result=\"skipped\"",                \
	  "RoCE frames not ICRC-checked because of icrc_sample")                          \
	X(SNAPPED, "snapped", "snapped_frames", "",                                        \
	  "replayed RoCE frames the capture holds only the start of (captured length below the wire length): judged on the bytes present, ICRC unchecked") \
	X(DROPPED, "dropped", "dropped_frames", "", "frames dropped by enforce mode")      \
	X(RETX_PACKETS, "retx_packets", "retransmitted_frames", "",                        \
	  "requests resent on reliable connections (RC, XRC, DC): a PSN behind the expected one, READ re-requests included") \
	X(TIMED_CAPTURE, "timed_capture", "timed_frames", "clock=\"capture\"",                \
	  "reliable-connection requests and responses timed for latencies by the capture's timestamps (replay)") \
	X(TIMED_KERNEL, "timed_kernel", "timed_frames", "clock=\"kernel\"",                  \
	  "reliable-connection requests and responses timed by the kernel's clock as the program ran (bpf_ktime_get_ns)") \
	X(TIMED_NIC, "timed_nic", "timed_frames", "clock=\"nic\"",                           \
	  "reliable-connection requests and responses timed by the NIC's receive timestamp (native XDP, kernel 6.3+, the driver's receive timestamping on)") \
	X(UNTIMED, "untimed", "timed_frames", "clock=\"none\"",                              \
	  "reliable-connection requests and responses the NIC did not stamp after it had stamped others: not timed, the kernel's clock being another time base") \
	X(LATENCY_SKIPPED, "latency_skipped", "timed_frames", "clock=\"skipped\"",          \
	  "new reliable-connection requests not timed because of latency_sample (the kernel's clock only): their answers give no latency") \
	X(TRACE_SAMPLES, "trace_samples", "trace_frames", "result=\"sampled\"",             \
	  "violating frames sent to a running trace")                                     \
	X(TRACE_SKIPPED, "trace_skipped", "trace_frames", "result=\"skipped\"",             \
	  "violating frames not sampled: trace rate limit or ring buffer full")                \
	X(PFC_FRAMES, "pfc_frames", "mac_control_frames", "kind=\"pfc\"",                    \
	  "PFC pause frames (MAC control opcode 0x0101, IEEE 802.1Qbb), counted per priority in \"pfc\"") \
	X(MAC_CONTROL_OTHER, "mac_control_other", "mac_control_frames", "kind=\"other\"",    \
	  "MAC control frames (EtherType 0x8808) of another opcode: 802.3x PAUSE (0x0001) among them") \
	X(MAC_CONTROL_MALFORMED, "mac_control_malformed", "mac_control_frames", "kind=\"malformed\"", \
	  "MAC control frames too short for their opcode, as captured, or PFC frames with reserved class-enable bits set: counted, not read") \
	X(MIRROR_FRAMES, "mirror_frames", "mirror_frames", "",                              \
	  "frames of a mirror session (ERSPAN, GRE-TEB, VXLAN, Geneve) taken out of their encapsulation and judged as bare frames") \
	X(MIRROR_LOST, "mirror_lost", "mirror_lost_frames", "",                             \
	  "frames mirror sessions' sequence numbers skipped: lost between the switch and the collector, so verdicts then may miss them") \
	X(MIRROR_TRUNCATED, "mirror_truncated", "mirror_truncated_frames", "",              \
	  "mirrored frames the switch cut (ERSPAN T bit): judged as snapped, ICRC unchecked") \
	X(MIRROR_NESTED, "mirror_nested", "mirror_nested_frames", "",                       \
	  "mirrored frames that carry another encapsulation: decapsulated once, the inner one judged as a frame (not RoCE)") \
	X(MIRROR_MALFORMED, "mirror_malformed", "mirror_malformed_frames", "",              \
	  "frames of a mirror encapsulation whose outer headers are short or wrong (GRE version or length, VXLAN without its I flag, ERSPAN version): not decapsulated") \
	X(MIRROR_SESSIONS_FULL, "mirror_sessions_full", "mirror_unlisted_frames", "",      \
	  "mirrored frames of sessions past the 1024 listed: judged, not listed, their sequence numbers not followed")

/*
 * The counter families the totals above are exported in, roceval_<name>_total,
 * with their HELP text.  X(name, help)
 */
#define ROCEVAL_METRIC_FAMILIES(X)                                                         \
	X("frames", "frames seen by the program")                                          \
	X("bytes", "bytes of the frames seen, from the Ethernet header (no FCS)")          \
	X("roce_frames", "RoCE frames, valid or not, by family: rocev1 (EtherType 0x8915), rocev2_ipv4, rocev2_ipv6") \
	X("roce_bytes", "bytes of the RoCE frames")                                        \
	X("icrc_frames", "RoCE frames by ICRC outcome: ok, bad, unchecked (could not be computed), skipped (icrc_sample)") \
	X("snapped_frames", "replayed RoCE frames the capture cut short of their wire length (ICRC unchecked)") \
	X("dropped_frames", "frames dropped by enforce mode")                              \
	X("retransmitted_frames", "requests resent on reliable connections (RC, XRC, DC)")  \
	X("timed_frames", "reliable-connection requests and responses timed for latencies, by the clock that timed them") \
	X("trace_frames", "violating frames sampled to a running trace, or skipped by its rate limit or a full ring buffer") \
	X("mac_control_frames", "MAC control frames (EtherType 0x8808) by kind: pfc (PFC pause frames), other opcodes, malformed") \
	X("mirror_frames", "frames of mirror sessions taken out of their encapsulation and judged")   \
	X("mirror_lost_frames", "frames mirror sessions' sequence numbers skipped (lost before the collector)") \
	X("mirror_truncated_frames", "mirrored frames the switch cut (ERSPAN T bit), judged as snapped") \
	X("mirror_nested_frames", "mirrored frames carrying another encapsulation, decapsulated once") \
	X("mirror_malformed_frames", "frames of a mirror encapsulation with short or wrong outer headers, not decapsulated") \
	X("mirror_unlisted_frames", "mirrored frames of sessions past the 1024 listed")

enum roceval_total {
#define ROCEVAL_TOTAL_ENUM(e, id, metric, label, desc) TOTAL_##e,
	ROCEVAL_TOTALS(ROCEVAL_TOTAL_ENUM)
#undef ROCEVAL_TOTAL_ENUM
	TOTAL__COUNT
};

#endif /* ROCEVAL_RULES_H */
