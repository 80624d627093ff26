// SPDX-License-Identifier: MIT
/*
 * rpcrdma-nfs - an NFSv3 client over RPC-over-RDMA, as a command-line tool.
 *
 *   rpcrdma-nfs [options] SERVER:/export COMMAND [ARGS]
 *
 * MOUNTs the export over TCP, then runs one command over NFS/RDMA.  get
 * and put move files in rsize/wsize pieces with several calls in flight
 * (up to the credit window).  See rpcrdma-nfs(1).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <libgen.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <rpcrdma/clnt.h>

#define PROG "rpcrdma-nfs"
#define EXIT_USAGE 2
#define MAX_STREAMS 16u

static bool opt_quiet, opt_stats;
static unsigned opt_streams = 8;

static void usage(FILE *f)
{
	fprintf(f,
		"usage: " PROG " [options] SERVER:/export COMMAND [ARGS]\n"
		"commands:\n"
		"  ls [-l] PATH          list a directory (or show a file)\n"
		"  get REMOTE LOCAL      copy a file from the server (LOCAL - : stdout)\n"
		"  put LOCAL REMOTE      copy a file to the server\n"
		"  cat PATH              print a file\n"
		"  stat PATH             show attributes\n"
		"  mkdir PATH | rm PATH | rmdir PATH\n"
		"  mv FROM TO            rename\n"
		"  ln -s TARGET LINK     make a symbolic link\n"
		"  ln TARGET LINK        make a hard link\n"
		"  chmod MODE PATH       set the permission bits (octal)\n"
		"  readlink PATH         print a symbolic link's target\n"
		"  df                    file system usage\n"
		"options:\n"
		"  --port N         NFS/RDMA port (default 20049)\n"
		"  --mount-port N   MOUNT port over TCP (default: ask rpcbind)\n"
		"  --source ADDR    local address to connect from\n"
		"  --rsize N        READ size in bytes (default 1 MiB, capped by the server)\n"
		"  --wsize N        WRITE size in bytes (default 1 MiB, capped by the server)\n"
		"  --credits N      most calls in flight (default 32)\n"
		"  --streams N      parallel READ/WRITE calls for get/put (default 8)\n"
		"  --timeout SEC    per call (default 60)\n"
		"  --retries N      reconnect and resend a call up to N times (default 0)\n"
		"  --mw             get/put: expose each piece through a type 2 memory window\n"
		"                   bound for its call only (default; per-call registration\n"
		"                   on devices without windows)\n"
		"  --persistent-mr  get/put: keep the buffer registered for remote access\n"
		"                   (no per-call work, weakest isolation)\n"
		"  --per-call-mr    get/put: register each piece for its call (ibv_reg_mr)\n"
		"  --quiet          no progress bar\n"
		"  --stats          print the transport's counters at the end (stderr)\n"
		"  -v, --verbose    log connection events\n"
		"  -h, --help\n");
}

/* On a usage error: one line, as the usual tools do. */
static int usage_error(void)
{
	fprintf(stderr, "usage: " PROG " [options] SERVER:/export COMMAND [ARGS]\n"
		"Try '" PROG " --help' for more information.\n");
	return EXIT_USAGE;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, PROG ": %s: %s\n", what, strerror(-err));
	return 1;
}

/* Split "a/b/c" into the parent's handle and "c". */
static int resolve_parent(struct rpcrdma_nfsc *nc, const char *path,
			  struct rpcrdma_nfsc_fh *dir, char *name, size_t cap)
{
	char *copy = strdup(path), *slash;
	size_t len;
	int rc;

	if (!copy)
		return -ENOMEM;
	len = strlen(copy);
	while (len > 1 && copy[len - 1] == '/')
		copy[--len] = '\0';
	slash = strrchr(copy, '/');
	if (slash) {
		*slash = '\0';
		if (strlen(slash + 1) >= cap) {
			free(copy);
			return -ENAMETOOLONG;
		}
		strcpy(name, slash + 1);
		rc = rpcrdma_nfsc_lookup_path(nc, copy, dir, NULL);
	} else {
		if (len >= cap) {
			free(copy);
			return -ENAMETOOLONG;
		}
		strcpy(name, copy);
		rpcrdma_nfsc_root(nc, dir);
		rc = 0;
	}
	if (!rc && (!name[0] || !strcmp(name, ".") || !strcmp(name, "..")))
		rc = -EINVAL;
	free(copy);
	return rc;
}

/* ---- progress ---- */

struct progress {
	const char *pg_name;
	uint64_t pg_total;
	_Atomic uint64_t pg_done;
	struct timespec pg_start;
	bool pg_show;
	double pg_last;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static void progress_init(struct progress *pg, const char *name, uint64_t total)
{
	memset(pg, 0, sizeof(*pg));
	pg->pg_name = name;
	pg->pg_total = total;
	pg->pg_show = !opt_quiet && isatty(STDERR_FILENO) && total >= (4u << 20);
	pg->pg_last = now_s();
	clock_gettime(CLOCK_MONOTONIC, &pg->pg_start);
}

static void progress_draw(struct progress *pg, bool final)
{
	double el, t = now_s();
	uint64_t done = atomic_load(&pg->pg_done);

	if (!pg->pg_show || (!final && t - pg->pg_last < 0.2))
		return;
	pg->pg_last = t;
	el = t - ((double)pg->pg_start.tv_sec + pg->pg_start.tv_nsec / 1e9);
	fprintf(stderr, "\r%-30.30s %3u%% %10" PRIu64 " bytes %8.1f MB/s%s",
		pg->pg_name, pg->pg_total ? (unsigned)(done * 100 / pg->pg_total) : 100,
		done, el > 0 ? done / el / 1e6 : 0.0, final ? "\n" : "");
}

/* ---- get / put: windows of --streams pieces, pipelined by the library ---- */

static unsigned opt_retries;
/* Default: windows over a registered transfer buffer (strongest
 * isolation without a system call per call). */
static bool opt_persistent = true;

/* --persistent-mr: keep the transfer buffer registered for the whole
 * transfer instead of registering each READ/WRITE's piece per call. */
static void buf_register(struct rpcrdma_nfsc *nc, void *buf, size_t len)
{
	int rc;

	if (!opt_persistent || !buf)
		return;
	rc = rpcrdma_clnt_register_buffer(rpcrdma_nfsc_clnt(nc), buf, len);
	if (rc && rc != -EOPNOTSUPP)
		fprintf(stderr, PROG ": warning: cannot keep the buffer registered (%s): "
			"registering per call\n", strerror(-rc));
}

static void buf_unregister(struct rpcrdma_nfsc *nc, void *buf)
{
	if (opt_persistent && buf)
		rpcrdma_clnt_unregister_buffer(rpcrdma_nfsc_clnt(nc), buf);
}

static bool retryable(int rc)
{
	return rc == -ECONNRESET || rc == -ENOTCONN || rc == -ETIMEDOUT;
}

/*
 * After a window failed because the connection went away: a NULL call
 * goes through the transport's reconnect-and-retry path.  True when the
 * window may be tried again.
 */
static bool retry_window(struct rpcrdma_nfsc *nc, int rc, unsigned *tries)
{
	if (!retryable(rc) || *tries >= opt_retries)
		return false;
	(*tries)++;
	return rpcrdma_nfsc_null(nc) == 0;
}

static int cmd_get(struct rpcrdma_nfsc *nc, const char *remote, const char *local, bool cat)
{
	struct rpcrdma_nfsc_attr attr;
	struct rpcrdma_nfsc_fh fh;
	struct progress pg;
	uint64_t window = (uint64_t)rpcrdma_nfsc_rsize(nc) * opt_streams, off = 0, n;
	char *lpath = NULL;
	unsigned tries = 0;
	uint8_t *buf = NULL;
	struct stat st;
	int rc, fd;

	rc = rpcrdma_nfsc_lookup_path(nc, remote, &fh, &attr);
	if (rc)
		return fail(remote, rc);
	if (attr.at_type == NFSC_DIR)
		return fail(remote, -EISDIR);
	if (cat || !strcmp(local, "-")) {
		fd = STDOUT_FILENO;
	} else {
		if (stat(local, &st) == 0 && S_ISDIR(st.st_mode)) {
			char *r = strdup(remote);

			if (!r || asprintf(&lpath, "%s/%s", local, basename(r)) < 0) {
				free(r);
				return fail(local, -ENOMEM);
			}
			free(r);
			local = lpath;
		}
		fd = open(local, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
		if (fd < 0) {
			rc = fail(local, -errno);
			free(lpath);
			return rc;
		}
	}
	buf = malloc(window);
	rc = buf ? 0 : -ENOMEM;
	buf_register(nc, buf, window);
	progress_init(&pg, remote, attr.at_size);
	/* Until a window comes back short: the file may have grown. */
	while (!rc) {
		rc = rpcrdma_nfsc_read_pipelined(nc, &fh, off, buf, window, opt_streams, &n);
		if (rc && retry_window(nc, rc, &tries)) {
			rc = 0;
			continue;
		}
		if (rc)
			break;
		if (n && (fd == STDOUT_FILENO ? fwrite(buf, 1, n, stdout) != n :
			  pwrite(fd, buf, n, (off_t)off) != (ssize_t)n))
			rc = fd == STDOUT_FILENO ? -EIO : -errno;
		off += n;
		atomic_store(&pg.pg_done, off);
		progress_draw(&pg, false);
		if (n < window)
			break;
	}
	progress_draw(&pg, true);
	buf_unregister(nc, buf);
	free(buf);
	if (fd == STDOUT_FILENO) {
		if (fflush(stdout) && !rc)
			rc = -EIO;
	} else if (close(fd) && !rc) {
		rc = -errno;
	}
	if (rc)
		fail(remote, rc);
	free(lpath);
	return rc ? 1 : 0;
}

/* Send the whole local file; *@changed when the write verifier moved. */
static int put_all(struct rpcrdma_nfsc *nc, const struct rpcrdma_nfsc_fh *fh, int fd,
		   uint64_t size, uint32_t stable, struct progress *pg, uint8_t verf[8],
		   bool *changed)
{
	uint64_t window = (uint64_t)rpcrdma_nfsc_wsize(nc) * opt_streams, off = 0, len;
	uint8_t *buf = malloc(window ? window : 1), v[8];
	bool first = true, ch;
	unsigned tries = 0;
	ssize_t r;
	int rc = buf ? 0 : -ENOMEM;

	*changed = false;
	buf_register(nc, buf, window ? window : 1);
	atomic_store(&pg->pg_done, 0);
	while (!rc && off < size) {
		len = size - off < window ? size - off : window;
		r = pread(fd, buf, len, (off_t)off);
		if (r != (ssize_t)len) {
			rc = r < 0 ? -errno : -EIO;
			break;
		}
		rc = rpcrdma_nfsc_write_pipelined(nc, fh, off, buf, len, opt_streams, stable,
						  v, &ch);
		if (rc && retry_window(nc, rc, &tries)) {
			rc = 0;
			*changed = true; /* the server may have restarted */
			continue;
		}
		if (rc)
			break;
		if (ch || (!first && memcmp(v, verf, 8)))
			*changed = true;
		memcpy(verf, v, 8);
		first = false;
		off += len;
		atomic_store(&pg->pg_done, off);
		progress_draw(pg, false);
	}
	buf_unregister(nc, buf);
	free(buf);
	return rc;
}

static int cmd_put(struct rpcrdma_nfsc *nc, const char *local, const char *remote)
{
	struct rpcrdma_nfsc_fh dir, fh;
	struct rpcrdma_nfsc_attr attr;
	char name[256], *lcopy, *rpath = NULL;
	uint8_t verf[8] = { 0 }, cverf[8];
	struct progress pg;
	struct stat st;
	bool changed;
	int rc, fd;

	fd = open(local, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(local, -errno);
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return fail(local, S_ISDIR(st.st_mode) ? -EISDIR : -EINVAL);
	}
	/* An existing remote directory receives the file under its own name. */
	if (rpcrdma_nfsc_lookup_path(nc, remote, &fh, &attr) == 0 && attr.at_type == NFSC_DIR) {
		lcopy = strdup(local);
		if (!lcopy || asprintf(&rpath, "%s/%s", remote, basename(lcopy)) < 0) {
			free(lcopy);
			close(fd);
			return fail(remote, -ENOMEM);
		}
		free(lcopy);
		remote = rpath;
	}
	rc = resolve_parent(nc, remote, &dir, name, sizeof(name));
	if (!rc)
		rc = rpcrdma_nfsc_create(nc, &dir, name, st.st_mode & 0777, true, &fh);
	if (rc)
		goto out;
	progress_init(&pg, remote, (uint64_t)st.st_size);
	rc = put_all(nc, &fh, fd, (uint64_t)st.st_size, 0, &pg, verf, &changed);
	if (!rc && st.st_size) {
		rc = rpcrdma_nfsc_commit(nc, &fh, 0, 0, cverf);
		/* A changed write verifier means the server restarted and may
		 * have lost UNSTABLE data (RFC 1813 3.3.7): write it all again,
		 * FILE_SYNC this time, so no verifier is needed. */
		if (!rc && (changed || memcmp(verf, cverf, 8))) {
			if (!opt_quiet)
				fprintf(stderr, PROG ": %s: the server restarted during the "
					"transfer: writing the file again\n", remote);
			rc = put_all(nc, &fh, fd, (uint64_t)st.st_size, 2, &pg, verf, &changed);
		}
	}
	progress_draw(&pg, true);
out:
	close(fd);
	if (rc)
		fail(remote, rc);
	free(rpath);
	return rc ? 1 : 0;
}

/* ---- ls / stat ---- */

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

static int cmd_ls(struct rpcrdma_nfsc *nc, const char *path, bool lng)
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

static int cmd_stat(struct rpcrdma_nfsc *nc, const char *path)
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

static int cmd_df(struct rpcrdma_nfsc *nc, const char *spec)
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

/* mkdir, rm, rmdir */
static int cmd_dirop(struct rpcrdma_nfsc *nc, const char *cmd, const char *path)
{
	struct rpcrdma_nfsc_fh dir;
	char name[256];
	int rc;

	rc = resolve_parent(nc, path, &dir, name, sizeof(name));
	if (!rc) {
		if (!strcmp(cmd, "mkdir"))
			rc = rpcrdma_nfsc_mkdir(nc, &dir, name, 0755, NULL);
		else if (!strcmp(cmd, "rm"))
			rc = rpcrdma_nfsc_remove(nc, &dir, name);
		else
			rc = rpcrdma_nfsc_rmdir(nc, &dir, name);
	}
	return rc ? fail(path, rc) : 0;
}

static int cmd_mv(struct rpcrdma_nfsc *nc, const char *from, const char *to)
{
	struct rpcrdma_nfsc_fh fdir, tdir;
	char fname[256], tname[256];
	int rc;

	rc = resolve_parent(nc, from, &fdir, fname, sizeof(fname));
	if (rc)
		return fail(from, rc);
	rc = resolve_parent(nc, to, &tdir, tname, sizeof(tname));
	if (rc)
		return fail(to, rc);
	rc = rpcrdma_nfsc_rename(nc, &fdir, fname, &tdir, tname);
	return rc ? fail(from, rc) : 0;
}

static int cmd_ln(struct rpcrdma_nfsc *nc, const char *target, const char *link)
{
	struct rpcrdma_nfsc_fh dir;
	char name[256];
	int rc;

	rc = resolve_parent(nc, link, &dir, name, sizeof(name));
	if (!rc)
		rc = rpcrdma_nfsc_symlink(nc, &dir, name, target);
	return rc ? fail(link, rc) : 0;
}

/* ln TARGET LINK: a hard link (LINK). */
static int cmd_hardlink(struct rpcrdma_nfsc *nc, const char *target, const char *link)
{
	struct rpcrdma_nfsc_fh dir, fh;
	char name[256];
	int rc;

	rc = rpcrdma_nfsc_lookup_path(nc, target, &fh, NULL);
	if (rc)
		return fail(target, rc);
	rc = resolve_parent(nc, link, &dir, name, sizeof(name));
	if (!rc)
		rc = rpcrdma_nfsc_link(nc, &fh, &dir, name);
	return rc ? fail(link, rc) : 0;
}

/* chmod MODE PATH (octal mode, SETATTR). */
static int cmd_chmod(struct rpcrdma_nfsc *nc, const char *mode, const char *path)
{
	struct rpcrdma_nfsc_sattr sa = { .sa_set_mode = true };
	struct rpcrdma_nfsc_fh fh;
	char *end;
	unsigned long m;
	int rc;

	errno = 0;
	m = strtoul(mode, &end, 8);
	if (errno || end == mode || *end || m > 07777) {
		fprintf(stderr, PROG ": chmod: invalid mode '%s' (octal)\n", mode);
		return EXIT_USAGE;
	}
	sa.sa_mode = (uint32_t)m;
	rc = rpcrdma_nfsc_lookup_path(nc, path, &fh, NULL);
	if (!rc)
		rc = rpcrdma_nfsc_setattr(nc, &fh, &sa);
	return rc ? fail(path, rc) : 0;
}

static int cmd_readlink(struct rpcrdma_nfsc *nc, const char *path)
{
	struct rpcrdma_nfsc_fh dir, fh;
	char name[256], target[4097];
	int rc;

	rc = resolve_parent(nc, path, &dir, name, sizeof(name));
	if (!rc)
		rc = rpcrdma_nfsc_lookup(nc, &dir, name, &fh, NULL);
	if (!rc)
		rc = rpcrdma_nfsc_readlink(nc, &fh, target, sizeof(target));
	if (rc)
		return fail(path, rc);
	printf("%s\n", target);
	return 0;
}

static void print_stats(struct rpcrdma_nfsc *nc)
{
	struct rpcrdma_clnt_stats s;

	rpcrdma_clnt_get_stats(rpcrdma_nfsc_clnt(nc), &s);
	fprintf(stderr, "{\"calls\":%" PRIu64 ",\"inline\":%" PRIu64 ",\"read_chunks\":%" PRIu64
		",\"nomsg\":%" PRIu64 ",\"write_chunks\":%" PRIu64 ",\"reply_chunks\":%" PRIu64
		",\"replies\":%" PRIu64 ",\"rdma_errors\":%" PRIu64 ",\"bad_replies\":%" PRIu64
		",\"unknown_xid\":%" PRIu64 ",\"timeouts\":%" PRIu64 ",\"credit_waits\":%" PRIu64
		",\"reconnects\":%" PRIu64 ",\"retransmits\":%" PRIu64
		",\"reg_per_call\":%" PRIu64 ",\"reg_persistent\":%" PRIu64
		",\"mw_binds\":%" PRIu64
		",\"credits\":%" PRIu64 ",\"inline_send\":%u,\"inline_recv\":%u"
		",\"rsize\":%u,\"wsize\":%u}\n",
		s.cs_calls, s.cs_inline, s.cs_read_chunks, s.cs_nomsg, s.cs_write_chunks,
		s.cs_reply_chunks, s.cs_replies, s.cs_rdma_errors, s.cs_bad_replies,
		s.cs_unknown_xid, s.cs_timeouts, s.cs_credit_waits, s.cs_reconnects,
		s.cs_retransmits, s.cs_reg_per_call, s.cs_reg_persistent, s.cs_mw_binds,
		s.cs_credits,
		rpcrdma_clnt_inline_send(rpcrdma_nfsc_clnt(nc)),
		rpcrdma_clnt_inline_recv(rpcrdma_nfsc_clnt(nc)), rpcrdma_nfsc_rsize(nc),
		rpcrdma_nfsc_wsize(nc));
}

static bool parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || end == s || *end || v < lo || v > hi)
		return false;
	*out = (uint32_t)v;
	return true;
}

/* "host:/path" or "[v6addr]:/path" */
static bool parse_spec(const char *spec, char **host, char **path)
{
	const char *colon;

	if (spec[0] == '[') {
		const char *rb = strchr(spec, ']');

		if (!rb || rb[1] != ':' || rb[2] != '/')
			return false;
		*host = strndup(spec + 1, (size_t)(rb - spec - 1));
		*path = strdup(rb + 2);
	} else {
		colon = strstr(spec, ":/");
		if (!colon || colon == spec)
			return false;
		*host = strndup(spec, (size_t)(colon - spec));
		*path = strdup(colon + 1);
	}
	return *host && *path;
}

struct cmd {
	const char *c_name;
	int c_nargs;
};

static const struct cmd cmds[] = {
	{ "ls", -1 }, { "get", 2 }, { "put", 2 }, { "cat", 1 }, { "stat", 1 },
	{ "mkdir", 1 }, { "rm", 1 }, { "rmdir", 1 }, { "mv", 2 }, { "ln", 3 },
	{ "readlink", 1 }, { "df", 0 }, { "chmod", 2 },
};

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "port", required_argument, NULL, 'p' },
		{ "mount-port", required_argument, NULL, 'm' },
		{ "source", required_argument, NULL, 's' },
		{ "rsize", required_argument, NULL, 'r' },
		{ "wsize", required_argument, NULL, 'w' },
		{ "credits", required_argument, NULL, 'c' },
		{ "streams", required_argument, NULL, 'n' },
		{ "timeout", required_argument, NULL, 't' },
		{ "retries", required_argument, NULL, 'R' },
		{ "persistent-mr", no_argument, NULL, 'P' },
		{ "mw", no_argument, NULL, 'W' },
		{ "per-call-mr", no_argument, NULL, 'C' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "stats", no_argument, NULL, 'S' },
		{ "verbose", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	struct rpcrdma_nfsc_config cfg = { .nf_log = stderr, .nf_memory_windows = true };
	struct rpcrdma_nfsc *nc;
	const char *cmd, *spec;
	char *host = NULL, *path = NULL, **args;
	uint32_t v;
	int c, nargs, rc, i;
	bool lng = false;
	const struct cmd *cd = NULL;

	while ((c = getopt_long(argc, argv, "+vhq", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!parse_u32(optarg, 1, 65535, &v))
				goto bad_opt;
			cfg.nf_port = (uint16_t)v;
			break;
		case 'm':
			if (!parse_u32(optarg, 1, 65535, &v))
				goto bad_opt;
			cfg.nf_mount_port = (uint16_t)v;
			break;
		case 's':
			cfg.nf_source = optarg;
			break;
		case 'r':
			if (!parse_u32(optarg, 4096, 1u << 24, &cfg.nf_rsize))
				goto bad_opt;
			break;
		case 'w':
			if (!parse_u32(optarg, 4096, 1u << 24, &cfg.nf_wsize))
				goto bad_opt;
			break;
		case 'c':
			if (!parse_u32(optarg, 1, 1024, &cfg.nf_credits))
				goto bad_opt;
			break;
		case 'n':
			if (!parse_u32(optarg, 1, MAX_STREAMS, &opt_streams))
				goto bad_opt;
			break;
		case 't':
			if (!parse_u32(optarg, 1, 3600, &v))
				goto bad_opt;
			cfg.nf_timeout_ms = v * 1000;
			break;
		case 'R':
			if (!parse_u32(optarg, 0, 1000, &cfg.nf_retries))
				goto bad_opt;
			opt_retries = cfg.nf_retries;
			break;
		case 'P':
			opt_persistent = true;
			cfg.nf_memory_windows = false;
			break;
		case 'W':
			opt_persistent = true;
			cfg.nf_memory_windows = true;
			break;
		case 'C':
			opt_persistent = false;
			cfg.nf_memory_windows = false;
			break;
		case 'q':
			opt_quiet = true;
			break;
		case 'S':
			opt_stats = true;
			break;
		case 'v':
			cfg.nf_verbose++;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			return usage_error();
		}
	}
	if (argc - optind < 2)
		return usage_error();
	spec = argv[optind];
	cmd = argv[optind + 1];
	args = argv + optind + 2;
	nargs = argc - optind - 2;
	for (i = 0; i < (int)(sizeof(cmds) / sizeof(cmds[0])); i++)
		if (!strcmp(cmds[i].c_name, cmd))
			cd = &cmds[i];
	if (!cd) {
		fprintf(stderr, PROG ": unknown command '%s'\n", cmd);
		return usage_error();
	}
	if (!strcmp(cmd, "ls")) {
		if (nargs > 0 && !strcmp(args[0], "-l")) {
			lng = true;
			args++;
			nargs--;
		}
		if (nargs > 1)
			goto bad_args;
	} else if (!strcmp(cmd, "ln")) {
		if (!(nargs == 3 && !strcmp(args[0], "-s")) && nargs != 2) {
			fprintf(stderr, PROG ": ln: usage: ln [-s] TARGET LINK\n");
			return EXIT_USAGE;
		}
	} else if (nargs != cd->c_nargs) {
		goto bad_args;
	}
	if (!parse_spec(spec, &host, &path)) {
		fprintf(stderr, PROG ": '%s': expected SERVER:/export\n", spec);
		return EXIT_USAGE;
	}
	if (cfg.nf_credits && opt_streams > cfg.nf_credits)
		opt_streams = cfg.nf_credits;
	cfg.nf_server = host;
	cfg.nf_export = path;
	rc = rpcrdma_nfsc_mount(&cfg, &nc);
	if (rc) {
		fprintf(stderr, PROG ": %s: mount failed: %s\n", spec, strerror(-rc));
		free(host);
		free(path);
		return 1;
	}
	if (!strcmp(cmd, "ls"))
		rc = cmd_ls(nc, nargs ? args[0] : "/", lng);
	else if (!strcmp(cmd, "get"))
		rc = cmd_get(nc, args[0], args[1], false);
	else if (!strcmp(cmd, "cat"))
		rc = cmd_get(nc, args[0], "-", true);
	else if (!strcmp(cmd, "put"))
		rc = cmd_put(nc, args[0], args[1]);
	else if (!strcmp(cmd, "stat"))
		rc = cmd_stat(nc, args[0]);
	else if (!strcmp(cmd, "mkdir") || !strcmp(cmd, "rm") || !strcmp(cmd, "rmdir"))
		rc = cmd_dirop(nc, cmd, args[0]);
	else if (!strcmp(cmd, "mv"))
		rc = cmd_mv(nc, args[0], args[1]);
	else if (!strcmp(cmd, "ln") && nargs == 3)
		rc = cmd_ln(nc, args[1], args[2]);
	else if (!strcmp(cmd, "ln"))
		rc = cmd_hardlink(nc, args[0], args[1]);
	else if (!strcmp(cmd, "chmod"))
		rc = cmd_chmod(nc, args[0], args[1]);
	else if (!strcmp(cmd, "readlink"))
		rc = cmd_readlink(nc, args[0]);
	else
		rc = cmd_df(nc, spec);
	if (opt_stats)
		print_stats(nc);
	rpcrdma_nfsc_umount(nc);
	free(host);
	free(path);
	return rc;

bad_opt:
	fprintf(stderr, PROG ": bad value '%s' for an option\n", optarg);
	return EXIT_USAGE;
bad_args:
	fprintf(stderr, PROG ": %s: wrong number of arguments\n", cmd);
	return usage_error();
}
