/* SPDX-License-Identifier: MIT */
/* nfsd_serve.h - rpcrdma-nfsd's serving, from its options (nfsd_serve.c). */
#ifndef RPCRDMA_TOOLS_NFSD_SERVE_H
#define RPCRDMA_TOOLS_NFSD_SERVE_H

#include "nfsd_opts.h"

/**
 * nfsd_serve - serve what @cf says (checked by nfsd_conf_load()) until
 * SIGTERM or SIGINT; the exports file @default_exports when @cf names
 * neither --export nor --exports.  Needs root and an RDMA device.
 * Return: the exit status: 0 (stopped by a signal), 1 (a failure at
 * start or in the loop, told on stderr), 2 (a usage or exports error).
 */
int nfsd_serve(const struct nfsd_conf *cf, const char *default_exports);

#endif
