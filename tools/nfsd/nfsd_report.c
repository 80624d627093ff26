// SPDX-License-Identifier: MIT
/*
 * nfsd_report.c - what rpcrdma-nfsd says on stderr when it stops: its
 * caches, NFSv4.1's clients and recovery, the lock manager and the
 * capture (nfsd_report.h).
 */
#include <stdio.h>
#include <string.h>

#include "nfsd_opts.h"
#include "nfsd_report.h"

#define PROG NFSD_PROG

void nfsd_report_caches_nfs4(struct rpcrdma_nfs3_server *srv,
			     struct rpcrdma_nfs4_server *srv4)
{
	struct rpcrdma_nfs3_fcache_stats fst;

	if (rpcrdma_nfs3_server_fcache_stats(srv, &fst) != 0)
		memset(&fst, 0, sizeof(fst));
	if (fst.fcs_capacity)
		fprintf(stderr, PROG ": open-file cache: %llu hits, %llu misses, %llu evictions, "
			"%llu forgotten, %llu expired, %llu of %llu entries open\n",
			(unsigned long long)fst.fcs_hits, (unsigned long long)fst.fcs_misses,
			(unsigned long long)fst.fcs_evictions,
			(unsigned long long)fst.fcs_forgotten,
			(unsigned long long)fst.fcs_expired,
			(unsigned long long)fst.fcs_entries, (unsigned long long)fst.fcs_capacity);
	if (fst.fcs_dir_capacity)
		fprintf(stderr, PROG ": directory cache: %llu hits, %llu misses, %llu expired, "
			"%llu of %llu entries open, %llu committed\n",
			(unsigned long long)fst.fcs_dir_hits,
			(unsigned long long)fst.fcs_dir_misses,
			(unsigned long long)fst.fcs_dir_expired,
			(unsigned long long)fst.fcs_dir_entries,
			(unsigned long long)fst.fcs_dir_capacity,
			(unsigned long long)fst.fcs_dir_commits);
	if (srv4) {
		struct rpcrdma_nfs4_recovery rv;
		struct rpcrdma_nfs4_stats n4s;

		rpcrdma_nfs4_server_stats(srv4, &n4s);
		fprintf(stderr, PROG ": nfs4 transport thread: %llu COMPOUNDs served there, "
			"%llu sent to a worker\n",
			(unsigned long long)n4s.n4s_transport_calls,
			(unsigned long long)n4s.n4s_transport_defers);
		fprintf(stderr, PROG ": nfs4 clients: %llu CLID_INUSE, %llu WRONG_CRED, "
			"%llu CONN_NOT_BOUND_TO_SESSION, %llu SEQ_FALSE_RETRY refused\n",
			(unsigned long long)n4s.n4s_clid_inuse,
			(unsigned long long)n4s.n4s_wrong_cred,
			(unsigned long long)n4s.n4s_conn_unbound,
			(unsigned long long)n4s.n4s_false_retries);
		rpcrdma_nfs4_server_recovery(srv4, &rv);
		fprintf(stderr, PROG ": nfs4 recovery: %u of %u clients reclaimed, "
			"%llu opens and %llu locks reclaimed, %llu refused in grace, "
			"%llu refused no grace, %u clients recorded, %llu not recorded, "
			"%llu record write errors%s\n",
			rv.n4r_loaded - rv.n4r_pending, rv.n4r_loaded,
			(unsigned long long)rv.n4r_open_reclaims,
			(unsigned long long)rv.n4r_lock_reclaims,
			(unsigned long long)rv.n4r_grace_refused,
			(unsigned long long)rv.n4r_no_grace, rv.n4r_records,
			(unsigned long long)rv.n4r_no_room,
			(unsigned long long)rv.n4r_write_errors,
			rv.n4r_in_grace ? "; still in grace" : "");
	}
}

void nfsd_report_locks(struct rpcrdma_nlm *nlm)
{
	struct rpcrdma_nlm_stats lst;

	rpcrdma_nlm_get_stats(nlm, &lst);
	fprintf(stderr, PROG ": locks: %llu calls, %llu granted (%llu reclaimed), "
		"%llu denied, %llu blocked, %llu callbacks (%llu failed), "
		"%llu refused in grace, %llu refused no room, %llu stale, "
		"%llu hosts notified, %llu hosts freed, %llu calls refused; %llu held\n",
		(unsigned long long)lst.ns_calls, (unsigned long long)lst.ns_granted,
		(unsigned long long)lst.ns_reclaimed, (unsigned long long)lst.ns_denied,
		(unsigned long long)lst.ns_blocked, (unsigned long long)lst.ns_callbacks,
		(unsigned long long)lst.ns_callback_fail,
		(unsigned long long)lst.ns_grace_refused,
		(unsigned long long)lst.ns_nolocks, (unsigned long long)lst.ns_stale,
		(unsigned long long)lst.ns_notified,
		(unsigned long long)lst.ns_freed_hosts,
		(unsigned long long)lst.ns_refused,
		(unsigned long long)lst.ns_ranges);
}

void nfsd_report_capture(struct rpcrdma_capture *capture, const char *path)
{
	struct rpcrdma_capture_stats cst;

	if (!capture)
		return;
	rpcrdma_capture_close(capture, &cst); /* writes what is queued first */
	fprintf(stderr, PROG ": capture %s: %llu frames, %llu bytes, %llu dropped, "
		"%llu write errors, %llu file(s)\n", path,
		(unsigned long long)cst.cs_frames, (unsigned long long)cst.cs_bytes,
		(unsigned long long)cst.cs_drops, (unsigned long long)cst.cs_write_errors,
		(unsigned long long)cst.cs_files);
}
