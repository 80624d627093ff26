// SPDX-License-Identifier: MIT
/*
 * verbs_provider.c - load only the verbs providers this host's RDMA
 * devices need, before libibverbs lists the devices for the first time.
 *
 * The first device listing (ibv_get_device_list(), also run by
 * librdmacm's first rdma_create_event_channel()) matches every device
 * under /sys/class/infiniband against the providers registered so far;
 * only when a device is left unmatched does it dlopen every provider its
 * configuration names (seventeen in Debian 12's rdma-core, about 0.06 s
 * of a short rpcrdma-nfs run under the test VM's emulated CPU).  A
 * provider registers itself when it is loaded, so loading the right one
 * first spares the others; a wrong guess costs one dlopen and libibverbs
 * then loads every provider as before.
 */
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "verbs/verbs.h"

/* Kernel drivers whose provider has another name. */
static const struct {
	const char *kp_kernel;
	const char *kp_provider;
} kernel_provider[] = {
	{ "mlx5_core", "mlx5" }, { "mlx5_ib", "mlx5" },   { "mlx4_core", "mlx4" },
	{ "mlx4_ib", "mlx4" },   { "bnxt_en", "bnxt_re" }, { "hns_roce_hw_v2", "hns" },
	{ "hns3", "hns" },       { "qede", "qedr" },       { "hfi1", "hfi1verbs" },
	{ "ib_qib", "ipathverbs" }, { "ib_mthca", "mthca" }, { "mana_ib", "mana" },
	{ "rdma_rxe", "rxe" },
};

bool verbs_provider_of_device(const char *ibdev, char *out, size_t cap)
{
	size_t n = strlen(ibdev);

	/* rxe0 -> rxe, mlx5_0 -> mlx5, bnxt_re1 -> bnxt_re */
	while (n && isdigit((unsigned char)ibdev[n - 1]))
		n--;
	if (n && n < strlen(ibdev) && ibdev[n - 1] == '_')
		n--;
	if (!n || n >= cap)
		return false;
	memcpy(out, ibdev, n);
	out[n] = '\0';
	return true;
}

bool verbs_provider_of_driver(const char *kdriver, char *out, size_t cap)
{
	size_t i, n = strcspn(kdriver, "."); /* mlx5_ib.rdma -> mlx5_ib */

	for (i = 0; i < sizeof(kernel_provider) / sizeof(kernel_provider[0]); i++) {
		if (strlen(kernel_provider[i].kp_kernel) == n &&
		    !strncmp(kdriver, kernel_provider[i].kp_kernel, n)) {
			kdriver = kernel_provider[i].kp_provider;
			n = strlen(kdriver);
			break;
		}
	}
	if (!n || n >= cap)
		return false;
	memcpy(out, kdriver, n);
	out[n] = '\0';
	return true;
}

bool verbs_provider_file(const char *dir, const char *name, char *out, size_t cap)
{
	char prefix[NAME_MAX + 1];
	struct dirent *de;
	bool found = false;
	size_t plen;
	DIR *d;

	if (snprintf(prefix, sizeof(prefix), "lib%s-rdmav", name) >= (int)sizeof(prefix))
		return false;
	plen = strlen(prefix);
	d = opendir(dir);
	if (!d)
		return false;
	while (!found && (de = readdir(d))) {
		const char *v = de->d_name + plen;
		size_t vlen;

		/* lib<name>-rdmav<digits>.so, and nothing else */
		if (strncmp(de->d_name, prefix, plen))
			continue;
		vlen = strspn(v, "0123456789");
		if (!vlen || strcmp(v + vlen, ".so"))
			continue;
		found = snprintf(out, cap, "%s/%s", dir, de->d_name) < (int)cap;
	}
	closedir(d);
	return found;
}

/* Load @name's provider from @dir unless loaded already (@done, @ndone). */
static unsigned provider_load(const char *dir, const char *name, char done[][NAME_MAX + 1],
			      unsigned *ndone, unsigned max_done,
			      int (*load)(const char *path, void *arg), void *arg)
{
	char path[PATH_MAX];
	unsigned i;

	for (i = 0; i < *ndone; i++)
		if (!strcmp(done[i], name))
			return 0;
	if (*ndone >= max_done || !verbs_provider_file(dir, name, path, sizeof(path)))
		return 0;
	snprintf(done[(*ndone)++], NAME_MAX + 1, "%s", name);
	return load(path, arg) == 0;
}

unsigned verbs_provider_scan(const char *sysfs_dir, const char *prov_dir,
			     int (*load)(const char *path, void *arg), void *arg)
{
	char done[8][NAME_MAX + 1], name[NAME_MAX + 1], link[PATH_MAX], target[PATH_MAX];
	unsigned ndone = 0, loaded = 0;
	struct dirent *de;
	ssize_t len;
	DIR *d;

	d = opendir(sysfs_dir);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		/* the kernel driver of the device under it, when it has one */
		if (snprintf(link, sizeof(link), "%s/%s/device/driver", sysfs_dir, de->d_name) <
			    (int)sizeof(link) &&
		    (len = readlink(link, target, sizeof(target) - 1)) > 0) {
			target[len] = '\0';
			if (verbs_provider_of_driver(strrchr(target, '/') ? strrchr(target, '/') + 1 :
									     target,
						     name, sizeof(name)))
				loaded += provider_load(prov_dir, name, done, &ndone, 8, load, arg);
		}
		if (verbs_provider_of_device(de->d_name, name, sizeof(name)))
			loaded += provider_load(prov_dir, name, done, &ndone, 8, load, arg);
	}
	closedir(d);
	return loaded;
}

static int provider_dlopen(const char *path, void *arg)
{
	(void)arg;
	/* As libibverbs loads it; kept loaded for the process's life. */
	return dlopen(path, RTLD_NOW) ? 0 : -1;
}

/* dl_iterate_phdr callback: the directory libibverbs was loaded from. */
static int find_ibverbs(struct dl_phdr_info *info, size_t size, void *arg)
{
	const char *name = info->dlpi_name, *slash = name ? strrchr(name, '/') : NULL;
	char *dir = arg;

	(void)size;
	if (!slash || strncmp(slash + 1, "libibverbs.so", 13))
		return 0;
	return snprintf(dir, PATH_MAX, "%.*s/libibverbs", (int)(slash - name), name) <
		       PATH_MAX ? 1 : 0;
}

static void preload_once(void)
{
	char dir[PATH_MAX];

	if (getenv("RPCRDMA_ALL_PROVIDERS"))
		return;
	/* The providers live in "libibverbs/" next to libibverbs itself. */
	if (dl_iterate_phdr(find_ibverbs, dir) != 1)
		return;
	verbs_provider_scan("/sys/class/infiniband", dir, provider_dlopen, NULL);
}

void rpcrdma_verbs_preload_providers(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, preload_once);
}
