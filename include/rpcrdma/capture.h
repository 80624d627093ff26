/* SPDX-License-Identifier: MIT */
/*
 * rpcrdma/capture.h - write the RPC-over-RDMA messages a server or client
 * exchanges to a pcap file that Wireshark and tshark decode with their own
 * RPC-over-RDMA ("rpcordma"), RPC and NFS dissectors.
 *
 * Every message sent or received becomes a RoCEv2 frame synthesized around
 * it (Ethernet, IPv4 or IPv6 with the connection's real addresses, UDP to
 * port 4791, an InfiniBand Base Transport Header with the real destination
 * QP number and a per-direction packet sequence number, the message, and a
 * zero ICRC): Wireshark's InfiniBand dissector hands the payload to its
 * RPC-over-RDMA heuristic.  Optionally the first bytes of the data moved by
 * RDMA Read and RDMA Write are written too, as RDMA READ REQUEST / READ
 * RESPONSE ONLY and RDMA WRITE ONLY frames whose RETH carries the segment's
 * real handle, offset and full length.
 *
 * Cost: recording a message copies it into a frame and queues it; a writer
 * thread of the capture writes the queue to the file.  A full queue, or a
 * full file without rotation, drops the frame and counts it: the data path
 * never waits for the disk.
 */
#ifndef RPCRDMA_CAPTURE_H
#define RPCRDMA_CAPTURE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** cc_max_bytes when 0: 100 MiB per file. */
#define RPCRDMA_CAPTURE_DEFAULT_MAX_BYTES (100ull << 20)
/** cc_max_files when 0: 10 files (FILE, FILE.1 ... FILE.9), so a capture
 *  left running takes at most 1000 MiB by default. */
#define RPCRDMA_CAPTURE_DEFAULT_FILES 10u
/** cc_max_bytes: no limit at all (the file grows until the disk is full). */
#define RPCRDMA_CAPTURE_UNLIMITED UINT64_MAX

/** Capture configuration; zero fields take the defaults noted. */
struct rpcrdma_capture_config {
	/** The pcap file (required); rotated files get .1, .2 ...  It holds
	 *  the messages: AUTH_SYS credentials, file handles, names and file
	 *  data.  Created mode 0600, never opened where it already exists
	 *  (see rpcrdma_capture_open()). */
	const char *cc_path;
	/** Most bytes per file: 0 takes RPCRDMA_CAPTURE_DEFAULT_MAX_BYTES,
	 *  RPCRDMA_CAPTURE_UNLIMITED none.  When a frame would not fit: with
	 *  cc_max_files > 1 the files are rotated (FILE becomes FILE.1,
	 *  FILE.1 FILE.2 ..., the oldest beyond cc_max_files - 1 removed) and
	 *  a new FILE begun; otherwise the frame is dropped (counted). */
	uint64_t cc_max_bytes;
	/** Files kept when rotating: 0 takes RPCRDMA_CAPTURE_DEFAULT_FILES;
	 *  1: no rotation (frames that do not fit are dropped). */
	uint32_t cc_max_files;
	/** Bytes of each RDMA Read and RDMA Write written with its frame, 0
	 *  (the default): no RDMA Read or Write frames at all. */
	uint32_t cc_data_bytes;
	uint64_t cc_queue_bytes;   /* frames queued for the writer, default 16 MiB */
};

/** Capture counters. */
struct rpcrdma_capture_stats {
	uint64_t cs_frames;        /* frames written */
	uint64_t cs_bytes;         /* bytes written, headers included */
	uint64_t cs_drops;         /* frames dropped: queue full, file full, no memory */
	uint64_t cs_files;         /* files begun */
	uint64_t cs_write_errors;  /* failed writes (the frame is lost) */
};

struct rpcrdma_capture;

/**
 * rpcrdma_capture_open - create cc_path, write the pcap header (nanosecond
 * timestamps, LINKTYPE_ETHERNET) and start the writer thread.
 *
 * Every capture file (cc_path, and each new one after a rotation) is
 * created mode 0600 with O_CREAT | O_EXCL | O_NOFOLLOW: a symlink at the
 * path is not followed (its target is left alone) and nothing that exists
 * is opened for writing.  A file already at cc_path is removed first, and
 * a new one created, only when it is a capture of ours: a regular file
 * owned by the effective uid that begins with this writer's pcap magic
 * (a previous run's capture); an empty regular file of ours with no other
 * link (mkstemp()'s) is used and made 0600; anything else is refused.
 * Rotation renames
 * (FILE to FILE.1 ...), which replaces a symlink at the new name and never
 * follows it.
 * Return: 0; -EINVAL (no path, cc_max_bytes below 64 KiB but not 0,
 * cc_max_files above 1000); -EEXIST (cc_path exists and is not a capture
 * of ours: a symlink, a directory, another owner's file, other content);
 * -ENOMEM; the negated errno of creating the file (-EACCES, -ENOENT ...)
 * or of pthread_create().
 */
int rpcrdma_capture_open(const struct rpcrdma_capture_config *cfg,
			 struct rpcrdma_capture **out);

/** rpcrdma_capture_get_stats - copy the counters of @cap. */
void rpcrdma_capture_get_stats(struct rpcrdma_capture *cap, struct rpcrdma_capture_stats *st);

/**
 * rpcrdma_capture_close - write what is queued, close the file, free @cap
 * (NULL: no-op); @final, optional, gets the last counters.  Nothing may
 * record into @cap any more: close it after the server or client using it
 * is destroyed.
 */
void rpcrdma_capture_close(struct rpcrdma_capture *cap, struct rpcrdma_capture_stats *final);

#ifdef __cplusplus
}
#endif
#endif /* RPCRDMA_CAPTURE_H */
