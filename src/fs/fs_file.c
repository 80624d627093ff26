// SPDX-License-Identifier: MIT
/*
 * fs_file.c - reaching objects for the procedures of NFSv3, NFSv4.1 and
 * NLM: file handles to entries (through the caches, or for one call), and
 * acting for the caller.
 *
 * Every handler first decodes all of its arguments (a short or malformed
 * body is GARBAGE_ARGS), then opens its file handles as the server (the
 * posix backend's open_by_handle_at needs CAP_DAC_READ_SEARCH), then acts
 * for the caller (fs_become_caller()) for the file system work.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fs.h"
#include "fs_backend.h"

int fs_become_caller(struct fs_call *c)
{
	int err;

	if (c->c_ro && c->c_modifies)
		return -EROFS;
	if (!(c->c_exp->ex_be->be_flags & FS_BE_SWITCHES_IDENTITY)) {
		/* the backend checks c_cred itself */
		c->c_as_caller = true;
		return 0;
	}
	err = fs_cred_apply(&c->c_cred);

	if (err == 0)
		c->c_as_caller = true;
	return err;
}

/* fs_get_file - the handle's object through the open-file cache. */
int fs_get_file(struct fs_call *c, const uint8_t *fh, uint32_t len,
		struct fs_fentry *local, struct fs_fentry **fep,
		struct stat *st)
{
	if (c->c_fh_err) {
		*fep = NULL;
		return c->c_fh_err;
	}
	return fs_fcache_get(c->c_exp, fh, len, local, fep, st);
}

/* fs_get_dir - a directory's handle through the directory cache. */
int fs_get_dir(struct fs_call *c, const uint8_t *fh, uint32_t len,
	       struct fs_fentry *local, struct fs_fentry **fep,
	       struct stat *st)
{
	if (c->c_fh_err) {
		*fep = NULL;
		return c->c_fh_err;
	}
	return fs_dcache_get(c->c_exp, fh, len, local, fep, st);
}

/* fs_want_regular_type - fs_want_regular() on an entry's file type. */
int fs_want_regular_type(mode_t type)
{
	if (type == S_IFDIR)
		return -EISDIR;
	return type == S_IFREG ? 0 : -EINVAL;
}

/* Type check for READ/WRITE/COMMIT/size changes: 0 or -EISDIR/-EINVAL. */
int fs_want_regular(const struct stat *st)
{
	if (S_ISDIR(st->st_mode))
		return -EISDIR;
	return S_ISREG(st->st_mode) ? 0 : -EINVAL;
}

int fs_open_handle(struct fs_call *c, const uint8_t *fh, uint32_t len,
		   struct fs_fentry *local, struct fs_fentry **out,
		   struct stat *st)
{
	int err;

	*out = NULL;
	if (c->c_fh_err)
		return c->c_fh_err;
	err = fs_fh_decode(c->c_exp, fh, len, local, st);
	if (err)
		return err;
	*out = local;
	return 0;
}

