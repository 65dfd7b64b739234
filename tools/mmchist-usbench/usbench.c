// SPDX-License-Identifier: GPL-2.0
/*
 * The MMC history's record path in user space, to calibrate the bench of
 * the kernel module (mmc_history/mmc_history.c, debugfs "bench"), which
 * can only run in an emulated (TCG) guest here.  The same steps -- two
 * CLOCK_MONOTONIC reads, a lock around the in-flight table, a record
 * copy into a ring -- are timed against an empty indirect call, natively
 * on the host and in the guest; the ratio of the two estimates how much
 * TCG inflates the kernel bench.  Prints "records=N probe_ns=.. null_ns=..
 * record_ns=.." like the kernel bench.
 *
 * Build: cc -O2 -o usbench usbench.c; run: usbench [N]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define INFLIGHT 64
#define RING 1024

struct rec {
	uint64_t issue_ns, done_ns, sector;
	uint32_t nr;
	int32_t err, tag;
	uint8_t op;
};

struct inflight {
	const void *mrq;
	struct rec rec;
};

static struct {
	volatile int lock;
	unsigned int next, nr_inflight;
	uint64_t total;
	struct inflight inflight[INFLIGHT];
	struct rec recs[RING];
} h;

struct req {
	uint32_t blk_addr, blocks, blksz;
	int tag;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void lock(void)
{
	while (__atomic_exchange_n(&h.lock, 1, __ATOMIC_ACQUIRE))
		;
}

static void unlock(void)
{
	__atomic_store_n(&h.lock, 0, __ATOMIC_RELEASE);
}

static __attribute__((noinline)) void start(const struct req *r)
{
	uint64_t t = now_ns();
	struct inflight *f = NULL;
	unsigned int i;

	lock();
	for (i = 0; i < h.nr_inflight; i++)
		if (h.inflight[i].mrq == r)
			f = &h.inflight[i];
	if (!f)
		f = &h.inflight[h.nr_inflight++];
	f->mrq = r;
	f->rec.issue_ns = t;
	f->rec.op = 'R';
	f->rec.sector = r->blk_addr;
	f->rec.nr = (uint64_t)r->blocks * r->blksz >> 9;
	f->rec.tag = r->tag;
	unlock();
}

static __attribute__((noinline)) void done(const struct req *r)
{
	uint64_t t = now_ns();
	unsigned int i;

	lock();
	for (i = 0; i < h.nr_inflight; i++)
		if (h.inflight[i].mrq == r)
			break;
	if (i < h.nr_inflight) {
		struct rec *d = &h.recs[h.next];

		*d = h.inflight[i].rec;
		d->done_ns = t;
		d->err = 0;
		if (++h.next == RING)
			h.next = 0;
		h.total++;
		h.inflight[i] = h.inflight[--h.nr_inflight];
	}
	unlock();
}

static __attribute__((noinline)) void null(const struct req *r)
{
	__asm__ volatile("" : : "r" (r) : "memory");
}

static uint64_t loop(void (*s)(const struct req *), void (*d)(const struct req *),
		     struct req *r, unsigned int n)
{
	uint64_t t0 = now_ns();
	unsigned int i;

	for (i = 0; i < n; i++) {
		r->blk_addr = i * 8;
		s(r);
		d(r);
	}
	return now_ns() - t0;
}

int main(int argc, char **argv)
{
	void (*volatile fs)(const struct req *) = start;
	void (*volatile fd)(const struct req *) = done;
	void (*volatile fn)(const struct req *) = null;
	struct req r = { .blocks = 8, .blksz = 512 };
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	uint64_t p = 0, z = 0;
	unsigned long left, c;

	if (!n || n > 100000000) {
		fprintf(stderr, "usbench: N must be 1..100000000\n");
		return 2;
	}
	for (left = n; left; left -= c) {
		c = left < 1000 ? left : 1000;
		p += loop(fs, fd, &r, c);
		z += loop(fn, fn, &r, c);
	}
	printf("records=%lu probe_ns=%.3f null_ns=%.3f record_ns=%.3f\n", n,
	       (double)p / n, (double)z / n, (double)(p - z) / n);
	return h.total == n ? 0 : 1;
}
