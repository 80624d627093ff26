// SPDX-License-Identifier: MIT
/*
 * fs_lease.c - the layer's leases (fs.h, "fs_vfs.c" section): a read
 * lease of the backend of the call's export (be_lease_open, fs_backend.h)
 * that tells the holder, an NFSv4 read delegation, when the file is
 * wanted for a change from outside this server (RFC 8881 10.4.4).  The
 * layer only dispatches and keeps the value type consistent: a lease that
 * was refused holds nothing, and closing one that holds nothing does
 * nothing.
 */
#include <errno.h>
#include <string.h>

#include "fs.h"
#include "fs_backend.h"

/* lease_init - @ls holds nothing. */
static void lease_init(struct fs_lease *ls)
{
	memset(ls, 0, sizeof(*ls));
	ls->ls_fd = -1;
}

int fs_lease_open(struct fs_call *c, struct fs_fentry *fe,
		  fs_lease_break_fn fn, void *arg, struct fs_lease *out)
{
	const struct fs_backend *be = c->c_exp->ex_be;
	int err;

	lease_init(out);
	if (!be->be_lease_open)
		return -EOPNOTSUPP;
	if (!S_ISREG(fe->fe_type))
		return -EINVAL;
	out->ls_fn = fn;
	out->ls_arg = arg;
	out->ls_be = be; /* before the backend can call @fn */
	err = be->be_lease_open(c, fe, out);
	if (err) {
		lease_init(out);
		return err;
	}
	return 0;
}

void fs_lease_close(struct fs_lease *ls)
{
	if (ls->ls_be && ls->ls_be->be_lease_close)
		ls->ls_be->be_lease_close(ls);
	lease_init(ls);
}
