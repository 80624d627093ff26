// SPDX-License-Identifier: MIT
/*
 * probe_run.c - rpcrdma-probe's run over its catalogue.
 *
 * Each case sends one crafted message (or a short burst) and names the
 * answer RFC 8166 requires, following our codec's rules (rpcrdma-decode(8)
 * names each one): a normal RPC reply, RDMA_ERROR with ERR_VERS (range
 * 1..1) or ERR_CHUNK, a silent drop, or the end of the connection where a
 * case legitimately ends it.  After each case a valid NFSv3 NULL call
 * must still be answered; a case that ended the connection is followed by
 * a reconnect and that NULL call.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "probe.h"

/* Connect again; 0 or a negative errno. */
static int run_reconnect(struct probe_run *run)
{
	probe_conn_close(&run->pr_conn);
	return probe_conn_open(&run->pr_conn, run->pr_opts);
}

/* The NULL call after a case: 0 when answered, else -EIO with @why. */
static int run_null_check(struct probe_run *run, char *why, size_t whylen)
{
	struct probe_conn *pc = &run->pr_conn;
	uint32_t xid = probe_conn_new_xid(pc);
	struct probe_obs ob;
	uint8_t buf[256];

	probe_send_observe(run, buf, probe_null_msg(buf, sizeof(buf), xid, PROBE_CREDITS_ASK), xid,
			   run->pr_opts->po_timeout_ms * 3, &ob);
	if (ob.ob_kind == PO_REPLY && ob.ob_accept == RPC_ACCEPT_SUCCESS)
		return 0;
	snprintf(why, whylen, "NULL after: %s", ob.ob_text);
	return -EIO;
}

static struct probe_result *run_result(struct probe_run *run)
{
	struct probe_result *r;

	if (run->pr_nresults == run->pr_cap) {
		uint32_t cap = run->pr_cap ? run->pr_cap * 2 : 64;

		r = realloc(run->pr_results, cap * sizeof(*r));
		if (!r)
			return NULL;
		run->pr_results = r;
		run->pr_cap = cap;
	}
	r = &run->pr_results[run->pr_nresults++];
	memset(r, 0, sizeof(*r));
	return r;
}

/*
 * What the Linux kernel's nfsd is known to answer where it differs from
 * the expectation (observed with Debian's 6.12 kernel, docs/probe.md):
 * the outcome name, then "/rule" when our codec rejects the answer, then
 * "+closed" when the connection ended before the NULL call after it.
 * With --linux such an answer is reported as DIFF, not as a failure.
 */
static const struct {
	const char *lk_case;
	const char *lk_sig;
} probe_linux_known[] = {
	{ "version-0", "ERR_VERS/version" },   /* version field echoes the call's */
	{ "version-2", "ERR_VERS/version" },
	{ "proc-obsolete-done", "DROP" },      /* RDMA_DONE is ignored */
	{ "cut-3", "ERR_CHUNK/version" },      /* answered without a whole xid */
	{ "cut-4", "ERR_CHUNK/version" },
	{ "chunk-segs", "OTHER/chunk-segs" },  /* accepted: other limits */
	{ "write-chunks", "OTHER/write-chunks" },
	/* ERR_CHUNK, then the connection closed; the ERR_CHUNK may be lost */
	{ "read-position-range", "DISCONNECT|ERR_CHUNK+closed" },
	{ "read-overlap", "DISCONNECT|ERR_CHUNK+closed" },
	{ "read-position-order", "REPLY" },
	{ "read-position-zero", "REPLY" },
	{ "nomsg-no-call-chunk", "DROP" },
};

/*
 * Is @sig what Linux is known to answer to case @name?  A known answer
 * may list alternatives separated by '|'.
 */
static bool linux_known(const char *name, const char *sig)
{
	size_t i, n = strlen(sig);
	const char *p;

	for (i = 0; i < sizeof(probe_linux_known) / sizeof(probe_linux_known[0]); i++) {
		if (strcmp(probe_linux_known[i].lk_case, name))
			continue;
		for (p = probe_linux_known[i].lk_sig; p; p = strchr(p, '|'), p = p ? p + 1 : p)
			if (!strncmp(p, sig, n) && (p[n] == '|' || !p[n]))
				return true;
		return false;
	}
	return false;
}

/* How the NULL call after a case went. */
enum run_after_status {
	AFTER_OK = 0,     /* answered */
	AFTER_CLOSED = 1, /* the connection ended before the answer */
	AFTER_FAIL = -1,  /* no answer, or no new connection */
};

/*
 * The NULL check after a case: on the same connection, or on a new one
 * when the case ended it.
 */
static enum run_after_status run_after(struct probe_run *run, struct probe_result *r)
{
	struct probe_conn *pc = &run->pr_conn;
	bool reconnected = false;
	int rc;

	if (!pc->pc_up) {
		rc = run_reconnect(run);
		if (rc) {
			snprintf(r->pr_after, sizeof(r->pr_after), "reconnect failed: %s",
				 strerror(-rc));
			run->pr_fatal = true;
			return AFTER_FAIL;
		}
		reconnected = true;
	}
	if (run_null_check(run, r->pr_after, sizeof(r->pr_after))) {
		bool closed = !pc->pc_up && !reconnected;

		/* Start the next case on a fresh connection. */
		probe_conn_close(pc);
		return closed ? AFTER_CLOSED : AFTER_FAIL;
	}
	snprintf(r->pr_after, sizeof(r->pr_after), "%s",
		 reconnected ? "reconnected, NULL ok" : "NULL ok");
	return AFTER_OK;
}

/* Run one case and the NULL check after it. */
static void run_case(struct probe_run *run, const struct probe_case *pk,
		     struct probe_result *r)
{
	struct probe_conn *pc = &run->pr_conn;
	enum run_after_status after;
	bool ok, alive;
	struct probe_obs ob;
	char sig[64];
	int rc;

	if (run->pr_opts->po_verbose)
		fprintf(stderr, "rpcrdma-probe: %s\n", pk->pk_name);
	if (!pc->pc_up) {
		rc = run_reconnect(run);
		if (rc) {
			snprintf(r->pr_observed, sizeof(r->pr_observed),
				 "not run: cannot connect: %s", strerror(-rc));
			run->pr_fatal = true;
			return;
		}
	}
	ok = pk->pk_fn(run, pk, &ob);
	snprintf(r->pr_observed, sizeof(r->pr_observed), "%s", ob.ob_text);
	/* An answer our codec rejects never passes; nor does a lost connection. */
	/* past a limit of this server's own, RFC 8166 allows both answers */
	ok = ok && (ob.ob_kind == pk->pk_expect ||
		    ((pk->pk_flags & PK_SERVER_LIMIT) && ob.ob_kind == PO_REPLY)) &&
	     !ob.ob_rule[0] &&
	     (pc->pc_up || pk->pk_expect == PO_DISCONNECT);
	after = run_after(run, r);
	alive = after == AFTER_OK;
	if (after == AFTER_CLOSED && !run->pr_fatal) {
		/* The server closed the connection after its answer: is it
		 * still serving? */
		struct probe_result again;

		alive = run_after(run, &again) == AFTER_OK;
		snprintf(r->pr_after + strlen(r->pr_after),
			 sizeof(r->pr_after) - strlen(r->pr_after), "; %s", again.pr_after);
	}
	r->pr_pass = ok && after == AFTER_OK;
	snprintf(sig, sizeof(sig), "%s%s%s%s", probe_outcome_name(ob.ob_kind),
		 ob.ob_rule[0] ? "/" : "", ob.ob_rule,
		 after == AFTER_CLOSED ? "+closed" : "");
	r->pr_linux_diff = !r->pr_pass && alive && run->pr_opts->po_linux &&
			   linux_known(pk->pk_name, sig);
}

/**
 * probe_run_all - run the whole catalogue against the server.
 * @run: options set, connection open (pr_conn), file handle if any.
 *
 * Return: the number of failed cases (0: every case passed).
 */
int probe_run_all(struct probe_run *run)
{
	int failed = 0;
	size_t i;

	for (i = 0; i < probe_ncases; i++) {
		const struct probe_case *pk = &probe_catalogue[i];
		struct probe_result *r = run_result(run);

		if (!r)
			return -ENOMEM;
		snprintf(r->pr_name, sizeof(r->pr_name), "%s", pk->pk_name);
		snprintf(r->pr_expected, sizeof(r->pr_expected), "%s%s%s",
			 probe_outcome_name(pk->pk_expect),
			 pk->pk_expect == PO_ERR_VERS ? " 1..1" : "",
			 pk->pk_flags & PK_SERVER_LIMIT ? "|REPLY" : "");
		if (run->pr_fatal) {
			snprintf(r->pr_observed, sizeof(r->pr_observed),
				 "not run: the server is gone");
			failed++;
			continue;
		}
		if ((pk->pk_flags & PK_NEED_FH) && !run->pr_have_fh) {
			r->pr_skipped = !run->pr_opts->po_export;
			snprintf(r->pr_observed, sizeof(r->pr_observed), "not run: %s",
				 run->pr_opts->po_export ? run->pr_mount_err : "no --export");
			r->pr_pass = r->pr_skipped;
			if (!r->pr_pass)
				failed++;
			continue;
		}
		run_case(run, pk, r);
		if (!r->pr_pass && !r->pr_linux_diff)
			failed++;
	}
	return failed;
}
