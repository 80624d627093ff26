// SPDX-License-Identifier: MIT
/*
 * probe_catalogue.c - the catalogue of rpcrdma-probe: every case, the
 * answer RFC 8166 requires of it (following our codec's rules,
 * rpcrdma-decode(8) names each one), and what it sends.
 */
#include <stdio.h>

#include "probe.h"

#define RAW(name, expect, kind, what) { name, expect, probe_case_raw, kind, 0, what }
#define READ(name, kind, what) { name, PO_ERR_CHUNK, probe_case_read, kind, 0, what }
/* a case past this server's own limit: ERR_CHUNK or a REPLY (PK_SERVER_LIMIT) */
#define RAW_LIMIT(name, kind, what) \
	{ name, PO_ERR_CHUNK, probe_case_raw, kind, PK_SERVER_LIMIT, what }
#define READ_LIMIT(name, kind, what) \
	{ name, PO_ERR_CHUNK, probe_case_read, kind, PK_SERVER_LIMIT, what }
#define CUT(n, expect, what) { "cut-" #n, expect, probe_case_cut, n, 0, what }

const struct probe_case probe_catalogue[] = {
	{ "null-inline", PO_REPLY, probe_case_null, PROBE_CREDITS_ASK, 0,
	  "valid NFSv3 NULL call inline (RDMA_MSG, no chunks)" },
	{ "version-0", PO_ERR_VERS, probe_case_version, 0, 0,
	  "transport version 0: ERR_VERS with range 1..1" },
	{ "version-2", PO_ERR_VERS, probe_case_version, 2, 0,
	  "transport version 2: ERR_VERS with range 1..1" },
	{ "proc-obsolete-msgp", PO_ERR_CHUNK, probe_case_proc, RDMA_MSGP, 0,
	  "RDMA_MSGP (obsolete in version 1)" },
	{ "proc-obsolete-done", PO_ERR_CHUNK, probe_case_proc, RDMA_DONE, 0,
	  "RDMA_DONE (obsolete in version 1)" },
	{ "proc-unknown", PO_ERR_CHUNK, probe_case_proc, 7, 0, "procedure 7" },
	CUT(3, PO_DROP, "3 bytes: no xid to answer (xid-short)"),
	CUT(4, PO_ERR_CHUNK, "xid only (hdr-short)"),
	CUT(8, PO_ERR_CHUNK, "xid, version (hdr-short)"),
	CUT(12, PO_ERR_CHUNK, "xid, version, credits (hdr-short)"),
	CUT(16, PO_ERR_CHUNK, "fixed part only (read-list-overrun)"),
	CUT(20, PO_ERR_CHUNK, "ends after the Read list (write-list-overrun)"),
	CUT(24, PO_ERR_CHUNK, "ends after the Write list (reply-chunk-overrun)"),
	RAW("read-list-overrun", PO_ERR_CHUNK, RAW_READ_OVERRUN,
	    "a Read entry cut after its handle"),
	RAW("write-list-overrun", PO_ERR_CHUNK, RAW_WRITE_OVERRUN,
	    "Write chunk announcing 2 segments, 1 present"),
	RAW("reply-chunk-overrun", PO_ERR_CHUNK, RAW_REPLY_OVERRUN,
	    "Reply chunk announcing 3 segments, 1 present"),
	RAW("list-discriminator", PO_ERR_CHUNK, RAW_DISCRIMINATOR,
	    "Read list discriminator 2"),
	RAW("seg-count-wrap-write", PO_ERR_CHUNK, RAW_WRITE_WRAP,
	    "Write chunk of 0x10000000 segments (x 16 bytes wraps 32 bits)"),
	RAW("seg-count-wrap-reply", PO_ERR_CHUNK, RAW_REPLY_WRAP,
	    "Reply chunk of 0x10000000 segments"),
	RAW("write-chunk-empty", PO_ERR_CHUNK, RAW_WRITE_EMPTY,
	    "zero-segment Write chunk in a call"),
	RAW("reply-chunk-empty", PO_ERR_CHUNK, RAW_REPLY_EMPTY,
	    "zero-segment Reply chunk in a call"),
	RAW_LIMIT("chunk-segs", RAW_WRITE_17SEGS,
		  "Write chunk of 17 segments (this server's limit 16; RFC 8166 sets none)"),
	RAW_LIMIT("write-chunks", RAW_17_WRITES,
		  "17 Write chunks (this server's limit 16; RFC 8166 sets none)"),
	READ("read-position-align", RD_ALIGN, "Read chunk at position 2"),
	READ("read-position-range", RD_RANGE,
	     "Read chunk at position 44, past the 40-byte inline body"),
	READ("read-position-order", RD_ORDER, "Read chunks at positions 40, then 36"),
	READ("read-overlap", RD_OVERLAP,
	     "Read chunk 36+8, then one at 40 (inside the first)"),
	READ("read-position-zero", RD_POS0_MSG, "RDMA_MSG with a position-zero Read chunk"),
	READ("chunk-too-long", RD_TOO_LONG,
	     "Read segment of 0x7fffffff bytes (longer than any payload)"),
	READ("chunk-length-wrap", RD_LEN_WRAP,
	     "Read chunk of 3 x 0x60000000 bytes (sum past 2^32)"),
	READ("nomsg-no-call-chunk", RD_NOMSG_NO_POS0,
	     "RDMA_NOMSG with a Reply chunk but no position-zero Read chunk"),
	RAW_LIMIT("read-chunks", RAW_17_READS,
		  "17 Read chunks of 4 bytes at positions 40, 44, ... (server limit 16)"),
	READ_LIMIT("chunk-segs-read", RD_17_SEGS,
		   "Read chunk of 17 segments (this server's limit 16; RFC 8166 sets none)"),
	{ "read-chunks-16", PO_REPLY, probe_case_read, RD_16_CHUNKS, 0,
	  "16 Read chunks of 4 bytes behind a NULL call: reply" },
	{ "read-segments-odd", PO_REPLY, probe_case_read, RD_16_ODD_SEGS, 0,
	  "one Read chunk of 16 scattered 1-byte segments: reply" },
	RAW("error-to-responder", PO_DROP, RAW_RDMA_ERROR,
	    "RDMA_ERROR (ERR_CHUNK) sent to the server"),
	RAW("backchannel-reply", PO_DROP, RAW_BC_REPLY,
	    "an RPC REPLY sent to the server (no callback outstanding)"),
	RAW("backchannel-reply-chunks", PO_DROP, RAW_BC_REPLY_CHUNKS,
	    "a backchannel REPLY carrying a Write chunk (RFC 8167 5.2): no call waits, dropped"),
	RAW("backchannel-reply-short", PO_DROP, RAW_BC_REPLY_SHORT,
	    "a backchannel REPLY cut after its msg_type: dropped"),
	RAW("backchannel-reply-bad-stat", PO_DROP, RAW_BC_REPLY_BADSTAT,
	    "a backchannel REPLY with reply_stat 7 (RFC 5531 defines 0, 1): dropped"),
	{ "credits-0", PO_REPLY, probe_case_null, 0, 0,
	  "valid NULL asking for 0 credits: reply, grant >= 1" },
	{ "credits-max", PO_REPLY, probe_case_null, UINT32_MAX, 0,
	  "valid NULL asking for 0xFFFFFFFF credits: reply, grant >= 1" },
	{ "over-grant", PO_REPLY, probe_case_over_grant, 0, 0,
	  "grant + 4 NULL calls back to back: all answered" },
	{ "nomsg-position-zero", PO_REPLY, probe_case_nomsg_null, 0, 0,
	  "NULL call sent whole as a position-zero Read chunk (RDMA_NOMSG)" },
	{ "nomsg-position-zero-split", PO_REPLY, probe_case_nomsg_split, 0, 0,
	  "the same, the call in two 20-byte segments in reverse memory order" },
	{ "write-chunk-unused", PO_REPLY, probe_case_write_unused, 0, 0,
	  "NULL call with a Write chunk: reply echoes it with 0 bytes written" },
	{ "reply-chunk-too-small", PO_ERR_CHUNK, probe_case_readdirplus, 64, PK_NEED_FH,
	  "READDIRPLUS of the export root, 64-byte Reply chunk, inline 1024" },
	{ "reply-chunk-readdirplus", PO_REPLY, probe_case_readdirplus, 65536, PK_NEED_FH,
	  "READDIRPLUS of the export root, 64 KiB Reply chunk: NFS3_OK" },
	{ "reply-chunk-16-segments", PO_REPLY, probe_case_readdirplus, 65536,
	  PK_NEED_FH | PK_SPLIT_REPLY,
	  "READDIRPLUS of the export root, Reply chunk of 16 x 4 KiB: NFS3_OK" },
	{ "reply-chunk-bad-handle", PO_DISCONNECT, probe_case_readdirplus, 65536,
	  PK_NEED_FH | PK_BAD_HANDLE,
	  "READDIRPLUS with a Reply chunk whose handle we never registered" },
	{ "reply-disconnect", PO_DISCONNECT, probe_case_reply_abort, 0, PK_NEED_FH,
	  "8 READDIRPLUS with 64 KiB Reply chunks; we disconnect at once" },
	{ "read-bad-handle", PO_DISCONNECT, probe_case_bad_handle, 0, 0,
	  "Read chunk with a handle we never registered: the RDMA Read fails" },
	{ "read-disconnect", PO_DISCONNECT, probe_case_read_abort, 0, 0,
	  "8 calls with 1 MiB Read chunks; we disconnect once the first is taken" },
};

const size_t probe_ncases = sizeof(probe_catalogue) / sizeof(probe_catalogue[0]);

/** probe_list - print the catalogue: name, expected answer, what is sent. */
void probe_list(void)
{
	size_t i;

	for (i = 0; i < probe_ncases; i++)
		printf("%-24s %-10s %s%s\n", probe_catalogue[i].pk_name,
		       probe_catalogue[i].pk_flags & PK_SERVER_LIMIT ? "ERR_CHUNK|REPLY" :
		       probe_outcome_name(probe_catalogue[i].pk_expect),
		       probe_catalogue[i].pk_what,
		       probe_catalogue[i].pk_flags & PK_NEED_FH ? " [--export]" : "");
}
