// SPDX-License-Identifier: MIT
/*
 * fs_export.c - one exported directory (served by its backend), the
 * handle key file, and address/prefix matching.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "fs_backend.h"

#define FS_TMPFS_MAGIC 0x01021994
#define FS_RAMFS_MAGIC 0x858458f6

bool fs_is_mem_fs(int fd)
{
	struct statfs sf;

	if (fstatfs(fd, &sf) < 0)
		return false;
	return sf.f_type == FS_TMPFS_MAGIC || sf.f_type == FS_RAMFS_MAGIC;
}

int rpcrdma_nfs3_export_open(const struct rpcrdma_nfs3_config *cfg,
			     struct rpcrdma_nfs3_export **out)
{
	const struct fs_backend *be;
	char opts[FS_BE_OPTS_MAX] = "";

	if (!cfg)
		return -EINVAL;
	be = cfg->nc_backend ? fs_backend_parse(cfg->nc_backend, opts) : &fs_posix_backend;
	if (!be)
		return -EINVAL;
	return fs_export_open(cfg, be, opts, out);
}

int fs_export_open(const struct rpcrdma_nfs3_config *cfg,
		   const struct fs_backend *be, const char *opts,
		   struct rpcrdma_nfs3_export **out)
{
	struct rpcrdma_nfs3_export *exp;
	struct timespec now;
	uint64_t v, r;
	int err;

	if (!cfg || !cfg->nc_export || cfg->nc_export[0] != '/' ||
	    strlen(opts) >= FS_BE_OPTS_MAX)
		return -EINVAL;
	exp = calloc(1, sizeof(*exp));
	if (!exp)
		return -ENOMEM;
	strcpy(exp->ex_be_opts, opts);
	exp->ex_fd = -1;
	exp->ex_be = be;
	exp->ex_path = strdup(cfg->nc_export);
	if (!exp->ex_path) {
		err = -ENOMEM;
		goto out_free;
	}
	/* keep the path as given, minus trailing slashes (MNT compares it) */
	for (size_t n = strlen(exp->ex_path); n > 1 && exp->ex_path[n - 1] == '/'; n--)
		exp->ex_path[n - 1] = '\0';

	memcpy(exp->ex_key, cfg->nc_key, sizeof(exp->ex_key));
	exp->ex_max_payload = cfg->nc_max_payload ? cfg->nc_max_payload : 1u << 20;
	exp->ex_no_root_squash = cfg->nc_no_root_squash;
	exp->ex_async = cfg->nc_async;
	atomic_init(&exp->ex_refs, 1);
	exp->ex_log = cfg->nc_log ? cfg->nc_log : stderr;
	exp->ex_verbose = cfg->nc_verbose;

	/* the directory, its identity, and handles that decode again */
	err = be->be_export_open(exp, exp->ex_path, exp->ex_be_opts);
	if (err)
		goto out_path;

	/* WRITE/COMMIT verifier: differs on every start (RFC 1813 3.3.7) */
	clock_gettime(CLOCK_REALTIME, &now);
	v = (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
	v ^= (uint64_t)getpid() << 48;
	/* and random bits: a clock stepped back cannot repeat it */
	if (getrandom(&r, sizeof(r), GRND_NONBLOCK) == (ssize_t)sizeof(r))
		v ^= r;
	memcpy(exp->ex_verf, &v, sizeof(v));

	err = fs_fcache_create(cfg->nc_fcache_entries, &exp->ex_fcache);
	if (err)
		goto out_close;
	if (exp->ex_fcache) {
		uint32_t n = cfg->nc_fcache_entries ? cfg->nc_fcache_entries :
						      RPCRDMA_NFS3_FCACHE_DEFAULT;

		err = fs_fcache_create(n / 4 > 16 ? n / 4 : 16, &exp->ex_dcache);
		if (err) {
			fs_fcache_destroy(exp->ex_fcache);
			goto out_close;
		}
	}
	*out = exp;
	return 0;

out_close:
	be->be_export_close(exp);
out_path:
	free(exp->ex_path);
out_free:
	free(exp);
	return err;
}

void rpcrdma_nfs3_export_close(struct rpcrdma_nfs3_export *exp)
{
	if (!exp)
		return;
	fs_fcache_destroy(exp->ex_dcache);
	fs_fcache_destroy(exp->ex_fcache);
	exp->ex_be->be_export_close(exp);
	free(exp->ex_path);
	free(exp);
}

int rpcrdma_nfs3_root_fh(struct rpcrdma_nfs3_export *exp,
			 uint8_t fh[RPCRDMA_NFS3_FHSIZE], uint32_t *len)
{
	return fs_fh_of_exp(exp, NULL, "", fh, len);
}

const char *rpcrdma_nfs3_export_path(const struct rpcrdma_nfs3_export *exp)
{
	return exp->ex_path;
}

static int read_key(int fd, uint8_t key[RPCRDMA_NFS3_KEY_BYTES])
{
	uint8_t buf[RPCRDMA_NFS3_KEY_BYTES + 1];
	size_t got = 0;

	while (got < sizeof(buf)) {
		ssize_t n = read(fd, buf + got, sizeof(buf) - got);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got != RPCRDMA_NFS3_KEY_BYTES)
		return -EINVAL;
	memcpy(key, buf, RPCRDMA_NFS3_KEY_BYTES);
	return 0;
}

int rpcrdma_nfs3_load_key(const char *path, uint8_t key[RPCRDMA_NFS3_KEY_BYTES])
{
	int fd, err;

	for (int tries = 0; tries < 2; tries++) {
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			err = read_key(fd, key);
			close(fd);
			return err;
		}
		if (errno != ENOENT)
			return -errno;
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		if (fd < 0) {
			if (errno == EEXIST)
				continue; /* created meanwhile: read it */
			return -errno;
		}
		if (getrandom(key, RPCRDMA_NFS3_KEY_BYTES, 0) !=
		    (ssize_t)RPCRDMA_NFS3_KEY_BYTES) {
			err = -EIO;
			goto out_unlink;
		}
		if (write(fd, key, RPCRDMA_NFS3_KEY_BYTES) !=
			    (ssize_t)RPCRDMA_NFS3_KEY_BYTES ||
		    fsync(fd) < 0) {
			err = errno ? -errno : -EIO;
			goto out_unlink;
		}
		close(fd);
		return 0;
	}
	return -EAGAIN;

out_unlink:
	close(fd);
	unlink(path);
	return err;
}

int rpcrdma_nfs3_cidr_parse(const char *s, struct sockaddr_storage *addr,
			    unsigned *prefix)
{
	char buf[INET6_ADDRSTRLEN + 8];
	const char *slash;
	unsigned max;
	char *end;
	size_t n;

	memset(addr, 0, sizeof(*addr));
	slash = strchr(s, '/');
	n = slash ? (size_t)(slash - s) : strlen(s);
	if (n == 0 || n >= INET6_ADDRSTRLEN)
		return -EINVAL;
	memcpy(buf, s, n);
	buf[n] = '\0';
	if (inet_pton(AF_INET, buf, &((struct sockaddr_in *)addr)->sin_addr) == 1) {
		addr->ss_family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, buf,
			     &((struct sockaddr_in6 *)addr)->sin6_addr) == 1) {
		addr->ss_family = AF_INET6;
		max = 128;
	} else {
		return -EINVAL;
	}
	*prefix = max;
	if (slash) {
		unsigned long v;

		if (slash[1] < '0' || slash[1] > '9')
			return -EINVAL;
		errno = 0;
		v = strtoul(slash + 1, &end, 10);
		if (errno || *end || v > max)
			return -EINVAL;
		*prefix = (unsigned)v;
	}
	return 0;
}

static bool prefix_eq(const uint8_t *a, const uint8_t *b, unsigned bits)
{
	unsigned bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes))
		return false;
	if (!rest)
		return true;
	return ((a[bytes] ^ b[bytes]) & (uint8_t)(0xff00u >> rest)) == 0;
}

bool rpcrdma_nfs3_cidr_match(const struct sockaddr *peer,
			     const struct sockaddr_storage *net,
			     unsigned prefix)
{
	static const uint8_t v4mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					      0xff, 0xff };
	const uint8_t *p;

	if (peer->sa_family == AF_INET6) {
		p = ((const struct sockaddr_in6 *)peer)->sin6_addr.s6_addr;
		if (net->ss_family == AF_INET6)
			return prefix_eq(p, ((const struct sockaddr_in6 *)net)
					 ->sin6_addr.s6_addr, prefix);
		if (memcmp(p, v4mapped, 12))
			return false;
		p += 12;
	} else if (peer->sa_family == AF_INET) {
		if (net->ss_family != AF_INET)
			return false;
		p = (const uint8_t *)&((const struct sockaddr_in *)peer)->sin_addr;
	} else {
		return false;
	}
	return prefix_eq(p, (const uint8_t *)&((const struct sockaddr_in *)net)
			 ->sin_addr, prefix);
}
