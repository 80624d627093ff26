/* SPDX-License-Identifier: MIT */
/*
 * verbs.h - the verbs seam and completion tags (internal to librpcrdma).
 *
 * Every post and poll the protocol engines make goes through
 * rpcrdma_verbs_ops, so that unit tests can replace the device with a
 * script of completions (errors, flushes, reordering, a completion
 * delivered before post returns).  Work requests carry a pointer to a
 * struct rpcrdma_cqe as wr_id: a type tag plus a completion ID for traces.
 *
 * Error convention: libibverbs returns the errno value, librdmacm returns
 * -1 and sets errno; everything here returns a negative errno.
 */
#ifndef RPCRDMA_VERBS_H
#define RPCRDMA_VERBS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

/** Completion tag: what kind of work request a completion belongs to. */
enum rpcrdma_cqe_type {
	RPCRDMA_CQE_RECV = 1,
	RPCRDMA_CQE_SEND,
	RPCRDMA_CQE_READ,  /* last RDMA Read of one Read chunk */
	RPCRDMA_CQE_WRITE, /* signalled RDMA Write (normally unsignalled) */
	RPCRDMA_CQE_BC_SEND, /* Send of a backchannel message (RFC 8167) */
};

/** Embedded in each context that posts work; wr_id points at it. */
struct rpcrdma_cqe {
	uint32_t ce_type; /* enum rpcrdma_cqe_type */
	uint32_t ce_id;   /* completion ID, for traces */
};

#define rpcrdma_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/** The seam: real verbs by default, replaced by unit tests. */
struct rpcrdma_verbs_ops {
	int (*vo_post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			    struct ibv_send_wr **bad);
	int (*vo_post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad);
	int (*vo_poll_cq)(struct ibv_cq *cq, int n, struct ibv_wc *wc);
	struct ibv_mr *(*vo_reg_mr)(struct ibv_pd *pd, void *addr, size_t len,
				    int access);
	int (*vo_dereg_mr)(struct ibv_mr *mr);
	int (*vo_disconnect)(struct rdma_cm_id *id);
	void (*vo_destroy_id)(struct rdma_cm_id *id);
};

/** The ops in use (rpcrdma_verbs_real unless a test installed others). */
extern const struct rpcrdma_verbs_ops *rpcrdma_verbs;
extern const struct rpcrdma_verbs_ops rpcrdma_verbs_real;

/**
 * rpcrdma_verbs_post_send - post a chain of send-queue work requests.
 * Return: 0 or a negative errno (the verbs provider's value, negated);
 * on failure nothing from *@bad onwards was posted.
 */
int rpcrdma_verbs_post_send(struct ibv_qp *qp, struct ibv_send_wr *wr,
			    struct ibv_send_wr **bad);
/** rpcrdma_verbs_post_recv - as above, for the receive queue. */
int rpcrdma_verbs_post_recv(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad);
/** rpcrdma_verbs_poll - poll up to @n completions; count or negative errno. */
int rpcrdma_verbs_poll(struct ibv_cq *cq, int n, struct ibv_wc *wc);

/**
 * rpcrdma_verbs_reg_mr - register @len bytes at @addr with @access.
 * Return: the region, or NULL with errno set.
 */
struct ibv_mr *rpcrdma_verbs_reg_mr(struct ibv_pd *pd, void *addr, size_t len,
				    int access);
/** rpcrdma_verbs_dereg_mr - release a region; 0 or a negative errno. */
int rpcrdma_verbs_dereg_mr(struct ibv_mr *mr);

/** rpcrdma_verbs_disconnect - rdma_disconnect(); 0 or a negative errno. */
int rpcrdma_verbs_disconnect(struct rdma_cm_id *id);

/**
 * rpcrdma_verbs_destroy_id - destroy @id's QP, if it has one, then @id
 * (rdma_destroy_qp(), rdma_destroy_id()).  Once it returns the device
 * touches no buffer posted on that QP any more, flushed or not: work still
 * posted is discarded without completions.  @id is freed.
 */
void rpcrdma_verbs_destroy_id(struct rdma_cm_id *id);

/**
 * rpcrdma_verbs_conn_param - a Requester's connection parameters.
 * @param: out: zeroed, then filled: RFC 8797 private data in @pdata (our
 *         version, no flags, @send and @recv as the inline sizes in bytes),
 *         RDMA Read depths from @dev capped at 255 (the Responder reads
 *         our Read chunks: let it have several in flight), retry_count
 *         and rnr_retry_count 7 (the most), flow control on.
 * @dev: the device's attributes (ibv_query_device).
 * @pdata: RPCRDMA_CM_PRIVATE_BYTES bytes, owned by the caller, which must
 *         outlive the rdma_connect() call that uses @param.
 * Used by the client transport and by rpcrdma-probe.
 */
void rpcrdma_verbs_conn_param(struct rdma_conn_param *param,
			      const struct ibv_device_attr *dev, uint8_t *pdata,
			      uint32_t send, uint32_t recv);

/**
 * rpcrdma_verbs_preload_providers - before the process's first device
 * listing (the first rdma_create_event_channel() or ibv_get_device_list()),
 * load only the verbs providers of the RDMA devices present
 * (/sys/class/infiniband), from the directory "libibverbs/" next to the
 * loaded libibverbs: for each device the provider its name starts with
 * (rxe0: rxe, mlx5_0: mlx5) and the one of its kernel driver (mlx5_core:
 * mlx5).  libibverbs loads every configured provider only when a device
 * is left without one, so a device renamed beyond both guesses costs one
 * dlopen more than before, nothing else.  Once per process, thread-safe;
 * the environment variable RPCRDMA_ALL_PROVIDERS turns it off.
 */
void rpcrdma_verbs_preload_providers(void);

/*
 * The pieces, for unit tests (src/verbs/verbs_provider.c):
 * verbs_provider_of_device - provider name from an RDMA device name
 *   (trailing digits and then one '_' removed); false when none is left
 *   or it does not fit @cap bytes.
 * verbs_provider_of_driver - provider name from a kernel driver name
 *   (up to a '.'; mlx5_core and the others whose provider has another
 *   name mapped); false when empty or too long.
 * verbs_provider_file - the path of "lib@name-rdmav<N>.so" in @dir into
 *   @out; false when there is none or it does not fit.
 * verbs_provider_scan - for each device directory in @sysfs_dir, @load
 *   the providers its kernel driver and its name point at (each once,
 *   only those with a file in @prov_dir); the count @load returned 0 for.
 */
bool verbs_provider_of_device(const char *ibdev, char *out, size_t cap);
bool verbs_provider_of_driver(const char *kdriver, char *out, size_t cap);
bool verbs_provider_file(const char *dir, const char *name, char *out, size_t cap);
unsigned verbs_provider_scan(const char *sysfs_dir, const char *prov_dir,
			     int (*load)(const char *path, void *arg), void *arg);

/** rpcrdma_cqe_of - the tag a work completion carries. */
static inline struct rpcrdma_cqe *rpcrdma_cqe_of(const struct ibv_wc *wc)
{
	return (struct rpcrdma_cqe *)(uintptr_t)wc->wr_id;
}

#endif /* RPCRDMA_VERBS_H */
