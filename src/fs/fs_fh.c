// SPDX-License-Identifier: MIT
/*
 * fs_fh.c - the file handles of NFSv3, NFSv4.1 and NLM (RFC 1813 2.4),
 * built on the backend's keys (be_fh_key; the posix backend's are kernel
 * file handles), and authenticated with a keyed MAC.
 *
 * Layout (16 + n bytes, at most 64):
 *   0      version (1)
 *   1      n: key bytes (at most 48)
 *   2..3   the export's id, big-endian (fsid=; 0 for --export)
 *   4..7   key type, big-endian (posix: the kernel handle type)
 *   8..    n bytes of key (posix: the kernel handle, name_to_handle_at(2))
 *   8+n..  SipHash-2-4 under the export key of bytes 0 .. 8+n-1 (LE)
 *
 * The server only ever computes the MAC for objects it reached from the
 * export root without following symlinks, so a client cannot forge a
 * handle for any other object.  See docs/nfs3.md for the argument.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/be.h"
#include "fs.h"
#include "fs_backend.h"

static inline uint64_t rotl64(uint64_t x, unsigned b)
{
	return (x << b) | (x >> (64 - b));
}

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = (v << 8) | p[i];
	return v;
}

struct sip_state {
	uint64_t v0, v1, v2, v3;
};

/* Inlined: with the state in registers a handle's MAC is about half the
 * instructions of calls that go through memory (it is computed for every
 * handle a LOOKUP, CREATE or REMOVE makes). */
static inline __attribute__((always_inline)) void sip_round(struct sip_state *s)
{
	s->v0 += s->v1;
	s->v1 = rotl64(s->v1, 13) ^ s->v0;
	s->v0 = rotl64(s->v0, 32);
	s->v2 += s->v3;
	s->v3 = rotl64(s->v3, 16) ^ s->v2;
	s->v0 += s->v3;
	s->v3 = rotl64(s->v3, 21) ^ s->v0;
	s->v2 += s->v1;
	s->v1 = rotl64(s->v1, 17) ^ s->v2;
	s->v2 = rotl64(s->v2, 32);
}

static inline __attribute__((always_inline)) void sip_block(struct sip_state *s,
							     uint64_t m)
{
	s->v3 ^= m;
	sip_round(s);
	sip_round(s);
	s->v0 ^= m;
}

uint64_t fs_siphash(const uint8_t key[16], const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
	struct sip_state s = {
		.v0 = k0 ^ 0x736f6d6570736575ull,
		.v1 = k1 ^ 0x646f72616e646f6dull,
		.v2 = k0 ^ 0x6c7967656e657261ull,
		.v3 = k1 ^ 0x7465646279746573ull,
	};
	size_t full = len & ~(size_t)7;
	uint64_t last = (uint64_t)(len & 0xff) << 56;

	for (size_t i = 0; i < full; i += 8)
		sip_block(&s, load_le64(p + i));
	for (size_t i = full; i < len; i++)
		last |= (uint64_t)p[i] << (8 * (i - full));
	sip_block(&s, last);
	s.v2 ^= 0xff;
	for (int i = 0; i < 4; i++)
		sip_round(&s);
	return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

static void store_le64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

int fs_fh_encode(const struct rpcrdma_nfs3_export *exp, uint32_t type,
		 const uint8_t *key, uint32_t keylen, uint8_t *fh,
		 uint32_t *lenp)
{
	if (keylen > FS_FH_KERNEL_MAX)
		return -EOVERFLOW;
	fh[0] = FS_FH_VERSION;
	fh[1] = (uint8_t)keylen;
	fh[2] = (uint8_t)(exp->ex_id >> 8);
	fh[3] = (uint8_t)exp->ex_id;
	store_be32(fh + 4, type);
	memcpy(fh + 8, key, keylen);
	store_le64(fh + 8 + keylen, fs_siphash(exp->ex_key, fh, 8 + keylen));
	*lenp = FS_FH_OVERHEAD + keylen;
	return 0;
}

int fs_fh_check(const struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		uint32_t len, uint32_t *type, const uint8_t **key,
		uint32_t *keylen)
{
	uint8_t mac[8];
	uint8_t diff = 0;
	uint32_t n;

	if (len < FS_FH_OVERHEAD || len > RPCRDMA_NFS3_FHSIZE ||
	    fh[0] != FS_FH_VERSION)
		return -EBADMSG;
	n = fh[1];
	if (n != len - FS_FH_OVERHEAD)
		return -EBADMSG;
	store_le64(mac, fs_siphash(exp->ex_key, fh, 8 + n));
	for (int i = 0; i < 8; i++) /* constant time */
		diff |= mac[i] ^ fh[8 + n + i];
	if (diff)
		return -EBADMSG;
	/* genuine, but of another export (RENAME, LINK across exports) */
	if (((uint32_t)fh[2] << 8 | fh[3]) != exp->ex_id)
		return -EXDEV;
	*type = load_be32(fh + 4);
	*key = fh + 8;
	*keylen = n;
	return 0;
}

int fs_fh_decode(const struct rpcrdma_nfs3_export *exp, const uint8_t *fh,
		 uint32_t len, struct fs_fentry *fe, struct stat *st)
{
	const uint8_t *key;
	uint32_t type, keylen;
	int err;

	fs_fentry_init(fe);
	err = fs_fh_check(exp, fh, len, &type, &key, &keylen);
	if (err)
		return err;
	err = exp->ex_be->be_fh_decode(exp, type, key, keylen, fe, st);
	if (err)
		return err;
	fe->fe_be = exp->ex_be;
	memcpy(fe->fe_fh, fh, len);
	fe->fe_fhlen = len;
	return 0;
}
