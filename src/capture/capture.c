// SPDX-License-Identifier: MIT
/*
 * capture.c - the capture queue and its writer thread: recorded frames are
 * copied into records, queued (bounded; a full queue drops and counts),
 * and written to the pcap file by one thread, which rotates the files at
 * cc_max_bytes (100 MiB by default, 10 files kept).
 *
 * The file holds what the messages hold: AUTH_SYS credentials, file
 * handles, names and file data.  So it is created mode 0600 and never
 * opened where it exists: each file is made with O_CREAT | O_EXCL |
 * O_NOFOLLOW (a symlink planted at the path is neither followed nor its
 * target truncated), and an existing file at the path is removed first
 * only when it is a capture of ours (capture_is_ours()), or used when it
 * is an empty file of ours; anything else is refused.  Rotation renames FILE to FILE.1 ... (rename() replaces a
 * symlink at the new name, never what it points to).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "capture/capture.h"

/* A queued pcap record: record header and frame. */
struct capture_rec {
	struct capture_rec *cr_next;
	uint32_t cr_len;
	uint8_t cr_data[];
};

struct rpcrdma_capture {
	struct rpcrdma_capture_config cp_cfg;
	char *cp_path;
	FILE *cp_file;
	uint64_t cp_file_bytes;          /* writer thread only */
	pthread_t cp_thread;
	pthread_mutex_t cp_lock;         /* the queue */
	pthread_cond_t cp_cond;
	struct capture_rec *cp_head, *cp_tail;
	uint64_t cp_queued;              /* bytes queued */
	bool cp_stop;
	_Atomic uint64_t cp_frames, cp_bytes, cp_drops, cp_files, cp_write_errors;
};

#define RELAXED memory_order_relaxed

uint32_t capture_data_bytes(const struct rpcrdma_capture *cap)
{
	return cap->cp_cfg.cc_data_bytes;
}

/*
 * capture_is_ours - is the file at @path one this writer may replace: a
 * regular file (not followed if a symlink), owned by our effective uid,
 * that begins with the pcap magic capture_pcap_file_header() writes?
 * It is opened (to read the magic) only once lstat() says it is such a
 * file, O_NOFOLLOW, and checked again to be that same file.
 */
static bool capture_is_ours(const char *path)
{
	uint8_t want[CAPTURE_PCAP_FILE_HDR], got[4];
	struct stat l, f;
	bool ours = false;
	int fd;

	if (lstat(path, &l) || !S_ISREG(l.st_mode) || l.st_uid != geteuid())
		return false;
	fd = open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return false;
	capture_pcap_file_header(want);
	if (!fstat(fd, &f) && S_ISREG(f.st_mode) && f.st_uid == geteuid() &&
	    f.st_dev == l.st_dev && f.st_ino == l.st_ino &&
	    pread(fd, got, sizeof(got), 0) == (ssize_t)sizeof(got) &&
	    !memcmp(got, want, sizeof(got)))
		ours = true;
	close(fd);
	return ours;
}

/*
 * capture_take_empty - an empty regular file at @path, owned by our
 * effective uid with no other link (what mkstemp() or touch leave), opened
 * for writing without following a symlink and made 0600.  Return: a
 * descriptor, or -EEXIST when the file at @path is not such a file.
 */
static int capture_take_empty(const char *path)
{
	struct stat l, f;
	int fd;

	if (lstat(path, &l) || !S_ISREG(l.st_mode) || l.st_uid != geteuid() ||
	    l.st_size || l.st_nlink != 1)
		return -EEXIST;
	fd = open(path, O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return -EEXIST;
	if (fstat(fd, &f) || !S_ISREG(f.st_mode) || f.st_uid != geteuid() || f.st_size ||
	    f.st_nlink != 1 || f.st_dev != l.st_dev || f.st_ino != l.st_ino ||
	    fchmod(fd, 0600)) {
		close(fd);
		return -EEXIST;
	}
	return fd;
}

/*
 * capture_create - a new file at @path, mode 0600, opened for writing:
 * O_CREAT | O_EXCL | O_NOFOLLOW, so nothing already there is followed.
 * What is there is taken only when it is an empty file of ours
 * (capture_take_empty(): nothing to lose), or unlinked and the creation
 * tried once more when capture_is_ours() (an earlier run's capture, or a
 * rotation's leftover).  Return: a descriptor; -EEXIST (something else is
 * there: a symlink, a directory, another owner's file, a file that is not
 * a capture); the negated errno of open() or unlink().
 */
static int capture_create(const char *path)
{
	int fd;

	for (int tries = 0; tries < 2; tries++) {
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd >= 0)
			return fd;
		if (errno != EEXIST)
			return -errno;
		fd = capture_take_empty(path);
		if (fd >= 0)
			return fd;
		if (tries || !capture_is_ours(path))
			return -EEXIST;
		if (unlink(path) && errno != ENOENT)
			return -errno;
	}
	return -EEXIST;
}

/* Create a new cp_path and write the file header (writer thread, or open). */
static int capture_begin_file(struct rpcrdma_capture *cap)
{
	uint8_t hdr[CAPTURE_PCAP_FILE_HDR];
	int fd = capture_create(cap->cp_path);

	if (fd < 0)
		return fd;
	cap->cp_file = fdopen(fd, "we");
	if (!cap->cp_file) {
		int err = -errno;

		close(fd);
		return err;
	}
	capture_pcap_file_header(hdr);
	/* on disk at once: a file left by a killed server is still
	 * recognised as ours (capture_is_ours()) at the next start */
	if (fwrite(hdr, sizeof(hdr), 1, cap->cp_file) != 1 || fflush(cap->cp_file)) {
		fclose(cap->cp_file);
		cap->cp_file = NULL;
		return -EIO;
	}
	cap->cp_file_bytes = sizeof(hdr);
	atomic_fetch_add_explicit(&cap->cp_files, 1, RELAXED);
	return 0;
}

/* FILE -> FILE.1 -> FILE.2 ...: the oldest beyond cc_max_files - 1 goes.
 * rename() replaces whatever is at the new name (a planted symlink
 * included) without following it. */
static void capture_rotate(struct rpcrdma_capture *cap)
{
	size_t n = strlen(cap->cp_path) + 16;
	char *from = malloc(n), *to = malloc(n);
	uint32_t k;

	if (cap->cp_file)
		fclose(cap->cp_file);
	cap->cp_file = NULL;
	if (from && to) {
		for (k = cap->cp_cfg.cc_max_files - 1; k >= 1; k--) {
			if (k == 1)
				snprintf(from, n, "%s", cap->cp_path);
			else
				snprintf(from, n, "%s.%u", cap->cp_path, k - 1);
			snprintf(to, n, "%s.%u", cap->cp_path, k);
			rename(from, to); /* a missing one is fine */
		}
	}
	free(from);
	free(to);
	if (capture_begin_file(cap)) {
		/* something is at the path again (planted after the rename):
		 * the capture stops, its frames count as write errors; no
		 * more rotations, which would push the kept files out */
		cap->cp_file_bytes = 0;
		atomic_fetch_add_explicit(&cap->cp_write_errors, 1, RELAXED);
	}
}

static void capture_write_rec(struct rpcrdma_capture *cap, const struct capture_rec *r)
{
	const struct rpcrdma_capture_config *c = &cap->cp_cfg;

	if (c->cc_max_bytes && cap->cp_file_bytes + r->cr_len > c->cc_max_bytes) {
		if (c->cc_max_files <= 1) {
			atomic_fetch_add_explicit(&cap->cp_drops, 1, RELAXED);
			return;
		}
		capture_rotate(cap);
	}
	if (!cap->cp_file || fwrite(r->cr_data, r->cr_len, 1, cap->cp_file) != 1) {
		atomic_fetch_add_explicit(&cap->cp_write_errors, 1, RELAXED);
		return;
	}
	cap->cp_file_bytes += r->cr_len;
	atomic_fetch_add_explicit(&cap->cp_frames, 1, RELAXED);
	atomic_fetch_add_explicit(&cap->cp_bytes, r->cr_len, RELAXED);
}

static void *capture_main(void *arg)
{
	struct rpcrdma_capture *cap = arg;

	for (;;) {
		struct capture_rec *r, *next;
		bool stop;

		pthread_mutex_lock(&cap->cp_lock);
		while (!cap->cp_head && !cap->cp_stop)
			pthread_cond_wait(&cap->cp_cond, &cap->cp_lock);
		r = cap->cp_head;
		cap->cp_head = cap->cp_tail = NULL;
		cap->cp_queued = 0;
		stop = cap->cp_stop;
		pthread_mutex_unlock(&cap->cp_lock);
		for (; r; r = next) {
			next = r->cr_next;
			capture_write_rec(cap, r);
			free(r);
		}
		if (cap->cp_file && fflush(cap->cp_file))
			atomic_fetch_add_explicit(&cap->cp_write_errors, 1, RELAXED);
		if (stop)
			break;
	}
	return NULL;
}

int rpcrdma_capture_open(const struct rpcrdma_capture_config *cfg,
			 struct rpcrdma_capture **out)
{
	struct rpcrdma_capture *cap;
	int rc;

	if (!cfg->cc_path || !*cfg->cc_path ||
	    (cfg->cc_max_bytes && cfg->cc_max_bytes < 65536) || cfg->cc_max_files > 1000)
		return -EINVAL;
	cap = calloc(1, sizeof(*cap));
	if (!cap)
		return -ENOMEM;
	cap->cp_cfg = *cfg;
	if (!cap->cp_cfg.cc_max_bytes)
		cap->cp_cfg.cc_max_bytes = RPCRDMA_CAPTURE_DEFAULT_MAX_BYTES;
	if (cap->cp_cfg.cc_max_bytes == RPCRDMA_CAPTURE_UNLIMITED)
		cap->cp_cfg.cc_max_bytes = 0; /* 0 below: no limit */
	if (!cap->cp_cfg.cc_max_files)
		cap->cp_cfg.cc_max_files = RPCRDMA_CAPTURE_DEFAULT_FILES;
	if (!cap->cp_cfg.cc_queue_bytes)
		cap->cp_cfg.cc_queue_bytes = 16u << 20;
	cap->cp_path = strdup(cfg->cc_path);
	if (!cap->cp_path) {
		free(cap);
		return -ENOMEM;
	}
	cap->cp_cfg.cc_path = cap->cp_path;
	rc = capture_begin_file(cap);
	if (rc)
		goto err;
	pthread_mutex_init(&cap->cp_lock, NULL);
	pthread_cond_init(&cap->cp_cond, NULL);
	rc = -pthread_create(&cap->cp_thread, NULL, capture_main, cap);
	if (rc) {
		pthread_mutex_destroy(&cap->cp_lock);
		pthread_cond_destroy(&cap->cp_cond);
		fclose(cap->cp_file);
		goto err;
	}
	*out = cap;
	return 0;
err:
	free(cap->cp_path);
	free(cap);
	return rc;
}

void rpcrdma_capture_get_stats(struct rpcrdma_capture *cap, struct rpcrdma_capture_stats *st)
{
	st->cs_frames = atomic_load_explicit(&cap->cp_frames, RELAXED);
	st->cs_bytes = atomic_load_explicit(&cap->cp_bytes, RELAXED);
	st->cs_drops = atomic_load_explicit(&cap->cp_drops, RELAXED);
	st->cs_files = atomic_load_explicit(&cap->cp_files, RELAXED);
	st->cs_write_errors = atomic_load_explicit(&cap->cp_write_errors, RELAXED);
}

void rpcrdma_capture_close(struct rpcrdma_capture *cap, struct rpcrdma_capture_stats *final)
{
	if (!cap)
		return;
	pthread_mutex_lock(&cap->cp_lock);
	cap->cp_stop = true;
	pthread_cond_signal(&cap->cp_cond);
	pthread_mutex_unlock(&cap->cp_lock);
	pthread_join(cap->cp_thread, NULL);
	if (cap->cp_file && fclose(cap->cp_file))
		atomic_fetch_add_explicit(&cap->cp_write_errors, 1, RELAXED);
	if (final)
		rpcrdma_capture_get_stats(cap, final);
	pthread_mutex_destroy(&cap->cp_lock);
	pthread_cond_destroy(&cap->cp_cond);
	free(cap->cp_path);
	free(cap);
}

/* Build one frame of @h around @len bytes of @iov and queue it. */
static void capture_emit(struct rpcrdma_capture *cap, const struct capture_hdr *h,
			 const struct iovec *iov, unsigned niov, size_t len)
{
	size_t cap_bytes = CAPTURE_PCAP_REC_HDR + CAPTURE_MAX_HDR + len, n;
	struct capture_rec *r = malloc(sizeof(*r) + cap_bytes);
	struct timespec ts;
	bool wake;

	if (!r) {
		atomic_fetch_add_explicit(&cap->cp_drops, 1, RELAXED);
		return;
	}
	n = capture_frame_build(r->cr_data + CAPTURE_PCAP_REC_HDR, cap_bytes - CAPTURE_PCAP_REC_HDR,
				h, iov, niov, len);
	if (!n) {
		free(r);
		atomic_fetch_add_explicit(&cap->cp_drops, 1, RELAXED);
		return;
	}
	clock_gettime(CLOCK_REALTIME, &ts);
	capture_pcap_record_header(r->cr_data, (uint32_t)ts.tv_sec, (uint32_t)ts.tv_nsec,
				   (uint32_t)n);
	r->cr_len = (uint32_t)(CAPTURE_PCAP_REC_HDR + n);
	r->cr_next = NULL;
	pthread_mutex_lock(&cap->cp_lock);
	if (cap->cp_stop || cap->cp_queued + r->cr_len > cap->cp_cfg.cc_queue_bytes) {
		pthread_mutex_unlock(&cap->cp_lock);
		free(r);
		atomic_fetch_add_explicit(&cap->cp_drops, 1, RELAXED);
		return;
	}
	wake = !cap->cp_head;
	if (cap->cp_tail)
		cap->cp_tail->cr_next = r;
	else
		cap->cp_head = r;
	cap->cp_tail = r;
	cap->cp_queued += r->cr_len;
	if (wake)
		pthread_cond_signal(&cap->cp_cond);
	pthread_mutex_unlock(&cap->cp_lock);
}

static void capture_dir(struct capture_hdr *h, const struct capture_ep *ep, bool out)
{
	h->ch_src = out ? &ep->ce_local : &ep->ce_peer;
	h->ch_dst = out ? &ep->ce_peer : &ep->ce_local;
	h->ch_src_qp = out ? ep->ce_local_qp : ep->ce_peer_qp;
	h->ch_dst_qp = out ? ep->ce_peer_qp : ep->ce_local_qp;
}

static uint32_t capture_next_psn(struct capture_ep *ep, bool out)
{
	uint32_t *psn = out ? &ep->ce_psn_out : &ep->ce_psn_in;
	uint32_t v = *psn;

	*psn = (v + 1) & 0xffffffu;
	return v;
}

/* Skip @off bytes of @iov into @tmp (at most @max pieces). */
static unsigned capture_iov_skip(const struct iovec *iov, unsigned niov, size_t off,
				 struct iovec *tmp, unsigned max)
{
	unsigned i, n = 0;

	for (i = 0; i < niov && n < max; i++) {
		if (off >= iov[i].iov_len) {
			off -= iov[i].iov_len;
			continue;
		}
		tmp[n].iov_base = (uint8_t *)iov[i].iov_base + off;
		tmp[n].iov_len = iov[i].iov_len - off;
		off = 0;
		n++;
	}
	return n;
}

void capture_send(struct rpcrdma_capture *cap, struct capture_ep *ep, bool out,
		  const struct iovec *iov, unsigned niov, size_t len, bool inval,
		  uint32_t inv_rkey)
{
	struct capture_hdr h = { 0 };
	struct iovec tmp[16];
	size_t off = 0;

	capture_dir(&h, ep, out);
	do {
		size_t n = len - off < CAPTURE_MTU ? len - off : CAPTURE_MTU;
		bool first = off == 0, last = off + n == len;
		unsigned nt = capture_iov_skip(iov, niov, off, tmp, 16);

		h.ch_opcode = first && last ? CAPTURE_OP_SEND_ONLY :
			      first ? CAPTURE_OP_SEND_FIRST :
			      last ? CAPTURE_OP_SEND_LAST : CAPTURE_OP_SEND_MIDDLE;
		h.ch_ieth = false;
		if (last && inval) {
			h.ch_opcode = first ? CAPTURE_OP_SEND_ONLY_INV : CAPTURE_OP_SEND_LAST_INV;
			h.ch_ieth = true;
			h.ch_inv_rkey = inv_rkey;
		}
		h.ch_psn = capture_next_psn(ep, out);
		capture_emit(cap, &h, tmp, nt, n);
		off += n;
	} while (off < len);
}

static uint16_t capture_port(const struct sockaddr_storage *ss)
{
	return ntohs(ss->ss_family == AF_INET6 ? ((const struct sockaddr_in6 *)ss)->sin6_port
					       : ((const struct sockaddr_in *)ss)->sin_port);
}

void capture_tcp(struct rpcrdma_capture *cap, struct capture_ep *ep, bool out,
		 const struct iovec *iov, unsigned niov, size_t len)
{
	struct capture_hdr h = { 0 };
	struct iovec tmp[16];
	size_t off = 0;

	capture_dir(&h, ep, out);
	h.ch_tcp = true;
	h.ch_sport = capture_port(h.ch_src);
	h.ch_dport = capture_port(h.ch_dst);
	while (off < len) {
		size_t n = len - off < CAPTURE_TCP_SEG ? len - off : CAPTURE_TCP_SEG;
		unsigned nt = capture_iov_skip(iov, niov, off, tmp, 16);
		uint32_t *seq = out ? &ep->ce_seq_out : &ep->ce_seq_in;

		h.ch_seq = *seq;
		h.ch_ack = out ? ep->ce_seq_in : ep->ce_seq_out;
		*seq += (uint32_t)n;
		capture_emit(cap, &h, tmp, nt, n);
		off += n;
	}
}

void capture_rdma_write(struct rpcrdma_capture *cap, struct capture_ep *ep, bool out,
			uint32_t rkey, uint64_t va, uint32_t len,
			const struct iovec *iov, unsigned niov)
{
	struct capture_hdr h = { 0 };
	uint32_t n = len < cap->cp_cfg.cc_data_bytes ? len : cap->cp_cfg.cc_data_bytes;

	if (!cap->cp_cfg.cc_data_bytes)
		return;
	capture_dir(&h, ep, out);
	h.ch_opcode = CAPTURE_OP_RDMA_WRITE_ONLY;
	h.ch_psn = capture_next_psn(ep, out);
	h.ch_reth = true;
	h.ch_va = va;
	h.ch_rkey = rkey;
	h.ch_dma_len = len;
	capture_emit(cap, &h, iov, niov, n);
}

void capture_rdma_read(struct rpcrdma_capture *cap, struct capture_ep *ep, bool out,
		       uint32_t rkey, uint64_t va, uint32_t len,
		       const struct iovec *iov, unsigned niov)
{
	struct capture_hdr h = { 0 };
	uint32_t n = len < cap->cp_cfg.cc_data_bytes ? len : cap->cp_cfg.cc_data_bytes;
	uint32_t psn;

	if (!cap->cp_cfg.cc_data_bytes)
		return;
	capture_dir(&h, ep, out);
	h.ch_opcode = CAPTURE_OP_RDMA_READ_REQUEST;
	psn = capture_next_psn(ep, out);
	h.ch_psn = psn;
	h.ch_reth = true;
	h.ch_va = va;
	h.ch_rkey = rkey;
	h.ch_dma_len = len;
	capture_emit(cap, &h, NULL, 0, 0);

	memset(&h, 0, sizeof(h));
	capture_dir(&h, ep, !out);
	h.ch_opcode = CAPTURE_OP_RDMA_READ_RESPONSE_ONLY;
	h.ch_psn = psn;
	h.ch_aeth = true;
	h.ch_msn = 0;
	capture_emit(cap, &h, iov, niov, n);
}
