// SPDX-License-Identifier: MIT
/*
 * rpcrdma-nfsd - serve directories over NFSv3 and NFSv4.1 on
 * RPC-over-RDMA and TCP, with MOUNT v3 and the lock manager (NLM v4, NSM)
 * over TCP.  The options (tools/nfsd/nfsd_table.c) come from the
 * configuration file and the command line; --check only checks them and
 * the exports.  See man/rpcrdma-nfsd.8 and man/rpcrdma.conf.5.
 */
#include <stdio.h>

#include "nfsd/nfsd_opts.h"
#include "nfsd/nfsd_serve.h"

int main(int argc, char **argv)
{
	struct nfsd_conf cf;
	int ret;

	nfsd_conf_init(&cf, stderr);
	ret = nfsd_conf_load(&cf, argc, argv, RPCRDMA_CONF_FILE);
	if (ret == NFSD_EXIT_DONE)
		ret = 0;
	else if (nfsd_flag(&cf, NFSD_CHECK))
		ret = nfsd_check(&cf, RPCRDMA_EXPORTS_FILE);
	else if (ret)
		fprintf(stderr, NFSD_PROG ": %u problem%s (--help lists the options, "
			"--check checks a configuration)\n", cf.nc_problems,
			cf.nc_problems == 1 ? "" : "s");
	else
		ret = nfsd_serve(&cf, RPCRDMA_EXPORTS_FILE);
	nfsd_conf_free(&cf);
	return ret;
}
