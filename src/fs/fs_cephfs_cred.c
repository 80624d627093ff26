// SPDX-License-Identifier: MIT
/*
 * fs_cephfs_cred.c - the caller's identity as libcephfs takes it (a
 * UserPerm of uid, gid and supplementary groups, one cached per thread so
 * that a worker serving one caller after another of the same identity
 * makes none), the permission decisions the backend makes itself from
 * the mode bits, and the mapping of libcephfs' errors to what each
 * operation may answer.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fs_cephfs.h"

/* One thread's UserPerm and what it was made of (libcephfs keeps a
 * pointer to the group list: it lives here as long as the UserPerm). */
struct perm_cache {
	const struct fs_ceph_api *pc_api; /* the table that made pc_perm */
	UserPerm *pc_perm;
	struct fs_cred pc_cred;
	gid_t pc_gids[RPC_AUTH_SYS_MAX_GIDS];
};

static pthread_key_t g_perm_key;
static pthread_once_t g_perm_once = PTHREAD_ONCE_INIT;

static void perm_cache_free(void *p)
{
	struct perm_cache *pc = p;

	if (!pc)
		return;
	if (pc->pc_perm)
		pc->pc_api->ca_userperm_destroy(pc->pc_perm);
	free(pc);
}

static void perm_key_init(void)
{
	/* failure leaves the key unusable: fsc_perm() then makes a
	 * UserPerm per call and frees the last one at the next */
	(void)pthread_key_create(&g_perm_key, perm_cache_free);
}

void fs_cephfs_set_api(const struct fs_ceph_api *api)
{
	pthread_once(&g_perm_once, perm_key_init);
	perm_cache_free(pthread_getspecific(g_perm_key));
	pthread_setspecific(g_perm_key, NULL);
	fsc_api = api ? api : &fsc_real_api;
}

static bool cred_eq(const struct fs_cred *a, const struct fs_cred *b)
{
	return a->cr_uid == b->cr_uid && a->cr_gid == b->cr_gid &&
	       a->cr_ngids == b->cr_ngids &&
	       !memcmp(a->cr_gids, b->cr_gids, a->cr_ngids * sizeof(a->cr_gids[0]));
}

const UserPerm *fsc_perm(struct fsc_mount *m, const struct fs_cred *cr)
{
	struct perm_cache *pc;
	uint32_t n = cr->cr_ngids < RPC_AUTH_SYS_MAX_GIDS ? cr->cr_ngids :
							    RPC_AUTH_SYS_MAX_GIDS;

	if (m && cr->cr_uid == 0 && cr->cr_gid == 0 && n == 0)
		return m->cm_root;
	pthread_once(&g_perm_once, perm_key_init);
	pc = pthread_getspecific(g_perm_key);
	if (pc && pc->pc_perm && pc->pc_api == fsc_api && cred_eq(&pc->pc_cred, cr))
		return pc->pc_perm;
	if (!pc) {
		pc = calloc(1, sizeof(*pc));
		if (!pc)
			return NULL;
		if (pthread_setspecific(g_perm_key, pc)) {
			free(pc);
			return NULL;
		}
	}
	if (pc->pc_perm)
		pc->pc_api->ca_userperm_destroy(pc->pc_perm);
	memset(&pc->pc_cred, 0, sizeof(pc->pc_cred));
	pc->pc_cred.cr_uid = cr->cr_uid;
	pc->pc_cred.cr_gid = cr->cr_gid;
	pc->pc_cred.cr_ngids = n;
	for (uint32_t i = 0; i < n; i++) {
		pc->pc_cred.cr_gids[i] = cr->cr_gids[i];
		pc->pc_gids[i] = (gid_t)cr->cr_gids[i];
	}
	pc->pc_api = fsc_api;
	pc->pc_perm = fsc_api->ca_userperm_new((uid_t)cr->cr_uid,
					       (gid_t)cr->cr_gid, (int)n,
					       n ? pc->pc_gids : NULL);
	return pc->pc_perm;
}

int fsc_err(int err, const int *allowed, size_t n)
{
	static const int always[] = { -EIO, -ENOMEM, -ENOSPC, -EDQUOT,
				      -EROFS, -EAGAIN };
	static const int later[] = { -ETIMEDOUT, -ETIME, -ESHUTDOWN, -ENOTCONN,
				     -ECONNREFUSED, -ECONNRESET,
				     -EHOSTUNREACH, -EINTR };

	if (err >= 0)
		return err;
	for (size_t i = 0; i < n; i++)
		if (allowed[i] == err)
			return err;
	for (size_t i = 0; i < sizeof(always) / sizeof(always[0]); i++)
		if (always[i] == err)
			return err;
	for (size_t i = 0; i < sizeof(later) / sizeof(later[0]); i++)
		if (later[i] == err)
			return -EAGAIN;
	return -EIO;
}

int fsc_may(const struct fs_cred *cr, const struct stat *st, int want)
{
	return fs_cred_may(cr, st->st_mode, st->st_uid, st->st_gid, want);
}
