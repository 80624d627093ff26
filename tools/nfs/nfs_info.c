// SPDX-License-Identifier: MIT
/*
 * nfs_info.c - rpcrdma-nfs ls, stat, df and null, and the --stats counters.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nfs.h"

static void mode_string(const struct rpcrdma_nfsc_attr *a, char out[11])
{
	static const char types[] = "?-dbcls p";
	static const char rwx[] = "rwxrwxrwx";
	int i;

	out[0] = a->at_type < 8 ? types[a->at_type] : '?';
	if (a->at_type == NFSC_FIFO)
		out[0] = 'p';
	for (i = 0; i < 9; i++)
		out[i + 1] = (a->at_mode & (0400u >> i)) ? rwx[i] : '-';
	if (a->at_mode & 04000)
		out[3] = out[3] == 'x' ? 's' : 'S';
	if (a->at_mode & 02000)
		out[6] = out[6] == 'x' ? 's' : 'S';
	if (a->at_mode & 01000)
		out[9] = out[9] == 'x' ? 't' : 'T';
	out[10] = '\0';
}

struct ls_entry {
	char *le_name;
	bool le_has_attr;
	struct rpcrdma_nfsc_attr le_attr;
	struct rpcrdma_nfsc_fh le_fh;
	bool le_has_fh;
};

struct ls_list {
	struct ls_entry *ll_v;
	size_t ll_n, ll_cap;
};

static int ls_collect(const char *name, uint64_t fileid, const struct rpcrdma_nfsc_attr *attr,
		      const struct rpcrdma_nfsc_fh *fh, void *arg)
{
	struct ls_list *l = arg;
	struct ls_entry *e;

	(void)fileid;
	if (!strcmp(name, ".") || !strcmp(name, ".."))
		return 0;
	if (l->ll_n == l->ll_cap) {
		size_t cap = l->ll_cap ? l->ll_cap * 2 : 256;
		struct ls_entry *v = realloc(l->ll_v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		l->ll_v = v;
		l->ll_cap = cap;
	}
	e = &l->ll_v[l->ll_n];
	memset(e, 0, sizeof(*e));
	e->le_name = strdup(name);
	if (!e->le_name)
		return -ENOMEM;
	if (attr) {
		e->le_has_attr = true;
		e->le_attr = *attr;
	}
	if (fh) {
		e->le_has_fh = true;
		e->le_fh = *fh;
	}
	l->ll_n++;
	return 0;
}

static int ls_cmp(const void *a, const void *b)
{
	return strcmp(((const struct ls_entry *)a)->le_name,
		      ((const struct ls_entry *)b)->le_name);
}

static void print_long(struct rpcrdma_nfsc *nc, const char *name,
		       const struct rpcrdma_nfsc_attr *a, const struct rpcrdma_nfsc_fh *fh)
{
	char mode[11], when[32], target[4097];
	time_t t = (time_t)a->at_mtime_s;
	struct tm tm;

	mode_string(a, mode);
	gmtime_r(&t, &tm);
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M", &tm);
	printf("%s %3u %5u %5u %10" PRIu64 " %s %s", mode, a->at_nlink, a->at_uid,
	       a->at_gid, a->at_size, when, name);
	if (a->at_type == NFSC_LNK && fh &&
	    rpcrdma_nfsc_readlink(nc, fh, target, sizeof(target)) == 0)
		printf(" -> %s", target);
	putchar('\n');
}

int cmd_ls(struct rpcrdma_nfsc *nc, const char *path, bool lng)
{
	struct rpcrdma_nfsc_attr attr;
	struct rpcrdma_nfsc_fh fh;
	struct ls_list l = { 0 };
	size_t i;
	int rc;

	rc = rpcrdma_nfsc_lookup_path(nc, path, &fh, &attr);
	if (rc)
		return fail(path, rc);
	if (attr.at_type != NFSC_DIR) {
		if (lng)
			print_long(nc, path, &attr, &fh);
		else
			printf("%s\n", path);
		return 0;
	}
	rc = rpcrdma_nfsc_readdirplus(nc, &fh, ls_collect, &l);
	if (!rc) {
		qsort(l.ll_v, l.ll_n, sizeof(*l.ll_v), ls_cmp);
		for (i = 0; i < l.ll_n; i++) {
			struct ls_entry *e = &l.ll_v[i];

			if (!lng) {
				printf("%s\n", e->le_name);
				continue;
			}
			if (!e->le_has_attr && e->le_has_fh &&
			    rpcrdma_nfsc_getattr(nc, &e->le_fh, &e->le_attr) == 0)
				e->le_has_attr = true;
			if (e->le_has_attr)
				print_long(nc, e->le_name, &e->le_attr,
					   e->le_has_fh ? &e->le_fh : NULL);
			else
				printf("?????????? ? ? ? ? ? %s\n", e->le_name);
		}
	}
	for (i = 0; i < l.ll_n; i++)
		free(l.ll_v[i].le_name);
	free(l.ll_v);
	if (fflush(stdout) && !rc)
		rc = -EIO;
	return rc ? fail(path, rc) : 0;
}

static const char *type_name(uint32_t t)
{
	switch (t) {
	case NFSC_REG: return "regular file";
	case NFSC_DIR: return "directory";
	case NFSC_BLK: return "block device";
	case NFSC_CHR: return "character device";
	case NFSC_LNK: return "symbolic link";
	case NFSC_SOCK: return "socket";
	case NFSC_FIFO: return "fifo";
	default: return "unknown";
	}
}

int cmd_stat(struct rpcrdma_nfsc *nc, const char *path)
{
	struct rpcrdma_nfsc_attr a;
	struct rpcrdma_nfsc_fh fh;
	char mode[11];
	int rc;

	rc = rpcrdma_nfsc_lookup_path(nc, path, &fh, &a);
	if (rc)
		return fail(path, rc);
	mode_string(&a, mode);
	printf("  File: %s\n", path);
	printf("  Size: %-12" PRIu64 " Used: %-12" PRIu64 " %s\n", a.at_size, a.at_used,
	       type_name(a.at_type));
	printf("FileId: %-12" PRIu64 " Links: %-5u FsId: %" PRIu64 "\n", a.at_fileid,
	       a.at_nlink, a.at_fsid);
	printf("Access: (%04o/%s)  Uid: %u  Gid: %u\n", a.at_mode & 07777, mode, a.at_uid,
	       a.at_gid);
	printf("Access: %u.%09u\nModify: %u.%09u\nChange: %u.%09u\n", a.at_atime_s,
	       a.at_atime_ns, a.at_mtime_s, a.at_mtime_ns, a.at_ctime_s, a.at_ctime_ns);
	return 0;
}

int cmd_null(struct rpcrdma_nfsc *nc)
{
	int rc = rpcrdma_nfsc_null(nc);

	return rc ? fail("null", rc) : 0;
}

int cmd_df(struct rpcrdma_nfsc *nc, const char *spec)
{
	struct rpcrdma_nfsc_fsstat st;
	struct rpcrdma_nfsc_fh root;
	uint64_t used;
	int rc;

	rpcrdma_nfsc_root(nc, &root);
	rc = rpcrdma_nfsc_fsstat(nc, &root, &st);
	if (rc)
		return fail("df", rc);
	used = st.fs_tbytes - st.fs_fbytes;
	printf("%-30s %12s %12s %12s %4s\n", "Filesystem", "1K-blocks", "Used", "Available",
	       "Use%");
	printf("%-30s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 " %3u%%\n", spec,
	       st.fs_tbytes / 1024, used / 1024, st.fs_abytes / 1024,
	       used + st.fs_abytes ? (unsigned)((used * 100 + used + st.fs_abytes - 1) /
						(used + st.fs_abytes)) : 0);
	return 0;
}

void print_stats(struct rpcrdma_nfsc *nc)
{
	struct rpcrdma_clnt_stats s;
	unsigned i;

	rpcrdma_nfsc_get_stats(nc, &s);
	fprintf(stderr, "{\"calls\":%" PRIu64 ",\"inline\":%" PRIu64 ",\"read_chunks\":%" PRIu64
		",\"nomsg\":%" PRIu64 ",\"write_chunks\":%" PRIu64 ",\"reply_chunks\":%" PRIu64
		",\"replies\":%" PRIu64 ",\"rdma_errors\":%" PRIu64 ",\"bad_replies\":%" PRIu64
		",\"unknown_xid\":%" PRIu64 ",\"timeouts\":%" PRIu64 ",\"credit_waits\":%" PRIu64
		",\"reconnects\":%" PRIu64 ",\"retransmits\":%" PRIu64
		",\"reg_per_call\":%" PRIu64 ",\"reg_persistent\":%" PRIu64
		",\"mw_binds\":%" PRIu64 ",\"remote_invalidates\":%" PRIu64
		",\"bad_invalidates\":%" PRIu64 ",\"aborts\":%" PRIu64
		",\"late_replies\":%" PRIu64 ",\"fence_disconnects\":%" PRIu64
		",\"credits\":%" PRIu64 ",\"inline_send\":%u,\"inline_recv\":%u"
		",\"rsize\":%u,\"wsize\":%u,\"connections\":%u",
		s.cs_calls, s.cs_inline, s.cs_read_chunks, s.cs_nomsg, s.cs_write_chunks,
		s.cs_reply_chunks, s.cs_replies, s.cs_rdma_errors, s.cs_bad_replies,
		s.cs_unknown_xid, s.cs_timeouts, s.cs_credit_waits, s.cs_reconnects,
		s.cs_retransmits, s.cs_reg_per_call, s.cs_reg_persistent, s.cs_mw_binds,
		s.cs_remote_invalidates, s.cs_bad_invalidates, s.cs_aborts, s.cs_late_replies,
		s.cs_fence_disconnects, s.cs_credits,
		rpcrdma_clnt_inline_send(rpcrdma_nfsc_clnt(nc)),
		rpcrdma_clnt_inline_recv(rpcrdma_nfsc_clnt(nc)), rpcrdma_nfsc_rsize(nc),
		rpcrdma_nfsc_wsize(nc), rpcrdma_nfsc_nconnect(nc));
	/* calls carried by each connection (--nconnect) */
	fputs(",\"per_connection_calls\":[", stderr);
	for (i = 0; i < rpcrdma_nfsc_nconnect(nc); i++) {
		rpcrdma_clnt_get_stats(rpcrdma_nfsc_conn(nc, i), &s);
		fprintf(stderr, "%s%" PRIu64, i ? "," : "", s.cs_calls);
	}
	fputs("]}\n", stderr);
}
