// SPDX-License-Identifier: MIT
/*
 * nfsd_exports.c - rpcrdma-nfsd's exports: the exports file, or the table
 * --export DIR stands for (the --allow networks, by default loopback and
 * the listen address's subnets), at start; the file read again on SIGHUP
 * by a thread of its own (nfsd_exports.h).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <limits.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "notify/nfsd_notify.h"
#include "nfsd_exports.h"

#define PROG NFSD_PROG
#define MAX_NETS 64

struct allow_net {
	struct sockaddr_storage an_net;
	unsigned an_prefix;
};

struct allow_list {
	struct allow_net al_nets[MAX_NETS];
	unsigned al_n;
};

static int add_net(struct allow_list *al, const char *cidr)
{
	if (al->al_n == MAX_NETS)
		return -ENOSPC;
	if (rpcrdma_nfs3_cidr_parse(cidr, &al->al_nets[al->al_n].an_net,
				    &al->al_nets[al->al_n].an_prefix))
		return -EINVAL;
	al->al_n++;
	return 0;
}

static unsigned mask_bits(const struct sockaddr *mask)
{
	const uint8_t *p;
	unsigned n, bits = 0;

	if (mask->sa_family == AF_INET) {
		p = (const uint8_t *)&((const struct sockaddr_in *)mask)->sin_addr;
		n = 4;
	} else {
		p = ((const struct sockaddr_in6 *)mask)->sin6_addr.s6_addr;
		n = 16;
	}
	for (unsigned i = 0; i < n; i++)
		bits += (unsigned)__builtin_popcount(p[i]);
	return bits;
}

static bool same_addr(const struct sockaddr *a, const struct sockaddr_storage *b)
{
	if (a->sa_family != b->ss_family)
		return false;
	if (a->sa_family == AF_INET)
		return !memcmp(&((const struct sockaddr_in *)a)->sin_addr,
			       &((const struct sockaddr_in *)b)->sin_addr, 4);
	return !memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr,
		       &((const struct sockaddr_in6 *)b)->sin6_addr, 16);
}

/*
 * The default rule: loopback, plus the subnet of the listen address (of
 * every local interface address when listening on any address).
 */
static int default_allow(struct allow_list *al, const char *listen_addr)
{
	struct sockaddr_storage want;
	unsigned unused;
	struct ifaddrs *ifs, *i;

	add_net(al, "127.0.0.0/8");
	add_net(al, "::1/128");
	if (listen_addr && rpcrdma_nfs3_cidr_parse(listen_addr, &want, &unused))
		return -EINVAL;
	if (getifaddrs(&ifs) < 0)
		return 0; /* loopback only */
	for (i = ifs; i && al->al_n < MAX_NETS; i = i->ifa_next) {
		struct allow_net *n;

		if (!i->ifa_addr || !i->ifa_netmask ||
		    (i->ifa_addr->sa_family != AF_INET &&
		     i->ifa_addr->sa_family != AF_INET6) ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		if (listen_addr && !same_addr(i->ifa_addr, &want))
			continue;
		n = &al->al_nets[al->al_n++];
		memset(&n->an_net, 0, sizeof(n->an_net));
		memcpy(&n->an_net, i->ifa_addr, i->ifa_addr->sa_family == AF_INET ?
		       sizeof(struct sockaddr_in) : sizeof(struct sockaddr_in6));
		n->an_prefix = mask_bits(i->ifa_netmask);
	}
	freeifaddrs(ifs);
	return 0;
}

/* net_text - @n's address as text into @buf (INET6_ADDRSTRLEN bytes). */
static void net_text(const struct allow_net *n, char *buf)
{
	const struct sockaddr_storage *s = &n->an_net;
	const void *a = s->ss_family == AF_INET ?
		(const void *)&((const struct sockaddr_in *)s)->sin_addr :
		(const void *)&((const struct sockaddr_in6 *)s)->sin6_addr;

	inet_ntop(s->ss_family, a, buf, INET6_ADDRSTRLEN);
}

static void print_allow(const struct allow_list *al, FILE *f)
{
	char buf[INET6_ADDRSTRLEN];

	for (unsigned i = 0; i < al->al_n; i++) {
		net_text(&al->al_nets[i], buf);
		fprintf(f, PROG ": allowing %s/%u\n", buf, al->al_nets[i].an_prefix);
	}
}

/*
 * shorthand_exports - the exports text --export DIR stands for: DIR
 * (octal-escaped where not plain) to every --allow network, read-write,
 * from any port, with fsid=0 (the id handles had before exports files),
 * served by @backend (NULL: the default).
 */
static char *shorthand_exports(const char *dir, const struct allow_list *al,
			       bool no_squash, bool async, const char *backend)
{
	size_t cap = strlen(dir) * 4 + 1 +
		     al->al_n * (INET6_ADDRSTRLEN + 64 + (backend ? strlen(backend) + 9 : 0)) + 1;
	char *t = malloc(cap), *w = t, buf[INET6_ADDRSTRLEN];

	if (!t)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)dir; *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		    (*p >= '0' && *p <= '9') || strchr("/._-+,:@%=", *p))
			*w++ = (char)*p;
		else
			w += sprintf(w, "\\%03o", *p);
	}
	for (unsigned i = 0; i < al->al_n; i++) {
		net_text(&al->al_nets[i], buf);
		w += sprintf(w, " %s/%u(rw,insecure,fsid=0,%s,%s%s%s)", buf,
			     al->al_nets[i].an_prefix,
			     no_squash ? "no_root_squash" : "root_squash",
			     async ? "async" : "sync", backend ? ",backend=" : "",
			     backend ? backend : "");
	}
	*w = '\0';
	return t;
}

/* the exports file's warnings and errors at start and on SIGHUP, on
 * stderr; errors counted in *(unsigned *)@arg when not NULL */
static void start_note(void *arg, bool error, const char *msg)
{
	if (arg && error)
		(*(unsigned *)arg)++; /* the errors told */
	fprintf(stderr, PROG ": %s\n", msg);
}

static const struct rpcrdma_nfs3_exports_notes start_notes = {
	.xn_note = start_note, .xn_keep_going = true,
};

/* exports_from_file - the exports file @file into *@xt (nfsd_exports_load()). */
static int exports_from_file(const struct nfsd_conf *cf, const char *file,
			     struct rpcrdma_nfs3_exports **xt)
{
	struct rpcrdma_nfs3_exports_notes notes = start_notes;
	unsigned told = 0;
	char msg[512];
	int err;

	notes.xn_arg = &told;
	err = rpcrdma_nfs3_exports_load_notes(file, &notes, xt, msg, sizeof(msg));
	if (err) {
		/* the lines' errors are told; the file's are not */
		if (!told)
			fprintf(stderr, PROG ": --exports: %s%s\n", msg,
				err == -ENOENT && !nfsd_is_set(cf, NFSD_EXPORTS) ?
				" (the default exports file: write it, see exports(5) "
				"and rpcrdma-nfsd(8), or give --export DIR)" : "");
		return err == -EINVAL || err == -E2BIG || err == -ENOENT ? 2 : 1;
	}
	if (!rpcrdma_nfs3_exports_count(*xt))
		fprintf(stderr, PROG ": warning: %s has no exports\n", file);
	return 0;
}

/* export_dir - --export's directory @arg into @path (@cap bytes): an
 * absolute name for a backend other than posix, else a directory of this
 * machine, resolved.  Return: 0, or the exit status after the message. */
static int export_dir(const char *arg, const char *backend, char *path, size_t cap)
{
	char real[PATH_MAX];
	struct stat st;

	if (backend && strcmp(backend, "posix") && strncmp(backend, "posix:", 6)) {
		/* a name, not a directory of this machine */
		if (arg[0] != '/' || strlen(arg) >= cap) {
			fprintf(stderr, PROG ": --export %s: --backend %s needs an absolute path\n",
				arg, backend);
			return 2;
		}
		strcpy(path, arg);
		return 0;
	}
	if (!realpath(arg, real) || stat(real, &st) < 0) {
		fprintf(stderr, PROG ": export directory %s: %s\n", arg, strerror(errno));
		return 1;
	}
	if (!S_ISDIR(st.st_mode)) {
		fprintf(stderr, PROG ": export %s: not a directory\n", arg);
		return 1;
	}
	snprintf(path, cap, "%s", real);
	return 0;
}

/* exports_from_dir - the table --export stands for into *@xt
 * (nfsd_exports_load()). */
static int exports_from_dir(const struct nfsd_conf *cf, struct rpcrdma_nfs3_exports **xt,
			    char *path, size_t cap)
{
	static struct allow_list allow;
	const char *listen_addr = nfsd_s(cf, NFSD_LISTEN), *backend = nfsd_s(cf, NFSD_BACKEND);
	char *text, msg[512];
	int err;

	err = export_dir(nfsd_s(cf, NFSD_EXPORT), backend, path, cap);
	if (err)
		return err;
	allow.al_n = 0;
	for (unsigned i = 0; i < cf->nc_v[NFSD_ALLOW].nv_n; i++)
		add_net(&allow, cf->nc_v[NFSD_ALLOW].nv_list[i]); /* checked: ok */
	if (!allow.al_n && default_allow(&allow, listen_addr) < 0) {
		fprintf(stderr, PROG ": --listen: bad address %s\n", listen_addr);
		return 2;
	}
	if (nfsd_u(cf, NFSD_VERBOSE, 0))
		print_allow(&allow, stderr);
	text = shorthand_exports(path, &allow, nfsd_flag(cf, NFSD_NO_ROOT_SQUASH),
				 nfsd_flag(cf, NFSD_ASYNC), backend);
	err = text ? rpcrdma_nfs3_exports_parse("--export", text, xt, msg, sizeof(msg)) :
		     -ENOMEM;
	free(text);
	if (err) {
		fprintf(stderr, PROG ": --export %s: %s\n", path,
			err == -ENOMEM ? "out of memory" : msg);
		return 1;
	}
	return 0;
}

int nfsd_exports_load(const struct nfsd_conf *cf, const char *file,
		      struct rpcrdma_nfs3_exports **xt, char *path, size_t cap)
{
	return file ? exports_from_file(cf, file, xt) : exports_from_dir(cf, xt, path, cap);
}

static void *reload_thread(void *arg)
{
	struct nfsd_reloader *rl = arg;
	sigset_t set;
	int sig;

	sigemptyset(&set);
	sigaddset(&set, SIGHUP);
	while (sigwait(&set, &sig) == 0 && !atomic_load(&rl->rl_stop)) {
		struct rpcrdma_nfs3_exports *xt = NULL;
		char msg[512];
		int err;

		nfsd_notify_reloading();
		err = rpcrdma_nfs3_exports_load_notes(rl->rl_file, &start_notes, &xt, msg,
						      sizeof(msg));
		if (!err)
			err = rpcrdma_nfs3_server_reload(rl->rl_srv, xt, msg, sizeof(msg));
		if (err)
			fprintf(stderr, PROG ": SIGHUP: %s; the exports in force stay\n", msg);
		else
			fprintf(stderr, PROG ": SIGHUP: %s reloaded, %u exports\n",
				rl->rl_file, rpcrdma_nfs3_exports_count(xt));
		rpcrdma_nfs3_exports_free(xt);
		nfsd_notify_ready(NULL);
	}
	return NULL;
}

int nfsd_reloader_start(struct nfsd_reloader *rl, struct rpcrdma_nfs3_server *srv,
			const char *file)
{
	int err;

	rl->rl_srv = srv;
	rl->rl_file = file;
	atomic_store(&rl->rl_stop, false);
	err = pthread_create(&rl->rl_thread, NULL, reload_thread, rl);
	if (err) {
		fprintf(stderr, PROG ": reload thread: %s\n", strerror(err));
		return 1;
	}
	rl->rl_running = true;
	return 0;
}

void nfsd_reloader_stop(struct nfsd_reloader *rl)
{
	if (!rl->rl_running)
		return;
	atomic_store(&rl->rl_stop, true);
	pthread_kill(rl->rl_thread, SIGHUP);
	pthread_join(rl->rl_thread, NULL);
	rl->rl_running = false;
}
