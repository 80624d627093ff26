// SPDX-License-Identifier: MIT
/*
 * svc.c - server object and run loop: the rdma_cm listener, connection
 * events, completion channels, the worker done queue, and counters.
 */
#include <errno.h>
#include <netdb.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <fcntl.h>
#include <unistd.h>

#include "svc/svc_bc.h"

/* epoll tags for the two fds that are not connections (a device's
 * completion channel's tag is its struct svc_dev; TCP's: svc_tcp_is_tag()) */
/* aligned: a TCP connection's tag is its address with the low bit set */
static _Alignas(8) char svc_tag_cm, svc_tag_wake;

void svc_log(struct rpcrdma_svc *svc, const char *fmt, ...)
{
	FILE *f = svc->sv_cfg.sc_log ? svc->sv_cfg.sc_log : stderr;
	va_list ap;

	va_start(ap, fmt);
	/* One line at a time from every transport thread and worker. */
	flockfile(f);
	fputs("rpcrdma-svc: ", f);
	vfprintf(f, fmt, ap);
	fputc('\n', f);
	fflush(f);
	funlockfile(f);
	va_end(ap);
}

/*
 * CPUs this process may run on: its affinity mask (taskset, a cgroup
 * cpuset, systemd's CPUAffinity=), else the CPUs online.  The default
 * number of transport threads, one per CPU the server can use.
 */
static unsigned svc_usable_cpus(void)
{
	cpu_set_t set;
	long online;

	if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0)
		return (unsigned)CPU_COUNT(&set);
	online = sysconf(_SC_NPROCESSORS_ONLN);
	return online > 0 ? (unsigned)online : 1;
}

static void svc_cfg_defaults(struct rpcrdma_svc_config *cfg)
{
	if (!cfg->sc_port)
		cfg->sc_port = RPCRDMA_NFS_PORT;
	if (!cfg->sc_credits)
		cfg->sc_credits = 128;
	if (!cfg->sc_inline_size)
		cfg->sc_inline_size = 4096;
	if (!cfg->sc_max_payload)
		cfg->sc_max_payload = 1u << 20;
	if (!cfg->sc_call_contexts)
		cfg->sc_call_contexts = 256;
	if (!cfg->sc_small_contexts)
		cfg->sc_small_contexts = 4096;
	if (!cfg->sc_memory) {
		long pages = sysconf(_SC_PHYS_PAGES), psz = sysconf(_SC_PAGESIZE);
		uint64_t phys = pages > 0 && psz > 0 ? (uint64_t)pages * (uint64_t)psz : 0;

		cfg->sc_memory = phys / 4 > (64ull << 20) ? phys / 4 : 64ull << 20;
	}
	if (!cfg->sc_threads)
		cfg->sc_threads = 4;
	if (!cfg->sc_transport_threads) {
		cfg->sc_transport_threads = svc_usable_cpus();
		if (cfg->sc_transport_threads > RPCRDMA_SVC_MAX_TRANSPORT_THREADS)
			cfg->sc_transport_threads = RPCRDMA_SVC_MAX_TRANSPORT_THREADS;
		/* Every group has a worker of its own. */
		if (!cfg->sc_loop_dispatch && cfg->sc_transport_threads > cfg->sc_threads)
			cfg->sc_transport_threads = cfg->sc_threads;
	}
}

/* Power-of-two slab holding the largest call or reply buffer. */
static size_t svc_slab_size(const struct rpcrdma_svc_config *cfg)
{
	size_t need = (size_t)cfg->sc_max_payload + SVC_PAYLOAD_SLACK, sz = 65536;

	if (need < (size_t)cfg->sc_inline_size * 4u)
		need = (size_t)cfg->sc_inline_size * 4u;
	while (sz < need)
		sz <<= 1;
	return sz;
}

static int svc_group_init(struct rpcrdma_svc *svc, struct svc_group *grp, unsigned index)
{
	struct epoll_event ev;

	grp->gr_svc = svc;
	grp->gr_index = index;
	grp->gr_epoll = -1;
	grp->gr_wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (grp->gr_wake_fd < 0)
		return -errno;
	pthread_mutex_init(&grp->gr_wq_lock, NULL);
	grp->gr_epoll = epoll_create1(EPOLL_CLOEXEC);
	if (grp->gr_epoll < 0)
		return -errno;
	memset(&ev, 0, sizeof(ev));
	/* Edge-triggered: every write to the eventfd reports it once more,
	 * so the loop never reads it (one system call less per wake-up; the
	 * counter would take centuries to fill at a billion writes a second). */
	ev.events = EPOLLIN | EPOLLET;
	ev.data.ptr = &svc_tag_wake;
	if (epoll_ctl(grp->gr_epoll, EPOLL_CTL_ADD, grp->gr_wake_fd, &ev))
		return -errno;
	return 0;
}

/* Register @ch (nonblocking) with @grp's epoll set as its CM channel. */
static int svc_group_add_cm(struct svc_group *grp, struct rdma_event_channel *ch)
{
	struct epoll_event ev;

	if (fcntl(ch->fd, F_SETFL, fcntl(ch->fd, F_GETFL) | O_NONBLOCK) < 0)
		return -errno;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = &svc_tag_cm;
	if (epoll_ctl(grp->gr_epoll, EPOLL_CTL_ADD, ch->fd, &ev))
		return -errno;
	return 0;
}

static void svc_group_fini(struct svc_group *grp)
{
	struct svc_conn_req *cr;
	struct svc_tcp_inbox *ti;

	while ((ti = grp->gr_tcp_inbox)) {
		grp->gr_tcp_inbox = ti->ti_next;
		close(ti->ti_fd);
		free(ti);
	}
	while ((cr = grp->gr_inbox)) {
		grp->gr_inbox = cr->cr_next;
		rdma_reject(cr->cr_id, NULL, 0);
		rdma_destroy_id(cr->cr_id);
		free(cr);
	}
	if (grp->gr_cm_channel)
		rdma_destroy_event_channel(grp->gr_cm_channel);
	if (grp->gr_epoll >= 0)
		close(grp->gr_epoll);
	if (grp->gr_wake_fd >= 0) {
		close(grp->gr_wake_fd);
		pthread_mutex_destroy(&grp->gr_wq_lock);
	}
	grp->gr_epoll = grp->gr_wake_fd = -1;
	grp->gr_cm_channel = NULL;
}

void svc_group_wake(struct svc_group *grp)
{
	uint64_t one = 1;
	ssize_t r;

	r = write(grp->gr_wake_fd, &one, sizeof(one));
	(void)r; /* a full counter still wakes the loop */
}

/* Everything but the listener; unit tests start here. */
int svc_init(struct rpcrdma_svc *svc, const struct rpcrdma_svc_config *cfg)
{
	struct rpcrdma_svc_config *c = &svc->sv_cfg;
	unsigned i;
	int rc;

	*c = *cfg;
	svc_cfg_defaults(c);
	svc->sv_drain_ms = SVC_DRAIN_MS;
	svc->sv_tcp_fd = -1;
	svc->sv_tcp_record_ms = SVC_TCP_RECORD_MS;
	svc->sv_tcp_send_ms = SVC_TCP_SEND_MS;
	svc->sv_tcp_memwait_log_ms = SVC_TCP_MEMWAIT_LOG_MS;
	if (c->sc_credits > 4096 || c->sc_small_contexts > 65536 ||
	    c->sc_call_contexts > 65536 || c->sc_inline_size < 1024 ||
	    c->sc_inline_size > 262144 || c->sc_max_payload > (64u << 20))
		return -EINVAL;
	svc->sv_slab_bytes = svc_slab_size(c);
	if (c->sc_memory < 16 * (uint64_t)svc->sv_slab_bytes)
		return -EINVAL;
	if (!c->sc_max_connections) {
		/* As many as the budget holds at the initial grant, counting
		 * each connection's queue rings as well as its Receives: the
		 * rings are not registered memory, but with Soft-RoCE they are
		 * mapped into this process (about 220 KiB at 128 credits), and
		 * a flood of idle connections must stop at the budget, not at
		 * the kernel's OOM killer.  Never beyond the receive share. */
		uint64_t recvs = (uint64_t)(svc_initial_credits(c) + SVC_EXTRA_RECVS) *
				 c->sc_inline_size;
		uint64_t n = c->sc_memory / (recvs + svc_conn_queue_bytes(c->sc_credits));

		if (n > c->sc_memory / 2 / recvs)
			n = c->sc_memory / 2 / recvs;
		c->sc_max_connections = (uint32_t)(n < 65536 ? n : 65536);
	}
	if (!c->sc_max_conns_per_host) {
		/* A fair share: an eighth, but room for a client's nconnect=16. */
		uint32_t n = c->sc_max_connections / 8;

		n = n < 16 ? 16 : n;
		c->sc_max_conns_per_host = n < c->sc_max_connections ? n : c->sc_max_connections;
	}
	if (!c->sc_idle_timeout)
		c->sc_idle_timeout = RPCRDMA_SVC_IDLE_DEFAULT;
	if (c->sc_max_conns_per_host > 65536 ||
	    (c->sc_idle_timeout > 86400 && c->sc_idle_timeout != RPCRDMA_SVC_IDLE_NEVER))
		return -EINVAL;
	if (c->sc_transport_threads > RPCRDMA_SVC_MAX_TRANSPORT_THREADS)
		return -EINVAL;
	rpcrdma_wire_limits_default(&svc->sv_limits);
	svc->sv_limits.wl_max_chunk_bytes = c->sc_max_payload + SVC_PAYLOAD_SLACK;
	/* TCP: a record holds the largest WRITE, a reply the largest READ. */
	svc->sv_tcp_maxrec = c->sc_max_payload + SVC_PAYLOAD_SLACK;
	svc->sv_tcp_reply_cap = c->sc_max_payload + SVC_PAYLOAD_SLACK;
	pthread_mutex_init(&svc->sv_hosts_lock, NULL);
	svc->sv_hosts_seed = (uint32_t)svc_now_ms() ^ (uint32_t)(uintptr_t)svc;
	svc->sv_groups = calloc(c->sc_transport_threads, sizeof(*svc->sv_groups));
	if (!svc->sv_groups)
		return -ENOMEM;
	for (i = 0; i < c->sc_transport_threads; i++) {
		rc = svc_group_init(svc, &svc->sv_groups[i], i);
		if (rc) {
			svc_fini(svc);
			return rc;
		}
		svc->sv_ngroups++;
	}
	return 0;
}

void svc_fini(struct rpcrdma_svc *svc)
{
	unsigned i;

	svc_tcp_unlisten(svc);
	for (i = 0; i < svc->sv_ngroups; i++) {
		svc_tcp_reap(&svc->sv_groups[i]);
		svc_tcp_free_calls(&svc->sv_groups[i]);
		svc_group_fini(&svc->sv_groups[i]);
	}
	free(svc->sv_groups);
	svc->sv_groups = NULL;
	svc->sv_ngroups = 0;
	svc_host_fini(svc);
	pthread_mutex_destroy(&svc->sv_hosts_lock);
}

static int svc_listen(struct rpcrdma_svc *svc)
{
	const struct rpcrdma_svc_config *cfg = &svc->sv_cfg;
	struct rdma_addrinfo hints, *res = NULL;
	char port[8];
	int rc;

	memset(&hints, 0, sizeof(hints));
	hints.ai_flags = RAI_PASSIVE | RAI_NUMERICHOST;
	hints.ai_port_space = RDMA_PS_TCP;
	snprintf(port, sizeof(port), "%u", cfg->sc_port);
	/* No address: the IPv6 wildcard, which also takes IPv4 unless the
	 * host sets bindv6only; 0.0.0.0 where IPv6 is not available. */
	if (rdma_getaddrinfo(cfg->sc_listen ? cfg->sc_listen : "::", port,
			     &hints, &res) &&
	    (cfg->sc_listen ||
	     rdma_getaddrinfo("0.0.0.0", port, &hints, &res)))
		return -EINVAL;
	if (rdma_create_id(svc->sv_cm_channel, &svc->sv_listen_id, svc, RDMA_PS_TCP)) {
		rc = -errno;
		goto out;
	}
	if (rdma_bind_addr(svc->sv_listen_id, res->ai_src_addr)) {
		rc = -errno;
		goto out;
	}
	if (rdma_listen(svc->sv_listen_id, 64)) {
		rc = -errno;
		goto out;
	}
	rc = 0;
out:
	rdma_freeaddrinfo(res);
	return rc;
}

int rpcrdma_svc_create(const struct rpcrdma_svc_config *cfg, struct rpcrdma_svc **out)
{
	struct rpcrdma_svc *svc;
	unsigned i;
	int rc;

	svc = calloc(1, sizeof(*svc));
	if (!svc)
		return -ENOMEM;
	rc = svc_init(svc, cfg);
	if (rc) {
		free(svc);
		return rc;
	}
	if (svc_stats_create(svc)) {
		rc = -ENOMEM;
		goto err;
	}
	svc->sv_cm_channel = rdma_create_event_channel();
	if (!svc->sv_cm_channel) {
		rc = -errno ? -errno : -ENODEV;
		goto err;
	}
	rc = svc_group_add_cm(&svc->sv_groups[0], svc->sv_cm_channel);
	if (rc)
		goto err;
	/* Every other group gets the CM events of its own connections. */
	for (i = 1; i < svc->sv_ngroups; i++) {
		struct svc_group *grp = &svc->sv_groups[i];

		grp->gr_cm_channel = rdma_create_event_channel();
		if (!grp->gr_cm_channel) {
			rc = -errno ? -errno : -ENODEV;
			goto err;
		}
		rc = svc_group_add_cm(grp, grp->gr_cm_channel);
		if (rc)
			goto err;
	}
	rc = svc_listen(svc);
	if (rc)
		goto err;
	svc_log(svc, "memory budget %llu MiB (slabs of %zu KiB), up to %u connections, "
		"credits %u rising to %u per connection, %u transport thread%s",
		(unsigned long long)(svc->sv_cfg.sc_memory >> 20), svc->sv_slab_bytes >> 10,
		svc->sv_cfg.sc_max_connections,
		svc_initial_credits(&svc->sv_cfg), svc->sv_cfg.sc_credits,
		svc->sv_ngroups, svc->sv_ngroups == 1 ? "" : "s");
	*out = svc;
	return 0;
err:
	rpcrdma_svc_destroy(svc);
	return rc;
}

int rpcrdma_svc_register(struct rpcrdma_svc *svc, uint32_t prog, uint32_t vers,
			 rpcrdma_svc_dispatch_fn fn, void *arg)
{
	return rpcrdma_svc_register_flags(svc, prog, vers, fn, arg, 0);
}

int rpcrdma_svc_register_flags(struct rpcrdma_svc *svc, uint32_t prog,
			       uint32_t vers, rpcrdma_svc_dispatch_fn fn,
			       void *arg, unsigned flags)
{
	unsigned i;

	if (flags & ~RPCRDMA_SVC_TRY_TRANSPORT)
		return -EINVAL;
	for (i = 0; i < svc->sv_nprogs; i++)
		if (svc->sv_progs[i].sp_prog == prog && svc->sv_progs[i].sp_vers == vers)
			return -EEXIST;
	if (svc->sv_nprogs == SVC_MAX_PROGRAMS)
		return -ENOSPC;
	svc->sv_progs[svc->sv_nprogs++] = (struct svc_program){
		.sp_prog = prog, .sp_vers = vers, .sp_fn = fn, .sp_arg = arg,
		.sp_flags = flags,
	};
	return 0;
}

struct svc_group *svc_pick_group(struct rpcrdma_svc *svc)
{
	struct svc_group *best = &svc->sv_groups[0];
	uint32_t least = atomic_load(&best->gr_nconns) + atomic_load(&best->gr_pending), n;
	unsigned i;

	for (i = 1; i < svc->sv_ngroups; i++) {
		n = atomic_load(&svc->sv_groups[i].gr_nconns) +
		    atomic_load(&svc->sv_groups[i].gr_pending);
		if (n < least) {
			least = n;
			best = &svc->sv_groups[i];
		}
	}
	return best;
}

/*
 * svc_hand_over - give connection request @id to group @to: its CM events
 * move to that group's channel (rdma_migrate_id(), which waits until the
 * request's event is acknowledged: the caller did), the request goes to
 * its inbox, and its run loop is woken to accept it.
 */
static int svc_hand_over(struct svc_group *to, struct rdma_cm_id *id,
			 const struct svc_conn_param *p)
{
	struct svc_conn_req *cr = calloc(1, sizeof(*cr));

	if (!cr)
		return -ENOMEM;
	if (rdma_migrate_id(id, to->gr_cm_channel)) {
		int rc = -errno;

		free(cr);
		return rc;
	}
	cr->cr_id = id;
	cr->cr_param = *p;
	atomic_fetch_add(&to->gr_pending, 1);
	pthread_mutex_lock(&to->gr_wq_lock);
	cr->cr_next = to->gr_inbox;
	/* atomic: the group's loop peeks at it without the lock */
	__atomic_store_n(&to->gr_inbox, cr, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&to->gr_wq_lock);
	svc_group_wake(to);
	return 0;
}

/* Accept the requests handed to @grp. */
static void svc_take_inbox(struct svc_group *grp)
{
	struct svc_conn_req *cr, *next;

	pthread_mutex_lock(&grp->gr_wq_lock);
	cr = grp->gr_inbox;
	__atomic_store_n(&grp->gr_inbox, NULL, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&grp->gr_wq_lock);
	for (; cr; cr = next) {
		next = cr->cr_next;
		cr->cr_id->context = NULL;
		if (svc_conn_accept(grp, cr->cr_id, &cr->cr_param)) {
			rdma_reject(cr->cr_id, NULL, 0);
			rdma_destroy_id(cr->cr_id);
		}
		atomic_fetch_sub(&grp->gr_pending, 1);
		free(cr);
	}
}

static void svc_cm_event(struct svc_group *grp, struct rdma_event_channel *ch)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	struct rdma_cm_event *ev;

	while (rdma_get_cm_event(ch, &ev) == 0) {
		enum rdma_cm_event_type type = ev->event;
		struct rdma_cm_id *id = ev->id;
		struct svc_conn *conn = id->context != svc ? id->context : NULL;
		struct svc_group *to;
		struct svc_conn_param p;
		int rc;

		if (svc->sv_cfg.sc_verbose)
			svc_log(svc, "cm event %s", rdma_event_str(type));
		if (type != RDMA_CM_EVENT_CONNECT_REQUEST) {
			/* An accepted connection's or the listener's event. */
			rdma_ack_cm_event(ev);
			if (conn || id == svc->sv_listen_id)
				svc_conn_cm_event(svc, conn, type);
			continue;
		}
		id->context = NULL;
		svc_conn_param_of(ev, &p);
		to = svc_pick_group(svc);
		if (atomic_load(&svc->sv_stop)) {
			/* Stopping (a drain reads the CM channel): the peer
			 * is refused at once rather than accepted and closed. */
			rdma_ack_cm_event(ev);
			rc = -ESHUTDOWN;
		} else if (to == grp) {
			rc = svc_conn_accept(grp, id, &p);
			rdma_ack_cm_event(ev);
		} else {
			rdma_ack_cm_event(ev);
			rc = svc_hand_over(to, id, &p);
			if (rc)
				svc_log(svc, "handing a connection to transport thread %u failed: %s",
					to->gr_index, strerror(-rc));
		}
		if (rc) {
			rdma_reject(id, NULL, 0);
			rdma_destroy_id(id);
		}
	}
}

static void svc_drain_all(struct rpcrdma_svc *svc);

/* Connections whose drain stopped at its budget get another turn. */
static void svc_poll_more(struct svc_group *grp)
{
	struct svc_conn *conn;

	if (!grp->gr_more)
		return;
	grp->gr_more = false;
	for (conn = grp->gr_conns; conn; conn = conn->sx_next)
		if (conn->sx_more)
			svc_conn_cq_event_poll(conn);
}

void svc_take_done(struct svc_group *grp)
{
	struct svc_call *cc = svc_done_take_all(grp), *next;

	/* The replies of one take go out with one post per connection. */
	grp->gr_post_batch = cc != NULL;

	for (; cc; cc = next) {
		next = cc->cc_next;
		cc->cc_next = NULL;
		if (cc->cc_worker_fail)
			svc_send_worker_failed(cc); /* made on the worker, not posted */
		else
			svc_rpc_finish(cc);
	}
	svc_send_flush(grp);
	if (grp->gr_tcp_flush || grp->gr_tcp_resume)
		svc_tcp_flush(grp); /* TCP replies of this take, one write each connection */
	/* Calls started by contexts these replies gave back. */
	svc_work_flush(grp);
}

/*
 * svc_dump_stats_line - the SIGUSR1 JSON line, formatted in memory and
 * written with one fwrite: on an unbuffered log (stderr) a line of several
 * KiB written piecewise could be read half-written, or have another
 * thread's log line inside it.
 */
static void svc_dump_stats_line(struct rpcrdma_svc *svc)
{
	FILE *f = svc->sv_cfg.sc_log ? svc->sv_cfg.sc_log : stderr;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	if (!m) {
		rpcrdma_svc_stats_write(svc, RPCRDMA_SVC_STATS_JSON, f);
		return;
	}
	rpcrdma_svc_stats_write(svc, RPCRDMA_SVC_STATS_JSON, m);
	if (fclose(m) == 0 && buf) {
		fwrite(buf, 1, len, f);
		fflush(f);
	}
	free(buf);
}

/* The CM channel of @grp's epoll set. */
static struct rdma_event_channel *svc_group_cm(struct svc_group *grp)
{
	return grp->gr_index ? grp->gr_cm_channel : grp->gr_svc->sv_cm_channel;
}

/* Before the run loop sleeps: arm the send CQs something now waits on
 * (svc_conn_send_arm()), draining each once more, and note whether one
 * is left unarmed with contexts out (the sleep is bounded then). */
static void svc_group_send_arm(struct svc_group *grp)
{
	struct svc_conn *conn;
	uint64_t now = 0;

	if (grp->gr_svc->sv_cfg.sc_poll)
		return;
	grp->gr_lazy_sends = false;
	for (conn = grp->gr_conns; conn; conn = conn->sx_next) {
		if (conn->sx_sarmed || conn->sx_reap || !conn->sx_scq ||
		    conn->sx_scq == conn->sx_cq)
			continue;
		if (!now)
			now = svc_now_ms();
		if (svc_conn_send_arm(conn, now))
			svc_conn_cq_event_poll(conn);
	}
}

/* The run loop's sleep, @ms (-1: none), bounded by @grp's next idle scan. */
static int svc_idle_wait(struct svc_group *grp, int ms)
{
	uint64_t now, left;

	if (!grp->gr_idle_next_ms || !ms)
		return ms;
	now = svc_now_ms();
	left = grp->gr_idle_next_ms > now ? grp->gr_idle_next_ms - now : 0;
	if (left > INT32_MAX)
		left = INT32_MAX;
	return ms < 0 || (uint64_t)ms > left ? (int)left : ms;
}

/* The run loop's sleep, @ms (-1: none), bounded by @grp's next TCP
 * deadline sweep while it has TCP connections. */
static int svc_tcp_wait(struct svc_group *grp, int ms)
{
	uint64_t now, left;

	if (!grp->gr_tconns || !ms)
		return ms;
	now = svc_now_ms();
	left = grp->gr_tcp_sweep_ms > now ? grp->gr_tcp_sweep_ms - now : 0;
	if (left > INT32_MAX)
		left = INT32_MAX;
	return ms < 0 || (uint64_t)ms > left ? (int)left : ms;
}

/* One transport thread's run loop, until the server stops. */
static int svc_group_loop(struct svc_group *grp)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	struct epoll_event evs[16];
	int n, i;

	while (!atomic_load(&svc->sv_stop)) {
		/* Polling mode spins on the CQs and the done queue instead of
		 * sleeping, and looks at the epoll set only now and then. */
		if (svc->sv_cfg.sc_poll && ++grp->gr_spins % SVC_POLL_EPOLL_EVERY)
			n = 0;
		else
			n = epoll_wait(grp->gr_epoll, evs, 16,
				       /* backchannel hook: wake for its deadlines */
				       svc_bc_timeout(grp, svc_tcp_wait(grp, svc_idle_wait(grp,
						      svc->sv_cfg.sc_poll || grp->gr_more ||
						      grp->gr_reap_wait ? 0 :
						      grp->gr_lazy_sends ? (int)SVC_SEND_REAP_MS :
						      grp->gr_handshakes ? 1000 : -1))));
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (svc->sv_cfg.sc_poll) {
			for (struct svc_conn *conn = grp->gr_conns; conn; conn = conn->sx_next)
				svc_conn_cq_event_poll(conn);
			if (svc_done_pending(grp))
				svc_take_done(grp);
		}
		svc_poll_more(grp);
		for (i = 0; i < n; i++) {
			void *tag = evs[i].data.ptr;

			if (tag == &svc_tag_cm) {
				svc_cm_event(grp, svc_group_cm(grp));
			} else if (tag == &svc_tag_wake) {
				/* Not read: edge-triggered (svc_group_init()).
				 * A peek outside gr_wq_lock (the lists are
				 * pushed under it, atomically, and taken
				 * under it): an empty inbox costs no lock. */
				if (__atomic_load_n(&grp->gr_inbox, __ATOMIC_RELAXED))
					svc_take_inbox(grp);
				if (__atomic_load_n(&grp->gr_tcp_inbox, __ATOMIC_RELAXED))
					svc_tcp_take_inbox(grp);
				svc_take_done(grp);
			} else if (svc_tcp_is_tag(tag)) {
				svc_tcp_event(grp, tag, evs[i].events);
			} else {
				svc_dev_cq_event(tag);
			}
		}
		/* Slabs are per group: idle ones go back when another group
		 * is short of the budget, and a group given memory back
		 * serves its waiters again. */
		svc_budget_share(grp);
		svc_budget_kick(grp);
		/* Receives freed outside a completion batch (a call context
		 * came back and took a waiting message) go back now. */
		for (struct svc_conn *conn = grp->gr_conns; conn; conn = conn->sx_next)
			svc_conn_flush_recvs(conn);
		svc_work_flush(grp);
		if (grp->gr_handshakes)
			svc_conn_expire_handshakes(grp, svc_now_ms());
		if (grp->gr_idle_next_ms &&
		    (!svc->sv_cfg.sc_poll || !(grp->gr_spins % SVC_POLL_EPOLL_EVERY)))
			svc_conn_expire_idle(grp, svc_now_ms());
		if (grp->gr_tconns)
			svc_tcp_sweep(grp, svc_now_ms());
		svc_bc_run(grp); /* backchannel hook: queued calls, timeouts */
		svc_group_send_arm(grp);
		svc_conn_reap(grp);
		svc_tcp_reap(grp);
		if (!grp->gr_index && atomic_exchange(&svc->sv_dump, false))
			svc_dump_stats_line(svc);
	}
	return 0;
}

/* Set while this thread runs a group's loop (rpcrdma_svc_on_transport_thread()). */
static _Thread_local bool svc_transport_thread;

bool rpcrdma_svc_on_transport_thread(void)
{
	return svc_transport_thread;
}

static void *svc_group_main(void *arg)
{
	struct svc_group *grp = arg;
	int rc;

	svc_transport_thread = true;
	rc = svc_group_loop(grp);

	if (rc) {
		svc_log(grp->gr_svc, "transport thread %u: %s", grp->gr_index, strerror(-rc));
		rpcrdma_svc_stop(grp->gr_svc);
	}
	return NULL;
}

unsigned svc_group_workers(const struct rpcrdma_svc *svc, unsigned i)
{
	unsigned t = svc->sv_cfg.sc_threads, g = svc->sv_ngroups;
	unsigned n = t / g + (i < t % g);

	if (svc->sv_cfg.sc_loop_dispatch)
		return 0;
	return n ? n : 1;
}

int rpcrdma_svc_run(struct rpcrdma_svc *svc)
{
	unsigned i;
	int rc = 0, err;

	for (i = 0; i < svc->sv_ngroups && !rc; i++)
		rc = svc_workers_start(&svc->sv_groups[i], svc_group_workers(svc, i));
	for (i = 1; i < svc->sv_ngroups && !rc; i++) {
		struct svc_group *grp = &svc->sv_groups[i];

		err = pthread_create(&grp->gr_thread, NULL, svc_group_main, grp);
		if (err) {
			rc = -err;
			break;
		}
		grp->gr_thread_started = true;
	}
	if (!rc) {
		svc_transport_thread = true;
		rc = svc_group_loop(&svc->sv_groups[0]);
		svc_transport_thread = false;
	}
	/* Whatever ended this loop ends the others. */
	rpcrdma_svc_stop(svc);
	for (i = 1; i < svc->sv_ngroups; i++) {
		struct svc_group *grp = &svc->sv_groups[i];

		if (grp->gr_thread_started)
			pthread_join(grp->gr_thread, NULL);
		grp->gr_thread_started = false;
	}
	/* Every group is now this thread's. */
	for (i = 0; i < svc->sv_ngroups; i++) {
		svc_workers_stop(&svc->sv_groups[i]);
		svc_take_done(&svc->sv_groups[i]);
	}
	/* Nothing is served any more: close every connection and give the
	 * registered pools back, so the final counters show what leaked. */
	svc_drain_all(svc);
	for (i = 0; i < svc->sv_ngroups; i++)
		svc_dev_destroy_all(&svc->sv_groups[i]);
	if (!rc)
		rc = svc->sv_stop_cause; /* 0 after rpcrdma_svc_stop() */
	return rc;
}

void rpcrdma_svc_stop(struct rpcrdma_svc *svc)
{
	unsigned i;

	atomic_store(&svc->sv_stop, true);
	for (i = 0; i < svc->sv_ngroups; i++)
		svc_group_wake(&svc->sv_groups[i]);
}

void rpcrdma_svc_dump_stats(struct rpcrdma_svc *svc)
{
	atomic_store(&svc->sv_dump, true);
	svc_group_wake(&svc->sv_groups[0]);
}

void rpcrdma_svc_get_stats(struct rpcrdma_svc *svc, struct rpcrdma_svc_stats *st)
{
	struct svc_ct_vals v;

	svc_counters_read(&svc->sv_ct, &v);
	svc_counters_public(&v, st);
}

void rpcrdma_svc_stats_json(const struct rpcrdma_svc_stats *st, FILE *f)
{
	struct svc_ct_vals v = { 0 };

#define SVC_CT_FROM(name, type, scope, help) v.cv_total[SVC_CT_##name] = st->ss_##name;
	RPCRDMA_SVC_STATS_LIST(SVC_CT_FROM)
#undef SVC_CT_FROM
	fputc('{', f);
	svc_counters_json_fields(&v, SVC_CT_NPUBLIC, f);
	fputs("}\n", f);
}

static void svc_rdma_close_all(struct svc_group *grp)
{
	struct svc_conn *conn;

	for (conn = grp->gr_conns; conn; conn = conn->sx_next)
		svc_conn_disconnected(conn);
}

/* RPC-over-RDMA (RFC 8166): svc_conn.c accepts, svc_recv.c receives,
 * svc_send.c replies; a worker may post the reply itself. */
const struct svc_xprt_class svc_rdma_class = {
	.xc_name = "rdma",
	.xc_ddp = true,
	.xc_worker_posts = true,
	.xc_send = svc_send_reply,
	.xc_release = svc_call_drop,
	.xc_close_all = svc_rdma_close_all,
	.xc_bc_send = svc_bc_rdma_send,
	.xc_bc_each = svc_bc_rdma_each,
};

/* Every transport, for what is done to all of them (a stop). */
static const struct svc_xprt_class *const svc_xprt_classes[] = {
	&svc_rdma_class, &svc_tcp_class,
};

/* Close every connection of @grp, every transport's: RDMA's posted work
 * starts to flush, TCP's sockets close. */
static void svc_group_close_all(struct svc_group *grp)
{
	unsigned i;

	for (i = 0; i < sizeof(svc_xprt_classes) / sizeof(svc_xprt_classes[0]); i++)
		svc_xprt_classes[i]->xc_close_all(grp);
	svc_work_drop_all(grp); /* no worker runs them any more */
	svc_conn_reap(grp);
}

/* One turn of @grp's drain: CM events and completions for up to
 * @timeout_ms, then the connections that have drained are freed. */
static void svc_group_drain_turn(struct svc_group *grp, int timeout_ms)
{
	struct epoll_event evs[16];
	struct svc_conn *conn;
	int n, i;

	n = grp->gr_epoll >= 0 ? epoll_wait(grp->gr_epoll, evs, 16, timeout_ms) : 0;
	for (i = 0; i < n; i++) {
		void *tag = evs[i].data.ptr;

		if (tag == &svc_tag_cm)
			svc_cm_event(grp, svc_group_cm(grp));
		else if (tag != &svc_tag_wake && !svc_tcp_is_tag(tag))
			svc_dev_cq_event(tag);
	}
	/* Flushes may complete without an event when the CQ was not armed. */
	for (conn = grp->gr_conns; conn; conn = conn->sx_next)
		svc_conn_cq_event_poll(conn);
	svc_conn_reap(grp);
	svc_tcp_reap(grp);
}

/* The connections of @grp still there after the drain's time: destroying
 * the QP ends the device's use of every buffer posted on it, so its
 * Receives and the call contexts its unflushed work held go back all the
 * same, and the log says so. */
static void svc_group_force_close(struct svc_group *grp, uint32_t waited_ms)
{
	struct rpcrdma_svc *svc = grp->gr_svc;
	struct svc_conn *conn;

	while ((conn = grp->gr_conns)) {
		svc_log(svc, "conn %u: %u receives posted and %u calls out %u ms after the "
			"disconnect: QP destroyed without their flushes",
			conn->sx_id_num, conn->sx_recvs_posted, conn->sx_calls_out, waited_ms);
		grp->gr_conns = conn->sx_next;
		atomic_fetch_sub(&grp->gr_nconns, 1);
		atomic_fetch_sub(&svc->sv_nconns, 1);
		SVC_XDEC(svc, conns_open, SVC_XPRT_RDMA, 1);
		/* First the QP, then what its work held. */
		rpcrdma_verbs_destroy_id(conn->sx_id);
		conn->sx_id = NULL;
		svc_dev_put_calls_of(conn->sx_dev, conn);
		svc_conn_destroy(conn);
	}
}

/* Close every connection of every group, then wait (at most sv_drain_ms,
 * for all groups together, so their flushes overlap) for the posted work
 * to flush; what has not flushed by then goes with its QP. */
static void svc_drain_all(struct rpcrdma_svc *svc)
{
	uint64_t start = svc_now_ms(), now = start;
	bool open;
	unsigned i;

	svc_tcp_unlisten(svc); /* no new TCP connection from here on */
	for (i = 0; i < svc->sv_ngroups; i++)
		svc_group_close_all(&svc->sv_groups[i]);
	for (;;) {
		open = false;
		for (i = 0; i < svc->sv_ngroups; i++)
			open |= svc->sv_groups[i].gr_conns != NULL;
		now = svc_now_ms();
		if (!open || now - start >= svc->sv_drain_ms)
			break;
		for (i = 0; i < svc->sv_ngroups; i++)
			if (svc->sv_groups[i].gr_conns)
				svc_group_drain_turn(&svc->sv_groups[i], 10);
	}
	for (i = 0; i < svc->sv_ngroups; i++)
		svc_group_force_close(&svc->sv_groups[i], (uint32_t)(now - start));
}


void rpcrdma_svc_destroy(struct rpcrdma_svc *svc)
{
	unsigned i;

	if (!svc)
		return;
	svc_drain_all(svc);
	for (i = 0; i < svc->sv_ngroups; i++)
		svc_dev_destroy_all(&svc->sv_groups[i]);
	if (svc->sv_listen_id)
		rdma_destroy_id(svc->sv_listen_id);
	svc_fini(svc); /* the TCP listener too */
	if (svc->sv_cm_channel)
		rdma_destroy_event_channel(svc->sv_cm_channel);
	svc_stats_destroy(svc);
	free(svc);
}
