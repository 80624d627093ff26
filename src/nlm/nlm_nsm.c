// SPDX-License-Identifier: MIT
/*
 * nlm_nsm.c - the NSM state the server keeps on disk (XNFS chapter 11;
 * what rpc.statd keeps in /var/lib/nfs): the state number, odd while the
 * server runs and advanced at every start, and one record per client host
 * holding locks, so that a restarted server knows whom to notify.
 *
 *   DIR/state       the state number in decimal, replaced by rename
 *   DIR/sm/ADDR     one host: its address, the server address it called,
 *                   its caller_name (three lines)
 */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/state_dir.h"
#include "nlm_internal.h"

/* write @data to @path atomically (temporary file, fsync, rename) */
static int write_atomic(const char *path, const char *data)
{
	char tmp[4200];
	size_t len = strlen(data);
	int fd, err = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.new", path) >= sizeof(tmp))
		return -ENAMETOOLONG;
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (write(fd, data, len) != (ssize_t)len || fsync(fd) < 0)
		err = errno ? -errno : -EIO;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int nsm_state_advance(const char *dir, uint32_t *state)
{
	char path[4200], buf[32];
	unsigned long v = 0;
	FILE *f;
	int err;

	err = rpcrdma_mkdir_parents(dir);
	if (err)
		return err;
	snprintf(path, sizeof(path), "%s/sm", dir);
	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	snprintf(path, sizeof(path), "%s/state", dir);
	f = fopen(path, "re");
	if (f) {
		if (!fgets(buf, sizeof(buf), f) || sscanf(buf, "%lu", &v) != 1)
			v = 0; /* unreadable: start again from 1 */
		fclose(f);
	} else if (errno != ENOENT) {
		return -errno;
	}
	/* the next odd number (XNFS: odd while up, even while down) */
	v = (v & 1) ? v + 2 : v + 1;
	if (v > UINT32_MAX)
		v = 1;
	snprintf(buf, sizeof(buf), "%lu\n", v);
	err = write_atomic(path, buf);
	if (err)
		return err;
	*state = (uint32_t)v;
	return 0;
}

/* DIR/sm/<address>: the file name of a host's record */
static int record_path(const char *dir, const struct sockaddr *addr, char *path,
		       size_t len, char *file, size_t flen)
{
	char a[INET6_ADDRSTRLEN];

	nlm_addr_str(addr, a, sizeof(a));
	if (a[0] == '?')
		return -EAFNOSUPPORT;
	for (char *p = a; *p; p++)
		if (*p == ':')
			*p = '_'; /* IPv6: a portable file name */
	if (file)
		snprintf(file, flen, "%s", a);
	if ((size_t)snprintf(path, len, "%s/sm/%s", dir, a) >= len)
		return -ENAMETOOLONG;
	return 0;
}

int nsm_record_put(const char *dir, const struct sockaddr *addr,
		   const struct sockaddr *local, const char *name)
{
	char path[4200], a[INET6_ADDRSTRLEN], l[INET6_ADDRSTRLEN];
	char data[INET6_ADDRSTRLEN * 2 + NLM_MAXSTRLEN + 8];
	int err;

	err = record_path(dir, addr, path, sizeof(path), NULL, 0);
	if (err)
		return err;
	nlm_addr_str(addr, a, sizeof(a));
	if (local && local->sa_family != AF_UNSPEC)
		nlm_addr_str(local, l, sizeof(l));
	else
		snprintf(l, sizeof(l), "-");
	/* a name with a newline would break the format: keep a clean one */
	snprintf(data, sizeof(data), "%s\n%s\n%.*s\n", a, l,
		 (int)strcspn(name ? name : "", "\n"), name ? name : "");
	return write_atomic(path, data);
}

int nsm_record_drop(const char *dir, const struct sockaddr *addr)
{
	char path[4200];
	int err = record_path(dir, addr, path, sizeof(path), NULL, 0);

	if (err)
		return err;
	if (unlink(path) < 0 && errno != ENOENT)
		return -errno;
	return 0;
}

static bool parse_addr(const char *s, struct sockaddr_storage *ss, socklen_t *len)
{
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, s, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		*len = sizeof(*s4);
		return true;
	}
	if (inet_pton(AF_INET6, s, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		*len = sizeof(*s6);
		return true;
	}
	return false;
}

int nsm_records_load(const char *dir, struct nsm_record **out)
{
	char path[4200], line[3][NLM_MAXSTRLEN + 2];
	struct nsm_record *head = NULL;
	struct dirent *de;
	DIR *d;

	*out = NULL;
	snprintf(path, sizeof(path), "%s/sm", dir);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((de = readdir(d))) {
		struct nsm_record *r;
		socklen_t ll;
		FILE *f;
		bool ok = true;

		if (de->d_name[0] == '.' || strstr(de->d_name, ".new") ||
		    strlen(de->d_name) >= sizeof(r->nr_file))
			continue;
		snprintf(path, sizeof(path), "%s/sm/%s", dir, de->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		for (int i = 0; i < 3 && ok; i++) {
			if (!fgets(line[i], sizeof(line[i]), f))
				ok = false;
			else
				line[i][strcspn(line[i], "\n")] = 0;
		}
		fclose(f);
		r = ok ? calloc(1, sizeof(*r)) : NULL;
		if (!r)
			continue;
		if (!parse_addr(line[0], &r->nr_addr, &r->nr_addrlen)) {
			free(r);
			continue;
		}
		if (!parse_addr(line[1], &r->nr_local, &ll))
			r->nr_local.ss_family = AF_UNSPEC;
		line[2][NLM_MAXSTRLEN] = 0;
		memcpy(r->nr_name, line[2], strlen(line[2]) + 1);
		memcpy(r->nr_file, de->d_name, strlen(de->d_name) + 1);
		r->nr_next = head;
		head = r;
	}
	closedir(d);
	*out = head;
	return 0;
}

void nsm_records_free(struct nsm_record *r)
{
	while (r) {
		struct nsm_record *n = r->nr_next;

		free(r);
		r = n;
	}
}
