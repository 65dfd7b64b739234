// SPDX-License-Identifier: GPL-2.0
/*
 * nagle.so: keeps Nagle's algorithm on in the process it is preloaded
 * into (LD_PRELOAD), by accepting and ignoring every request to set
 * TCP_NODELAY.  Everything else passes to the C library unchanged.
 *
 * The cluster (tools/guest/cluster.sh, CLUSTER_PACKING=nagle) preloads it
 * into nbdkit and nbd-client, which both set TCP_NODELAY on every NBD
 * connection: each request and each reply is then a frame of its own on
 * the link, however many are in flight.  With Nagle on, TCP holds what a
 * process writes while an earlier small segment is unacknowledged and
 * sends it together with whatever else was written meanwhile, so the
 * requests and replies in flight share frames -- the transport's own
 * form of the paper's "requests per packet".  The kernel's NBD client
 * keeps the socket nbd-client configured, so the option holds for the
 * connection's life.
 *
 * Built by tools/cluster: gcc -shared -fPIC -o nagle.so nagle.c -ldl
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

typedef int (*setsockopt_fn)(int, int, int, const void *, socklen_t);

int setsockopt(int fd, int level, int name, const void *val, socklen_t len)
{
	static setsockopt_fn next;

	if (level == IPPROTO_TCP && name == TCP_NODELAY)
		return 0;
	if (!next)
		next = (setsockopt_fn)dlsym(RTLD_NEXT, "setsockopt");
	if (!next) {
		errno = ENOSYS;
		return -1;
	}
	return next(fd, level, name, val, len);
}
