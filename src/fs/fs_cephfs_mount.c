// SPDX-License-Identifier: MIT
/*
 * fs_cephfs_mount.c - the cephfs backend's exports: their options, the
 * mounts they share, opening and closing them.
 *
 * A mount is one libcephfs client (ceph_create() as client.USER,
 * ceph.conf read, the keyring set, the file system selected, the root of
 * the file system mounted) shared by every export that names the same
 * user, file system, ceph.conf and keyring: the exported directory is
 * walked to from the root, so an object's handle (ino, snapid, fscid) is
 * the same whatever directory an export serves and on every gateway.
 * The first export of a mount makes it, the last user (export, lock
 * description, lease) unmounts it.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fs.h"
#include "fs_cephfs.h"

#define FSC_CONF_DEFAULT "/etc/ceph/ceph.conf"

/* copy_val - @v (@n bytes) into @dst (@cap bytes) as a string; -EINVAL
 * when empty or too long. */
static int copy_val(char *dst, size_t cap, const char *v, size_t n)
{
	if (!n || n >= cap)
		return -EINVAL;
	memcpy(dst, v, n);
	dst[n] = '\0';
	return 0;
}

int fsc_opts_parse(const char *s, char *buf, size_t len, struct fsc_opts *o)
{
	char *p, *save = NULL, *opt;

	memset(o, 0, sizeof(*o));
	strcpy(o->co_user, "admin");
	if (!s)
		s = "";
	if (strlen(s) >= len)
		return -EINVAL;
	strcpy(buf, s);
	for (p = buf; (opt = strtok_r(p, ",", &save)); p = NULL) {
		char *eq = strchr(opt, '=');
		const char *val;

		if (!eq || !eq[1])
			return -EINVAL;
		*eq = '\0';
		val = eq + 1;
		if (!strcmp(opt, "user")) {
			if (copy_val(o->co_user, sizeof(o->co_user), val, strlen(val)))
				return -EINVAL;
		} else if (!strcmp(opt, "fs")) {
			if (copy_val(o->co_fsname, sizeof(o->co_fsname), val, strlen(val)))
				return -EINVAL;
		} else if (!strcmp(opt, "conf") && val[0] == '/') {
			o->co_conf = val;
		} else if (!strcmp(opt, "keyring") && val[0] == '/') {
			o->co_keyring = val;
		} else if (!strcmp(opt, "grace") && val[0] == '/') {
			o->co_grace = val;
		} else if (!strcmp(opt, "direct") &&
			   (!strcmp(val, "on") || !strcmp(val, "off"))) {
			o->co_nodirect = !strcmp(val, "off");
		} else {
			return -EINVAL;
		}
	}
	return 0;
}

int fsc_uuid(char *buf, size_t len, const char *host, const char *state_dir,
	     const char *user, const char *fsname, const char *conf,
	     const char *keyring)
{
	static const uint8_t key[16] = "rpcrdma ceph id ";
	const char *part[5] = { state_dir, user, fsname, conf, keyring };
	size_t n = 0, off = 0;
	uint8_t *in;
	uint64_t h;
	int w;

	for (int i = 0; i < 5; i++)
		n += (part[i] ? strlen(part[i]) : 0) + 1;
	in = malloc(n);
	if (!in)
		return -ENOMEM;
	for (int i = 0; i < 5; i++) {
		size_t k = part[i] ? strlen(part[i]) : 0;

		memcpy(in + off, part[i] ? part[i] : "", k);
		in[off + k] = 0;
		off += k + 1;
	}
	h = fs_siphash(key, in, n);
	free(in);
	w = snprintf(buf, len, "rpcrdma-%.63s-%016llx", host, (unsigned long long)h);
	return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

/*
 * mount_uuid - @m's uuid into m->cm_uuid when the server noted its
 * instance (rpcrdma_nfs3_set_instance()); "" otherwise.  Return: 0 or
 * fsc_uuid()'s error.
 */
static int mount_uuid(struct fsc_mount *m)
{
	const char *inst = fs_instance();
	char host[256];

	m->cm_uuid[0] = '\0';
	if (!inst)
		return 0;
	if (gethostname(host, sizeof(host)) < 0)
		strcpy(host, "localhost");
	host[sizeof(host) - 1] = '\0';
	return fsc_uuid(m->cm_uuid, sizeof(m->cm_uuid), host, inst, m->cm_user,
			m->cm_fsname, m->cm_conf, m->cm_keyring);
}

/*
 * reclaim_reset - before @m mounts (initialized, not mounted): end the
 * session a previous incarnation with m->cm_uuid left (SIGKILLed: its caps
 * and open files would hold until the MDS times it out), then take that
 * uuid.  No previous session (-ENOENT) is the normal start.  When the
 * reset fails (an MDS without reclaim, -EOPNOTSUPP; anything else) the
 * mount goes on without a uuid (an MDS refuses a second session with a
 * live one's uuid) and says so on @log.
 */
static void reclaim_reset(FILE *log, struct fsc_mount *m)
{
	const struct fs_ceph_api *a = fsc_api;
	int err;

	err = a->ca_start_reclaim(m->cm_cmount, m->cm_uuid, CEPH_RECLAIM_RESET);
	a->ca_finish_reclaim(m->cm_cmount);
	if (err && err != -ENOENT) {
		fprintf(log, "cephfs: cannot reset the previous session of %s: %s; its files stay held until the MDS evicts it\n",
			m->cm_uuid, strerror(-err));
		m->cm_uuid[0] = '\0';
		return;
	}
	if (!err)
		fprintf(log, "cephfs: reset the previous session of %s\n", m->cm_uuid);
	a->ca_set_uuid(m->cm_cmount, m->cm_uuid);
}

static pthread_mutex_t g_mounts_lock = PTHREAD_MUTEX_INITIALIZER;
static struct fsc_mount *g_mounts;

static bool str_eq(const char *a, const char *b)
{
	return (!a && !b) || (a && b && !strcmp(a, b));
}

/* mount_free - unmount and free @m (not listed any more). */
static void mount_free(struct fsc_mount *m)
{
	if (m->cm_cmount)
		fsc_api->ca_shutdown(m->cm_cmount);
	if (m->cm_root)
		fsc_api->ca_userperm_destroy(m->cm_root);
	free(m->cm_grace);
	free(m->cm_conf);
	free(m->cm_keyring);
	fsc_direct_fini(m);
	free(m);
}

/*
 * mount_fail - the message of a failed mount of @m on @log, and the
 * error be_export_open() answers for libcephfs' @err.
 */
static int mount_fail(FILE *log, struct fsc_mount *m, int err)
{
	char mons[256] = "";

	if (fsc_api->ca_conf_get(m->cm_cmount, "mon_host", mons, sizeof(mons)) < 0 ||
	    !mons[0])
		snprintf(mons, sizeof(mons), "none configured");
	if (err == -ENOENT && m->cm_fsname[0]) {
		/* libcephfs also answers -ENOENT when client.USER has no keyring */
		fprintf(log, "cephfs: no file system named '%s' on the cluster of %s (monitors %s), or no keyring for client.%s (%s%s%s)\n",
			m->cm_fsname, m->cm_conf, mons, m->cm_user,
			m->cm_keyring ? m->cm_keyring : "ceph.conf's keyring=, by default /etc/ceph/ceph.client.",
			m->cm_keyring ? "" : m->cm_user, m->cm_keyring ? "" : ".keyring");
		return -ENOENT;
	}
	if (err == -EACCES || err == -EPERM) {
		fprintf(log, "cephfs: the cluster (monitors %s) refused client.%s: %s; check its key and caps\n",
			mons, m->cm_user, strerror(-err));
		return -EACCES;
	}
	fprintf(log, "cephfs: cannot mount %s%s as client.%s: the cluster (monitors %s) did not answer: %s\n",
		m->cm_fsname[0] ? "file system " : "the default file system",
		m->cm_fsname, m->cm_user, mons,
		err > -1000 ? strerror(-err) : "no monitor map (is mon_host set?)");
	return -EIO;
}

/*
 * mount_config - @m's client created as client.cm_user, its ceph.conf
 * read, keyring and timeouts set, its file system selected (not yet
 * initialized).  Return: mount_new()'s errors.
 */
static int mount_config(FILE *log, struct fsc_mount *m)
{
	const struct fs_ceph_api *a = fsc_api;
	int err;

	err = a->ca_create(&m->cm_cmount, m->cm_user);
	if (err) {
		m->cm_cmount = NULL;
		fprintf(log, "cephfs: ceph_create(client.%s): %s\n", m->cm_user,
			strerror(-err));
		return err == -ENOMEM ? -ENOMEM : -EINVAL;
	}
	err = a->ca_conf_read_file(m->cm_cmount, m->cm_conf);
	if (err) {
		fprintf(log, "cephfs: cannot read %s: %s\n", m->cm_conf, strerror(-err));
		return -ENOENT;
	}
	if ((m->cm_keyring && (err = a->ca_conf_set(m->cm_cmount, "keyring", m->cm_keyring))) ||
	    (err = a->ca_conf_set(m->cm_cmount, "client_mount_timeout", FSC_MOUNT_TIMEOUT)) ||
	    (err = a->ca_conf_set(m->cm_cmount, "client_permissions", "true"))) {
		fprintf(log, "cephfs: ceph_conf_set: %s\n", strerror(-err));
		return -EINVAL;
	}
	if (m->cm_fsname[0]) {
		err = a->ca_select_filesystem(m->cm_cmount, m->cm_fsname);
		if (err)
			return mount_fail(log, m, err);
	}
	return 0;
}

/*
 * grace_announce - before @m resets its previous incarnation's session:
 * this gateway's record (named m->cm_uuid, ending at @end) into
 * m->cm_grace, through a client of its own mounted at that directory (a
 * Ceph user whose caps allow only a path may mount it), unmounted once
 * the record is synced.  Return: 0; -ENOENT, -EACCES, -EIO (said on @log:
 * the gateway does not start, or its peers could grant what its clients
 * are about to reclaim); -ENOMEM.
 */
static int grace_announce(FILE *log, const struct fsc_mount *m, int64_t end)
{
	const struct fs_ceph_api *a = fsc_api;
	struct fsc_mount *t;
	int err;

	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	strcpy(t->cm_user, m->cm_user);
	strcpy(t->cm_fsname, m->cm_fsname);
	t->cm_conf = strdup(m->cm_conf);
	t->cm_keyring = m->cm_keyring ? strdup(m->cm_keyring) : NULL;
	t->cm_root = a->ca_userperm_new(0, 0, 0, NULL);
	if (!t->cm_conf || (m->cm_keyring && !t->cm_keyring) || !t->cm_root) {
		err = -ENOMEM;
		goto out;
	}
	err = mount_config(log, t);
	if (err)
		goto out;
	err = a->ca_mount(t->cm_cmount, m->cm_grace);
	if (!err)
		err = fsc_grace_announce(t->cm_cmount, t->cm_root, m->cm_uuid, end);
	if (err) {
		fprintf(log, "cephfs: cannot write the grace record %s/%s as client.%s: %s; not starting (the other gateways would not hold new locks off while this one's clients reclaim)\n",
			m->cm_grace, m->cm_uuid, m->cm_user, strerror(-err));
		err = err == -ENOENT || err == -ENOTDIR ? -ENOENT :
		      err == -EACCES || err == -EPERM ? -EACCES : -EIO;
		goto out;
	}
	fprintf(log, "cephfs: grace period announced in %s/%s until %lld\n",
		m->cm_grace, m->cm_uuid, (long long)end);
out:
	mount_free(t);
	return err;
}

/*
 * mount_new - a mounted client for @o into *@out; messages on @log.
 * Return: 0; -ENOENT (no ceph.conf, or no such file system, or no grace
 * directory); -EACCES (the cluster refused the key, or the grace record);
 * -EIO (the cluster did not answer within client_mount_timeout);
 * -ENOMEM; -EINVAL (a bad setting); -ENAMETOOLONG (no room for the uuid).
 */
static int mount_new(FILE *log, const struct fsc_opts *o, struct fsc_mount **out)
{
	const struct fs_ceph_api *a = fsc_api;
	struct fsc_mount *m;
	struct timespec now;
	int64_t cid, end;
	int err;

	m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	err = fsc_direct_init(m);
	if (err) {
		free(m);
		return err;
	}
	strcpy(m->cm_user, o->co_user);
	strcpy(m->cm_fsname, o->co_fsname);
	m->cm_conf = strdup(o->co_conf ? o->co_conf : FSC_CONF_DEFAULT);
	m->cm_keyring = o->co_keyring ? strdup(o->co_keyring) : NULL;
	if (!m->cm_conf || (o->co_keyring && !m->cm_keyring)) {
		err = -ENOMEM;
		goto out_free;
	}
	if (o->co_grace) {
		m->cm_grace = strdup(o->co_grace);
		if (!m->cm_grace) {
			err = -ENOMEM;
			goto out_free;
		}
	}
	err = mount_config(log, m);
	if (err)
		goto out_free;
	err = mount_uuid(m);
	if (err)
		goto out_free;
	/* the others hold new locks off before this one's old locks go; a
	 * start without a grace period writes a record that has ended, so
	 * that the record's directory exists before anyone could hold caps
	 * on it that a dead session keeps */
	clock_gettime(CLOCK_REALTIME, &now);
	end = fs_instance_grace_end();
	if (m->cm_grace && m->cm_uuid[0]) {
		struct timespec t2;

		end = end > now.tv_sec ? end + FSC_GRACE_SLACK : now.tv_sec;
		err = grace_announce(log, m, end);
		clock_gettime(CLOCK_REALTIME, &t2);
		/* a write that waited (for the MDS) ate into the grace period the
		 * record promises: once more, pushed back by the wait */
		if (!err && end > now.tv_sec && t2.tv_sec - now.tv_sec > 1)
			err = grace_announce(log, m, end + (t2.tv_sec - now.tv_sec));
		if (err)
			goto out_free;
	}
	if (m->cm_grace)
		strcpy(m->cm_grace_name, m->cm_uuid);
	err = a->ca_init(m->cm_cmount);
	if (err) {
		err = mount_fail(log, m, err);
		goto out_free;
	}
	if (m->cm_uuid[0])
		reclaim_reset(log, m);
	err = a->ca_mount(m->cm_cmount, "/");
	if (err) {
		err = mount_fail(log, m, err);
		goto out_free;
	}
	cid = a->ca_get_fs_cid(m->cm_cmount);
	if (cid < 0) {
		err = mount_fail(log, m, (int)cid);
		goto out_free;
	}
	m->cm_fscid = (uint64_t)cid;
	m->cm_root = a->ca_userperm_new(0, 0, 0, NULL);
	if (!m->cm_root) {
		err = -ENOMEM;
		goto out_free;
	}
	/* delegations need a timeout set first; without one, no leases */
	m->cm_deleg = a->ca_set_deleg_timeout(m->cm_cmount, FSC_DELEG_TIMEOUT) == 0;
	*out = m;
	return 0;

out_free:
	mount_free(m);
	return err;
}

/* mount_get_for - the mount of @o, shared or new, with one more user. */
static int mount_get_for(FILE *log, const struct fsc_opts *o,
			 struct fsc_mount **out)
{
	const char *conf = o->co_conf ? o->co_conf : FSC_CONF_DEFAULT;
	struct fsc_mount *m;
	int err = 0;

	pthread_mutex_lock(&g_mounts_lock);
	for (m = g_mounts; m; m = m->cm_next)
		if (!strcmp(m->cm_user, o->co_user) &&
		    !strcmp(m->cm_fsname, o->co_fsname) &&
		    !strcmp(m->cm_conf, conf) && str_eq(m->cm_keyring, o->co_keyring))
			break;
	if (m && !str_eq(m->cm_grace, o->co_grace)) {
		/* one client, one uuid: one grace directory */
		fprintf(log, "cephfs: grace=%s differs from grace=%s of another export as client.%s of this file system\n",
			o->co_grace ? o->co_grace : "(none)",
			m->cm_grace ? m->cm_grace : "(none)", m->cm_user);
		err = -EINVAL;
	} else if (!m) {
		err = mount_new(log, o, &m);
		if (!err) {
			m->cm_next = g_mounts;
			g_mounts = m;
		}
	}
	if (!err) {
		m->cm_users++;
		*out = m;
	}
	pthread_mutex_unlock(&g_mounts_lock);
	return err;
}

void fsc_mount_get(struct fsc_mount *m)
{
	pthread_mutex_lock(&g_mounts_lock);
	m->cm_users++;
	pthread_mutex_unlock(&g_mounts_lock);
}

void fsc_mount_put(struct fsc_mount *m)
{
	struct fsc_mount **pp;
	bool last;

	pthread_mutex_lock(&g_mounts_lock);
	last = --m->cm_users == 0;
	if (last)
		for (pp = &g_mounts; *pp; pp = &(*pp)->cm_next)
			if (*pp == m) {
				*pp = m->cm_next;
				break;
			}
	pthread_mutex_unlock(&g_mounts_lock);
	if (last)
		mount_free(m);
}

int fsc_be_export_open(struct rpcrdma_nfs3_export *exp, const char *path,
		       const char *opts)
{
	static const uint8_t dev_key[16] = "rpcrdma cephfs  ";
	FILE *log = exp->ex_log ? exp->ex_log : stderr;
	char buf[FS_BE_OPTS_MAX];
	struct ceph_statx stx;
	struct fsc_export *ce;
	struct fsc_opts o;
	uint8_t id[8];
	int err;

	if (!path || path[0] != '/')
		return -EINVAL;
	err = fsc_opts_parse(opts, buf, sizeof(buf), &o);
	if (err) {
		fprintf(log, "cephfs: %s: bad options '%s' (fs=, user=, conf=/FILE, keyring=/FILE, grace=/DIR, direct=on|off)\n",
			path, opts ? opts : "");
		return err;
	}
	ce = calloc(1, sizeof(*ce));
	if (!ce)
		return -ENOMEM;
	err = mount_get_for(log, &o, &ce->ce_mnt);
	if (err)
		goto out_free;
	if (o.co_grace) {
		Inode *gdir;

		/* a grace directory that is not there would hold every lock
		 * off ("cannot tell"): refused now instead */
		err = fsc_api->ca_ll_walk(ce->ce_mnt->cm_cmount, o.co_grace, &gdir, &stx,
					  CEPH_STATX_MODE, 0, ce->ce_mnt->cm_root);
		if (!err) {
			fsc_api->ca_ll_put(ce->ce_mnt->cm_cmount, gdir);
			if (!S_ISDIR(stx.stx_mode))
				err = -ENOTDIR;
		}
		if (err) {
			fprintf(log, "cephfs: grace=%s: %s (make it, writable by client.%s)\n",
				o.co_grace, strerror(-err), o.co_user);
			err = FSC_ERR(err, -ENOENT, -ENOTDIR, -EACCES);
			goto out_put;
		}
	}
	err = fsc_api->ca_ll_walk(ce->ce_mnt->cm_cmount, path, &ce->ce_root, &stx,
				  CEPH_STATX_BASIC_STATS, 0, ce->ce_mnt->cm_root);
	if (err) {
		fprintf(log, "cephfs: %s in file system %s: %s\n", path,
			o.co_fsname[0] ? o.co_fsname : "(default)", strerror(-err));
		err = FSC_ERR(err, -ENOENT, -ENOTDIR, -EACCES);
		goto out_put;
	}
	if (!S_ISDIR(stx.stx_mode)) {
		fprintf(log, "cephfs: %s is not a directory\n", path);
		fsc_api->ca_ll_put(ce->ce_mnt->cm_cmount, ce->ce_root);
		err = -ENOTDIR;
		goto out_put;
	}
	ce->ce_root_ino = stx.stx_ino;
	ce->ce_direct = !o.co_nodirect;
	/* st_dev: from the file system's id, the same on every gateway */
	for (int i = 0; i < 8; i++)
		id[i] = (uint8_t)(ce->ce_mnt->cm_fscid >> (56 - 8 * i));
	exp->ex_dev = (dev_t)fs_siphash(dev_key, id, sizeof(id));
	if (!exp->ex_dev)
		exp->ex_dev = 1;
	exp->ex_ino = (ino_t)stx.stx_ino;
	exp->ex_fsid = (uint64_t)exp->ex_dev;
	exp->ex_fd = -1;
	exp->ex_mnt_id = 0;
	exp->ex_mem_fs = false;
	exp->ex_be_priv = ce;
	return 0;

out_put:
	fsc_mount_put(ce->ce_mnt);
out_free:
	free(ce);
	return err;
}

void fsc_be_export_close(struct rpcrdma_nfs3_export *exp)
{
	struct fsc_export *ce = fsc_ex(exp);

	if (!ce)
		return;
	exp->ex_be_priv = NULL;
	fsc_api->ca_ll_put(ce->ce_mnt->cm_cmount, ce->ce_root);
	fsc_mount_put(ce->ce_mnt);
	free(ce);
}
