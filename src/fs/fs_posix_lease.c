// SPDX-License-Identifier: MIT
/*
 * fs_posix_lease.c - the posix backend's leases (be_lease_open,
 * be_lease_close; fs_backend.h): a read lease (fcntl F_SETLEASE F_RDLCK,
 * fcntl(2)) on a read-only description of the file of its own, whose
 * break the kernel tells with a signal.
 *
 * The kernel breaks a read lease when any other open file description
 * of the file is opened for writing or the file is truncated by path
 * (this server's own write opens included: they use O_NONBLOCK, so they
 * fail with EWOULDBLOCK, -EAGAIN, NFS3ERR_JUKEBOX or NFS4ERR_DELAY,
 * instead of waiting; fs_posix_file.c).  It does not break one for
 * rename(2) or unlink(2) (delegations of the kernel's own nfsd are
 * broken there, leases are not).  The opener then waits until the lease
 * is given back (be_lease_close) or /proc/sys/fs/lease-break-time
 * seconds passed (45 by default), after which the kernel takes it away.
 *
 * Signals.  Every lease description has F_SETSIG set to one real-time
 * signal, FS_POSIX_LEASE_SIG (SIGRTMIN + 7, 41 with glibc) unless the
 * environment's RPCRDMA_LEASE_SIGNAL names another number between
 * SIGRTMIN and SIGRTMAX when the first lease is taken, and F_SETOWN_EX
 * F_OWNER_TID pointing at one thread of this file's, started by the first
 * lease of the process and never stopped.  That thread blocks the signal
 * (and SIGIO, which the kernel sends instead when the real-time queue is
 * full) in itself only and takes them with sigwaitinfo(2): no handler is
 * installed and no other thread's signal mask changes, so a program the
 * library lives in keeps its own signals (it must not use that signal
 * number for itself).  si_fd names the description whose lease breaks;
 * a table from descriptor to struct fs_lease, under a mutex, finds the
 * holder.  A break is believed only when F_GETLEASE of the description
 * says it is being broken (F_UNLCK): a signal queued for a descriptor
 * closed since, whose number a new lease took, is dropped.
 *
 * Closing synchronises with a break in flight: the slot stays busy while
 * the thread calls ls_fn, and be_lease_close() waits for it, so ls_fn is
 * never called after be_lease_close() returned (a close from inside
 * ls_fn itself, which the contract forbids, does not wait: it would
 * never end).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fs.h"
#include "fs_backend.h"
#include "fs_posix.h"

/* The offset from SIGRTMIN of the default lease signal. */
#define FS_POSIX_LEASE_SIG_OFFSET 7

enum slot_state {
	SLOT_FREE = 0,
	SLOT_SETTING,  /* F_SETLEASE under way: a signal now is kept pending */
	SLOT_ARMED,
};

struct lease_slot {
	struct fs_lease *sl_ls;
	enum slot_state sl_state;
	bool sl_busy;      /* ls_fn being called */
	bool sl_pending;   /* a signal came while SETTING */
};

static struct {
	pthread_once_t lt_once;
	int lt_err;             /* the start's: 0 or a negative errno */
	int lt_sig;
	pid_t lt_tid;
	pthread_t lt_thread;
	pthread_mutex_t lt_lock;
	pthread_cond_t lt_cond; /* a slot is no longer busy; the thread's tid */
	struct lease_slot *lt_slots; /* by descriptor */
	size_t lt_nslots;
} g_lt = {
	.lt_once = PTHREAD_ONCE_INIT,
	.lt_lock = PTHREAD_MUTEX_INITIALIZER,
	.lt_cond = PTHREAD_COND_INITIALIZER,
};

/* lease_signal - the signal number in use (the environment's, or the
 * default). */
static int lease_signal(void)
{
	const char *s = getenv("RPCRDMA_LEASE_SIGNAL");
	char *end;
	long v;

	if (s && *s) {
		v = strtol(s, &end, 10);
		if (!*end && v >= SIGRTMIN && v <= SIGRTMAX)
			return (int)v;
	}
	return SIGRTMIN + FS_POSIX_LEASE_SIG_OFFSET;
}

/* breaking - is @fd's lease being broken (or gone)? */
static bool breaking(int fd)
{
	return fcntl(fd, F_GETLEASE) == F_UNLCK;
}

/* fire_locked - call the holder of armed slot @fd (lt_lock held; dropped
 * around the call). */
static void fire_locked(int fd)
{
	struct lease_slot *s = &g_lt.lt_slots[fd];
	struct fs_lease *ls = s->sl_ls;

	s->sl_busy = true;
	pthread_mutex_unlock(&g_lt.lt_lock);
	ls->ls_fn(ls->ls_arg, ls);
	pthread_mutex_lock(&g_lt.lt_lock);
	/* the slot array may have moved, the slot not: index again */
	g_lt.lt_slots[fd].sl_busy = false;
	pthread_cond_broadcast(&g_lt.lt_cond);
}

/* on_signal - the signal for description @fd (-1: SIGIO, every armed
 * slot is asked). */
static void on_signal(int fd)
{
	pthread_mutex_lock(&g_lt.lt_lock);
	if (fd >= 0) {
		if ((size_t)fd < g_lt.lt_nslots) {
			struct lease_slot *s = &g_lt.lt_slots[fd];

			if (s->sl_state == SLOT_SETTING)
				s->sl_pending = true;
			else if (s->sl_state == SLOT_ARMED && !s->sl_busy && breaking(fd))
				fire_locked(fd);
		}
	} else {
		for (size_t i = 0; i < g_lt.lt_nslots; i++) {
			struct lease_slot *s = &g_lt.lt_slots[i];

			if (s->sl_state == SLOT_ARMED && !s->sl_busy && breaking((int)i))
				fire_locked((int)i);
		}
	}
	pthread_mutex_unlock(&g_lt.lt_lock);
}

static void *lease_thread(void *arg)
{
	sigset_t set;
	siginfo_t si;
	int sig;

	(void)arg;
	sigemptyset(&set);
	sigaddset(&set, g_lt.lt_sig);
	sigaddset(&set, SIGIO);
	pthread_sigmask(SIG_BLOCK, &set, NULL);
	pthread_mutex_lock(&g_lt.lt_lock);
	g_lt.lt_tid = (pid_t)syscall(SYS_gettid);
	pthread_cond_broadcast(&g_lt.lt_cond);
	pthread_mutex_unlock(&g_lt.lt_lock);
	for (;;) {
		sig = sigwaitinfo(&set, &si);
		if (sig < 0)
			continue; /* EINTR */
		on_signal(sig == g_lt.lt_sig ? si.si_fd : -1);
	}
	return NULL;
}

static void lease_start(void)
{
	sigset_t all, old;
	int err;

	g_lt.lt_sig = lease_signal();
	/* the thread starts with every signal blocked; it unblocks none */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&g_lt.lt_thread, NULL, lease_thread, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err) {
		g_lt.lt_err = -err;
		return;
	}
	pthread_detach(g_lt.lt_thread);
	pthread_mutex_lock(&g_lt.lt_lock);
	while (!g_lt.lt_tid)
		pthread_cond_wait(&g_lt.lt_cond, &g_lt.lt_lock);
	pthread_mutex_unlock(&g_lt.lt_lock);
}

/* slot_reserve_locked - a free slot for @fd.  Return: 0; -ENOMEM. */
static int slot_reserve_locked(int fd)
{
	if ((size_t)fd >= g_lt.lt_nslots) {
		size_t n = g_lt.lt_nslots ? g_lt.lt_nslots : 64;
		struct lease_slot *p;

		while (n <= (size_t)fd)
			n *= 2;
		p = realloc(g_lt.lt_slots, n * sizeof(*p));
		if (!p)
			return -ENOMEM;
		memset(p + g_lt.lt_nslots, 0, (n - g_lt.lt_nslots) * sizeof(*p));
		g_lt.lt_slots = p;
		g_lt.lt_nslots = n;
	}
	return 0;
}

/* lease_errno - F_SETLEASE's errno as be_lease_open() answers it. */
static int lease_errno(int e)
{
	switch (e) {
	case EAGAIN:  /* open for writing somewhere */
	case EACCES:  /* neither the owner nor CAP_LEASE */
	case ENOMEM:
		return -e;
	case EINVAL:  /* leases-enable 0, or a file system without them */
	case ENOSYS:
	case EOPNOTSUPP:
		return -EOPNOTSUPP;
	default:
		return -e;
	}
}

int fs_posix_lease_open(struct fs_call *c, struct fs_fentry *fe,
			    struct fs_lease *ls)
{
	struct f_owner_ex ow;
	char path[32];
	struct lease_slot *s;
	int fd, err, again;

	pthread_once(&g_lt.lt_once, lease_start);
	if (g_lt.lt_err)
		return g_lt.lt_err;
	fs_cred_restore(); /* the server's identity (CAP_LEASE) */
	c->c_as_caller = false;
	fs_proc_path(path, sizeof(path), fe->fe_path);
	fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		return errno == EMFILE || errno == ENFILE ? -EMFILE :
		       errno == EWOULDBLOCK ? -EAGAIN : -errno;
	ow.type = F_OWNER_TID;
	ow.pid = g_lt.lt_tid;
	if (fcntl(fd, F_SETSIG, g_lt.lt_sig) < 0 || fcntl(fd, F_SETOWN_EX, &ow) < 0) {
		err = -errno;
		goto out_close;
	}
	pthread_mutex_lock(&g_lt.lt_lock);
	err = slot_reserve_locked(fd);
	if (!err) {
		s = &g_lt.lt_slots[fd];
		s->sl_ls = ls;
		s->sl_state = SLOT_SETTING;
		s->sl_busy = false;
		s->sl_pending = false;
	}
	pthread_mutex_unlock(&g_lt.lt_lock);
	if (err)
		goto out_close;
	ls->ls_be = &fs_posix_backend;
	ls->ls_fd = fd;
	err = fcntl(fd, F_SETLEASE, F_RDLCK) < 0 ? lease_errno(errno) : 0;
	pthread_mutex_lock(&g_lt.lt_lock);
	s = &g_lt.lt_slots[fd];
	again = !err && s->sl_pending;
	if (err) {
		memset(s, 0, sizeof(*s));
	} else {
		s->sl_state = SLOT_ARMED;
		s->sl_pending = false;
	}
	pthread_mutex_unlock(&g_lt.lt_lock);
	if (err) {
		ls->ls_fd = -1;
		goto out_close;
	}
	/* a signal came while the lease was being set: a stale one of an
	 * earlier holder of the descriptor's number, or this lease's break:
	 * the thread asks every lease (on the thread, not in this call) */
	if (again && breaking(fd))
		(void)syscall(SYS_tgkill, getpid(), g_lt.lt_tid, SIGIO);
	return 0;

out_close:
	close(fd);
	return err;
}

void fs_posix_lease_close(struct fs_lease *ls)
{
	int fd = ls->ls_fd;
	bool self;

	if (fd < 0)
		return;
	self = pthread_equal(pthread_self(), g_lt.lt_thread);
	pthread_mutex_lock(&g_lt.lt_lock);
	if ((size_t)fd < g_lt.lt_nslots && g_lt.lt_slots[fd].sl_ls == ls) {
		while (g_lt.lt_slots[fd].sl_busy && !self)
			pthread_cond_wait(&g_lt.lt_cond, &g_lt.lt_lock);
		memset(&g_lt.lt_slots[fd], 0, sizeof(g_lt.lt_slots[fd]));
	}
	pthread_mutex_unlock(&g_lt.lt_lock);
	close(fd); /* gives the lease back: a waiting opener goes on */
	ls->ls_fd = -1;
}

int fs_posix_lease_signal(void)
{
	pthread_once(&g_lt.lt_once, lease_start);
	return g_lt.lt_sig;
}

