// SPDX-License-Identifier: GPL-2.0
/*
 * fwdsched: a forward-sweep I/O scheduler for flash storage.
 *
 * On eMMC and SD cards a request whose address lies above the previous
 * one completes faster than one below it.  fwdsched therefore serves
 * requests in a one-way ascending sweep (C-LOOK): it dispatches the
 * lowest pending sector at or above the end of the last dispatched
 * request, and when nothing is left above, it wraps to the lowest pending
 * sector.  Every request also gets a deadline; an expired request is
 * served next and the sweep continues upward from it.
 *
 * Reads and writes share one sweep position but are kept in separate
 * sorted trees and served in batches, so that writes cannot starve reads
 * and reads cannot starve writes (see fwd_choose_dir()).
 *
 * Every request is charged to the process that inserted it.  The sweep
 * skips the requests of a process that has been served more than
 * fair_slack requests ahead of the least served backlogged process of its
 * I/O priority class (see fwd_sweep_pick()).  Priority classes are served
 * in order, real-time first, with aging (see fwd_aged_request()).
 *
 * See Documentation/block/fwdsched-iosched.rst.
 */
#include <linux/kernel.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/bio.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/init.h>
#include <linux/compiler.h>
#include <linux/rbtree.h>
#include <linux/sbitmap.h>
#include <linux/seq_file.h>
#include <linux/sched.h>
#include <linux/jiffies.h>
#include <linux/math64.h>
#include <linux/ioprio.h>
#include <linux/uaccess.h>

#include <trace/events/block.h>

#include "elevator.h"
#include "blk.h"
#include "blk-mq.h"
#include "blk-mq-debugfs.h"
#include "blk-mq-sched.h"
#include "compat.h"

/* Defaults of the tunables; see Documentation/block/fwdsched-iosched.rst. */
static const unsigned int read_expire_ms = 500;	  /* read deadline */
static const unsigned int write_expire_ms = 5000; /* write deadline */
static const unsigned int writes_starved = 2;	  /* read batches per write batch */
static const unsigned int fifo_batch = 16;	  /* requests per batch */
static const unsigned int fair_slack = 8;	  /* requests of lead allowed */
static const unsigned int prio_aging_ms = 10000;  /* lower class aging */

/* Limits of the tunables. */
#define FWD_EXPIRE_MAX_MS	600000U
#define FWD_WRITES_STARVED_MAX	64U
#define FWD_FIFO_BATCH_MAX	1024U
/* fair_slack: this value, the largest, turns enforcement off. */
#define FWD_FAIR_SLACK_OFF	4096U
#define FWD_DISPATCH_DEPTH_MAX	4096U
/* Default dispatch_depth of a blocking driver with one hardware queue. */
#define FWD_BLOCKING_DEPTH	2U

/* Default async_depth, in percent of nr_requests. */
#define FWD_ASYNC_PERCENT	75UL

enum fwd_dir {
	FWD_READ,
	FWD_WRITE,
	FWD_DIR_COUNT
};

static const char *const fwd_dir_names[FWD_DIR_COUNT] = {
	[FWD_READ]	= "read",
	[FWD_WRITE]	= "write",
};

/* I/O priority classes, served in this order. */
enum fwd_prio {
	FWD_PRIO_RT,
	FWD_PRIO_BE,
	FWD_PRIO_IDLE,
	FWD_PRIO_COUNT
};

static const char *const fwd_prio_names[FWD_PRIO_COUNT] = {
	[FWD_PRIO_RT]	= "rt",
	[FWD_PRIO_BE]	= "be",
	[FWD_PRIO_IDLE]	= "idle",
};

/*
 * Service charged per request, by priority level within the class, in
 * 1/16 of a request: level 4 (the default) costs one request, level 0
 * half as much, level 7 four times as much.  A process thus gets a share
 * of its class in proportion to 8 - level.
 */
#define FWD_VUNIT		16U
static const u8 fwd_level_cost[IOPRIO_NR_LEVELS] = {
	8, 9, 11, 13, 16, 21, 32, 64
};

/* Counters shown in debugfs "stats"; each is documented in the rst file. */
enum fwd_stat {
	FWD_STAT_INSERTED,
	FWD_STAT_DISPATCHED,
	FWD_STAT_FORWARD,
	FWD_STAT_BACKWARD,
	FWD_STAT_WRAPS,
	FWD_STAT_EXPIRED,
	FWD_STAT_HEAD,
	FWD_STAT_BIO_MERGES,
	FWD_STAT_RQ_MERGES,
	FWD_STAT_INSERT_MERGES,
	FWD_STAT_AGED,
	FWD_STAT_FAIR_SKIPS,
	FWD_STAT_DETOURS,
	FWD_STAT_FAIR_IDLE,
	FWD_STAT_FAIR_HOLDS,
	FWD_STAT_DEPTH_HOLDS,
	FWD_STAT_COUNT
};

static const char *const fwd_stat_names[FWD_STAT_COUNT] = {
	[FWD_STAT_INSERTED]	 = "inserted",
	[FWD_STAT_DISPATCHED]	 = "dispatched",
	[FWD_STAT_FORWARD]	 = "forward",
	[FWD_STAT_BACKWARD]	 = "backward",
	[FWD_STAT_WRAPS]	 = "wraps",
	[FWD_STAT_EXPIRED]	 = "expired",
	[FWD_STAT_HEAD]		 = "head",
	[FWD_STAT_BIO_MERGES]	 = "bio_merges",
	[FWD_STAT_RQ_MERGES]	 = "rq_merges",
	[FWD_STAT_INSERT_MERGES] = "insert_merges",
	[FWD_STAT_AGED]		 = "aged",
	[FWD_STAT_FAIR_SKIPS]	 = "fair_skips",
	[FWD_STAT_DETOURS]	 = "detours",
	[FWD_STAT_FAIR_IDLE]	 = "fair_idle",
	[FWD_STAT_FAIR_HOLDS]	 = "fair_holds",
	[FWD_STAT_DEPTH_HOLDS]	 = "depth_holds",
};

/*
 * Per-process accounting.  Every request is charged to the process
 * (thread group) and to the thread that inserted it.  Both live in fixed
 * tables, so memory is bounded whatever the number of processes: an entry
 * with nothing in the scheduler or on the device is taken over by a new
 * process, the least recently used first, and when no entry is free the
 * request is charged to entry 0, shown as "(other)".
 */
#define FWD_NR_PROCS		64
#define FWD_NR_THREADS		64
/* An entry that dispatched within this window counts in "fairness". */
#define FWD_ACTIVE_WINDOW	(10 * HZ)
/*
 * A process stays backlogged this long after its last completion, see
 * fwd_proc_backlogged().
 */
#define FWD_GRACE		(HZ / 50 ?: 1)

/* Low bits of rq->elv.priv[0], which points to the owning fwd_proc. */
#define FWD_RQ_STARTED		1UL	/* dispatched (and charged) once */
#define FWD_RQ_FLAGS		1UL

struct fwd_proc {
	pid_t tgid;			/* 0: unused (or entry 0) */
	enum fwd_prio prio;		/* class of its last request */
	unsigned int queued;		/* requests waiting in the scheduler */
	atomic_t inflight;		/* dispatched, not yet finished */
	/* On fwd_data.active while it may be backlogged. */
	struct list_head active;
	unsigned long last_used;	/* jiffies of last insert or dispatch */
	unsigned long last_done;	/* jiffies of last completion */
	/* Service received in its class, in 1/FWD_VUNIT requests. */
	u64 vtime;
	/* fwd_data.seq when its oldest waiting request began to wait. */
	u64 wait_seq;
	/* Most dispatches of others while it had a request waiting. */
	u64 max_passed;
	u64 reqs[FWD_DIR_COUNT];	/* requests dispatched */
	u64 sectors[FWD_DIR_COUNT];	/* 512-byte sectors dispatched */
	u64 wait_sum[FWD_DIR_COUNT];	/* insert to dispatch, in jiffies */
	unsigned long wait_max[FWD_DIR_COUNT];	/* in jiffies */
	char comm[TASK_COMM_LEN];
};

struct fwd_thread {
	pid_t pid;			/* 0: unused */
	pid_t tgid;
	unsigned int queued;		/* requests waiting in the scheduler */
	unsigned long last_used;	/* jiffies of last insert or dispatch */
	u64 reqs;			/* requests dispatched */
};

struct fwd_data {
	struct request_queue *q;

	/* Requests dispatched and not yet finished. */
	atomic_t inflight;

	/*
	 * Protects everything below.  Taken from process context only
	 * (insert, dispatch, merge, sysfs, debugfs).  The completion path
	 * only touches the inflight counters (atomic) and
	 * fwd_proc.last_done, so no irq-safe variant is needed.
	 */
	spinlock_t lock;

	/* At-head insertions and requeues, served before the sweep. */
	struct list_head dispatch;

	/* Pending requests sorted by start sector, per class and direction. */
	struct rb_root sort_list[FWD_PRIO_COUNT][FWD_DIR_COUNT];
	/* The same requests in insertion order, for deadline expiry. */
	struct list_head fifo_list[FWD_PRIO_COUNT][FWD_DIR_COUNT];
	unsigned int queued[FWD_PRIO_COUNT][FWD_DIR_COUNT];

	/* End sector of the last dispatched request. */
	sector_t sweep_pos;
	enum fwd_dir batch_dir;
	/* Requests dispatched in the current batch. */
	unsigned int batch_count;
	/* Read batches served since the last write batch. */
	unsigned int starved;
	/* Requests dispatched since the scheduler was selected. */
	u64 seq;

	u64 stats[FWD_STAT_COUNT];

	/* Processes that may be backlogged; pruned in fwd_fair_limit(). */
	struct list_head active;
	/* Least service of a backlogged process seen, per class. */
	u64 vclock[FWD_PRIO_COUNT];

	/* Accounting tables, see struct fwd_proc; the last entries used. */
	struct fwd_proc procs[FWD_NR_PROCS];
	struct fwd_thread threads[FWD_NR_THREADS];
	struct fwd_proc *last_proc;
	struct fwd_thread *last_thread;

	/* Tunables. */
	unsigned int fifo_expire_ms[FWD_DIR_COUNT];
	unsigned long fifo_expire[FWD_DIR_COUNT];	/* in jiffies */
	unsigned int writes_starved;
	unsigned int fifo_batch;
	unsigned int front_merges;
	unsigned int fair_slack;			/* in requests */
	unsigned int dispatch_depth;			/* 0: no limit */
	unsigned int prio_aging_ms;
	unsigned long prio_aging;			/* in jiffies */
#ifndef FWD_HAVE_Q_ASYNC_DEPTH
	/*
	 * Before 7.0 the scheduler keeps the async depth itself.  It is
	 * FWD_ASYNC_PERCENT of nr_requests and follows nr_requests when
	 * that changes, unless the user wrote async_depth.
	 */
	unsigned int async_depth;
	bool async_depth_set;
#endif
};

static inline enum fwd_dir fwd_rq_dir(struct request *rq)
{
	return rq_data_dir(rq) == READ ? FWD_READ : FWD_WRITE;
}

static inline enum fwd_prio fwd_ioprio_class(unsigned short ioprio)
{
	switch (IOPRIO_PRIO_CLASS(ioprio)) {
	case IOPRIO_CLASS_RT:
		return FWD_PRIO_RT;
	case IOPRIO_CLASS_IDLE:
		return FWD_PRIO_IDLE;
	default:
		return FWD_PRIO_BE;
	}
}

static inline enum fwd_prio fwd_rq_prio(struct request *rq)
{
	return fwd_ioprio_class(req_get_ioprio(rq));
}

static inline unsigned int fwd_rq_cost(struct request *rq)
{
	unsigned short ioprio = req_get_ioprio(rq);

	if (IOPRIO_PRIO_CLASS(ioprio) == IOPRIO_CLASS_NONE)
		return FWD_VUNIT;
	return fwd_level_cost[IOPRIO_PRIO_LEVEL(ioprio)];
}

static inline unsigned int *fwd_async_depth(struct fwd_data *fwd)
{
#ifdef FWD_HAVE_Q_ASYNC_DEPTH
	return &fwd->q->async_depth;
#else
	return &fwd->async_depth;
#endif
}

/*
 * The process a request is charged to, or NULL for requests that did not
 * go through fwd_insert_request().  Only requests that the block layer
 * prepared for the scheduler have valid elv.priv[] (flush and passthrough
 * requests bypass it).
 */
static inline struct fwd_proc *fwd_rq_proc(struct request *rq)
{
	if (!(rq->rq_flags & RQF_USE_SCHED))
		return NULL;
	return (struct fwd_proc *)((unsigned long)rq->elv.priv[0] &
				   ~FWD_RQ_FLAGS);
}

static inline bool fwd_rq_started(struct request *rq)
{
	return (unsigned long)rq->elv.priv[0] & FWD_RQ_STARTED;
}

/*
 * A process is backlogged while it has requests waiting or on the
 * device, and for FWD_GRACE after its last completion.  A synchronous
 * reader has nothing pending between a completion and its next request,
 * and on MMC the next request is chosen while its current one is still
 * in flight; without the grace it would drop out of the comparison at
 * those moments and come back as if new.  See fwd_sweep_pick() for why
 * the device is never kept idle for it.  Called without the lock from
 * nowhere; the completion side fields are read once.
 */
static bool fwd_proc_backlogged(struct fwd_proc *p)
{
	return p->queued || atomic_read(&p->inflight) ||
	       time_before(jiffies, READ_ONCE(p->last_done) + FWD_GRACE);
}

static bool fwd_proc_idle(struct fwd_proc *p)
{
	return !p->queued && !atomic_read(&p->inflight);
}

/* Returns the entry of the current process, taking over an idle one. */
static struct fwd_proc *fwd_proc_get(struct fwd_data *fwd)
{
	struct fwd_proc *p = fwd->last_proc, *victim = NULL;
	pid_t tgid = current->tgid;
	int i;

	lockdep_assert_held(&fwd->lock);

	if (p && p->tgid == tgid)
		return p;

	for (i = 1; i < FWD_NR_PROCS; i++) {
		p = &fwd->procs[i];
		if (p->tgid == tgid)
			goto found;
		if (!fwd_proc_idle(p))
			continue;
		if (!victim || (victim->tgid &&
				(!p->tgid || time_before(p->last_used,
							 victim->last_used))))
			victim = p;
	}
	if (!victim)
		return &fwd->procs[0];

	p = victim;
	list_del_init(&p->active);
	memset(p, 0, sizeof(*p));
	INIT_LIST_HEAD(&p->active);
	p->tgid = tgid;
	p->last_done = jiffies - FWD_GRACE;
	strscpy(p->comm, current->comm, sizeof(p->comm));
found:
	fwd->last_proc = p;
	return p;
}

static struct fwd_thread *fwd_thread_get(struct fwd_data *fwd)
{
	struct fwd_thread *t = fwd->last_thread, *victim = NULL;
	pid_t pid = current->pid;
	int i;

	lockdep_assert_held(&fwd->lock);

	if (t && t->pid == pid)
		return t;

	for (i = 1; i < FWD_NR_THREADS; i++) {
		t = &fwd->threads[i];
		if (t->pid == pid)
			goto found;
		if (t->queued)
			continue;
		if (!victim || (victim->pid &&
				(!t->pid || time_before(t->last_used,
							victim->last_used))))
			victim = t;
	}
	if (!victim)
		return &fwd->threads[0];

	t = victim;
	memset(t, 0, sizeof(*t));
	t->pid = pid;
	t->tgid = current->tgid;
found:
	fwd->last_thread = t;
	return t;
}

/*
 * A request enters the scheduler's lists: charge it to its process and
 * thread (found on the first insert; a requeued request keeps them).  A
 * process that was not backlogged resumes at the least service of its
 * class, so that time spent idle is not banked as credit.
 */
static void fwd_owner_enqueue(struct fwd_data *fwd, struct request *rq)
{
	enum fwd_prio prio = fwd_rq_prio(rq);
	struct fwd_thread *t;
	struct fwd_proc *p;

	lockdep_assert_held(&fwd->lock);

	if (!(rq->rq_flags & RQF_USE_SCHED))
		return;
	if (!rq->elv.priv[0]) {
		rq->elv.priv[0] = fwd_proc_get(fwd);
		rq->elv.priv[1] = fwd_thread_get(fwd);
	}
	p = fwd_rq_proc(rq);
	t = rq->elv.priv[1];

	if (list_empty(&p->active) || p->prio != prio) {
		p->prio = prio;
		p->vtime = max(p->vtime, fwd->vclock[prio]);
		list_move_tail(&p->active, &fwd->active);
	}
	if (!p->queued++)
		p->wait_seq = fwd->seq;
	t->queued++;
	p->last_used = jiffies;
	t->last_used = p->last_used;
}

/* A request leaves the scheduler's lists, dispatched or merged away. */
static void fwd_owner_dequeue(struct request *rq)
{
	struct fwd_proc *p = fwd_rq_proc(rq);
	struct fwd_thread *t;

	if (!p)
		return;
	t = rq->elv.priv[1];
	p->queued--;
	t->queued--;
}

/*
 * Charge a dispatch to the owner of @rq: requests, sectors, waiting time
 * since insertion (rq->fifo_time), and service in its class.  A requeued
 * request is charged only on its first dispatch.
 */
static void fwd_owner_dispatch(struct fwd_data *fwd, struct request *rq)
{
	struct fwd_proc *p = fwd_rq_proc(rq);
	enum fwd_dir dir = fwd_rq_dir(rq);
	struct fwd_thread *t;
	unsigned long wait;
	u64 passed;

	lockdep_assert_held(&fwd->lock);

	if (!p)
		return;
	t = rq->elv.priv[1];

	passed = fwd->seq - p->wait_seq;
	if (passed > p->max_passed)
		p->max_passed = passed;
	p->wait_seq = fwd->seq + 1;

	if (fwd_rq_started(rq))
		return;
	rq->elv.priv[0] = (void *)((unsigned long)p | FWD_RQ_STARTED);
	atomic_inc(&p->inflight);
	atomic_inc(&fwd->inflight);

	wait = jiffies - (unsigned long)rq->fifo_time;
	p->reqs[dir]++;
	p->sectors[dir] += blk_rq_sectors(rq);
	p->wait_sum[dir] += wait;
	if (wait > p->wait_max[dir])
		p->wait_max[dir] = wait;
	p->vtime += fwd_rq_cost(rq);
	p->last_used = jiffies;
	t->reqs++;
	t->last_used = p->last_used;
}

static void fwd_remove_request(struct fwd_data *fwd, struct request *rq)
{
	enum fwd_prio prio = fwd_rq_prio(rq);
	enum fwd_dir dir = fwd_rq_dir(rq);

	lockdep_assert_held(&fwd->lock);

	list_del_init(&rq->queuelist);
	elv_rb_del(&fwd->sort_list[prio][dir], rq);
	fwd->queued[prio][dir]--;
	elv_rqhash_del(fwd->q, rq);
	if (fwd->q->last_merge == rq)
		fwd->q->last_merge = NULL;
	fwd_owner_dequeue(rq);
}

static unsigned int fwd_queued_prio(struct fwd_data *fwd, enum fwd_prio prio)
{
	return fwd->queued[prio][FWD_READ] + fwd->queued[prio][FWD_WRITE];
}

/* Returns the lowest-sector request of @root starting at or above @pos. */
static struct request *fwd_find_from(struct rb_root *root, sector_t pos)
{
	struct rb_node *node = root->rb_node;
	struct request *found = NULL;

	while (node) {
		struct request *rq = rb_entry_rq(node);

		if (blk_rq_pos(rq) >= pos) {
			found = rq;
			node = node->rb_left;
		} else {
			node = node->rb_right;
		}
	}
	return found;
}

static inline struct request *fwd_next_rq(struct request *rq)
{
	struct rb_node *node = rb_next(&rq->rb_node);

	return node ? rb_entry_rq(node) : NULL;
}

static inline struct request *fwd_first_rq(struct rb_root *root)
{
	struct rb_node *node = rb_first(root);

	return node ? rb_entry_rq(node) : NULL;
}

/* rq->fifo_time is the insertion time, in jiffies. */
static bool fwd_waited(struct request *rq, unsigned long limit)
{
	return time_after_eq(jiffies, (unsigned long)rq->fifo_time + limit);
}

static bool fwd_head_expired(struct fwd_data *fwd, enum fwd_prio prio,
			     enum fwd_dir dir)
{
	struct request *rq;

	lockdep_assert_held(&fwd->lock);

	rq = list_first_entry_or_null(&fwd->fifo_list[prio][dir],
				      struct request, queuelist);
	return rq && fwd_waited(rq, fwd->fifo_expire[dir]);
}

/*
 * Priority classes are served in order: a class is served only while no
 * higher class has requests waiting.  To bound the wait of the lower
 * classes, a request of a lower class that has waited prio_aging_expire
 * is dispatched next (the oldest first, reads before writes).
 */
static struct request *fwd_aged_request(struct fwd_data *fwd)
{
	bool higher = false;
	enum fwd_prio prio;
	enum fwd_dir dir;

	lockdep_assert_held(&fwd->lock);

	for (prio = 0; prio < FWD_PRIO_COUNT; prio++) {
		if (!fwd_queued_prio(fwd, prio))
			continue;
		for (dir = 0; higher && dir < FWD_DIR_COUNT; dir++) {
			struct request *rq;

			rq = list_first_entry_or_null(&fwd->fifo_list[prio][dir],
						      struct request, queuelist);
			if (rq && fwd_waited(rq, fwd->prio_aging))
				return rq;
		}
		higher = true;
	}
	return NULL;
}

/*
 * Picks the direction of the next request of class @prio.  The direction
 * is kept for a batch of up to fifo_batch requests.  When both directions
 * have work, a write batch follows after writes_starved read batches, or
 * earlier if the oldest write has expired, and a read batch always follows
 * a write batch.  So reads wait for at most one write batch, and writes
 * for at most writes_starved read batches once they have expired.
 */
static enum fwd_dir fwd_choose_dir(struct fwd_data *fwd, enum fwd_prio prio)
{
	bool reads = fwd->queued[prio][FWD_READ];
	bool writes = fwd->queued[prio][FWD_WRITE];
	enum fwd_dir dir;

	lockdep_assert_held(&fwd->lock);

	if (fwd->batch_count < fwd->fifo_batch &&
	    fwd->queued[prio][fwd->batch_dir])
		return fwd->batch_dir;

	if (!writes)
		dir = FWD_READ;
	else if (!reads)
		dir = FWD_WRITE;
	else if (fwd->batch_dir == FWD_READ &&
		 (fwd->starved >= fwd->writes_starved ||
		  fwd_head_expired(fwd, prio, FWD_WRITE)))
		dir = FWD_WRITE;
	else
		dir = FWD_READ;

	if (dir == FWD_WRITE)
		fwd->starved = 0;
	else if (writes)
		fwd->starved++;

	fwd->batch_dir = dir;
	fwd->batch_count = 0;
	return dir;
}

/*
 * Computes the most service a process of class @prio may have received
 * for its requests to be taken by the sweep: the least service of a
 * backlogged process of the class plus fair_slack requests.  Returns
 * false when there is nothing to enforce: enforcement is off, or fewer
 * than two processes of the class are backlogged.  Processes that are no
 * longer backlogged are dropped from the active list here.
 */
static bool fwd_fair_limit(struct fwd_data *fwd, enum fwd_prio prio,
			   u64 *limit)
{
	struct fwd_proc *p, *tmp;
	u64 least = U64_MAX;
	unsigned int n = 0;

	lockdep_assert_held(&fwd->lock);

	if (fwd->fair_slack >= FWD_FAIR_SLACK_OFF)
		return false;

	list_for_each_entry_safe(p, tmp, &fwd->active, active) {
		if (!fwd_proc_backlogged(p)) {
			list_del_init(&p->active);
			continue;
		}
		if (p->prio != prio)
			continue;
		n++;
		least = min(least, p->vtime);
	}
	if (!n)
		return false;
	fwd->vclock[prio] = max(fwd->vclock[prio], least);
	*limit = least + (u64)fwd->fair_slack * FWD_VUNIT;
	return n > 1;
}

static bool fwd_rq_eligible(struct request *rq, u64 limit)
{
	struct fwd_proc *p = fwd_rq_proc(rq);

	return !p || p->vtime <= limit;
}

/*
 * No request of a process within the limit is waiting: the least served
 * processes are between two requests (see fwd_proc_backlogged()).  The
 * device is not kept idle for them; the sweep serves whoever is waiting.
 * But a process that has nothing waiting must not bank the service it
 * misses this way: it is kept at most fair_slack + 1 requests behind the
 * process just served.
 */
static void fwd_fair_clamp(struct fwd_data *fwd, struct request *rq)
{
	struct fwd_proc *served = fwd_rq_proc(rq), *p;
	u64 lag = (u64)(fwd->fair_slack + 1) * FWD_VUNIT;

	lockdep_assert_held(&fwd->lock);

	if (!served || served->vtime < lag)
		return;
	list_for_each_entry(p, &fwd->active, active) {
		if (p->prio == served->prio && !p->queued &&
		    p->vtime < served->vtime - lag)
			p->vtime = served->vtime - lag;
	}
}

/*
 * Marks @hctx for restart and returns whether at least @n requests are
 * still in flight: if so, the caller may hand out nothing, because the
 * completion of one of them runs the queue again.
 */
static bool fwd_hold_inflight(struct fwd_data *fwd, struct blk_mq_hw_ctx *hctx,
			      unsigned int n)
{
	blk_mq_sched_mark_restart_hctx(hctx);
	/*
	 * Mark, then read; a completion decrements, then tests the mark
	 * (see fwd_finish_request()).  One of the two sees the other's store.
	 */
	smp_mb();
	return atomic_read(&fwd->inflight) >= n;
}

/*
 * No eligible request waits.  If that is because a process within the
 * limit is between two requests (rather than waiting in the other
 * direction), do not hand the device yet another request of the
 * processes ahead while the device still has requests to work on:
 * block-mq collects requests from the scheduler in batches, and anything
 * handed out now would be queued in the driver ahead of the reader's
 * next request.  The device is never left idle for it: once nothing is
 * in flight the sweep goes on.  The restart mark makes the next
 * completion run the queue again; it is set before the in-flight count
 * is read, so a completion in between is not missed.
 */
static bool fwd_fair_hold(struct fwd_data *fwd, struct blk_mq_hw_ctx *hctx,
			  enum fwd_prio prio, u64 limit)
{
	struct fwd_proc *p;

	lockdep_assert_held(&fwd->lock);

	list_for_each_entry(p, &fwd->active, active) {
		if (p->prio == prio && !p->queued && p->vtime <= limit)
			return fwd_hold_inflight(fwd, hctx, 1);
	}
	return false;
}

/*
 * The sweep for class @prio and direction @dir: the lowest request at or
 * above the sweep position whose process is not more than fair_slack
 * requests ahead of the least served backlogged process, else the lowest
 * such request below (*@keep_pos is set: the sweep position stays, so the
 * skipped requests above are served in this sweep rather than after the
 * wrap), else, when no waiting request is eligible, nothing while the
 * device is busy (see fwd_fair_hold()) and the plain sweep when it is not.
 */
static struct request *fwd_sweep_pick(struct fwd_data *fwd,
				      struct blk_mq_hw_ctx *hctx,
				      enum fwd_prio prio, enum fwd_dir dir,
				      bool *keep_pos)
{
	struct rb_root *root = &fwd->sort_list[prio][dir];
	struct request *start, *rq;
	u64 limit;

	lockdep_assert_held(&fwd->lock);

	start = fwd_find_from(root, fwd->sweep_pos);
	if (!fwd_fair_limit(fwd, prio, &limit))
		goto sweep;

	for (rq = start; rq; rq = fwd_next_rq(rq)) {
		if (fwd_rq_eligible(rq, limit)) {
			if (rq != start)
				fwd->stats[FWD_STAT_FAIR_SKIPS]++;
			return rq;
		}
	}
	for (rq = fwd_first_rq(root); rq != start; rq = fwd_next_rq(rq)) {
		if (!fwd_rq_eligible(rq, limit))
			continue;
		fwd->stats[FWD_STAT_FAIR_SKIPS]++;
		if (start) {
			fwd->stats[FWD_STAT_DETOURS]++;
			*keep_pos = true;
		} else {
			fwd->stats[FWD_STAT_WRAPS]++;
		}
		return rq;
	}
	if (fwd_fair_hold(fwd, hctx, prio, limit)) {
		fwd->stats[FWD_STAT_FAIR_HOLDS]++;
		return NULL;
	}
	fwd->stats[FWD_STAT_FAIR_IDLE]++;
	rq = start ?: fwd_first_rq(root);
	fwd_fair_clamp(fwd, rq);
	if (!start)
		fwd->stats[FWD_STAT_WRAPS]++;
	return rq;

sweep:
	if (start)
		return start;
	fwd->stats[FWD_STAT_WRAPS]++;
	return fwd_first_rq(root);
}

/*
 * dispatch_depth: hand out nothing while that many requests are already
 * in flight.  A blocking driver with one hardware queue, such as MMC,
 * works on one request while its ->queue_rq() prepares the next and
 * sleeps until the first is done; a request handed out beyond those two
 * is turned away (BLK_STS_RESOURCE) and waits in blk-mq's own dispatch
 * list, where it is issued next whatever arrives meanwhile.  Holding it
 * back keeps the choice in the sweep until the device can take it; the
 * completion that makes room runs the queue again.
 */
static bool fwd_depth_hold(struct fwd_data *fwd, struct blk_mq_hw_ctx *hctx)
{
	unsigned int depth = fwd->dispatch_depth;

	lockdep_assert_held(&fwd->lock);

	if (!depth || atomic_read(&fwd->inflight) < depth)
		return false;
	return fwd_hold_inflight(fwd, hctx, depth);
}

/*
 * Called with the lock held; picks the next request.  Returns NULL only
 * when nothing waits, or when fwd_depth_hold() or fwd_fair_hold() holds
 * back while requests are in flight; their completion runs the queue
 * again.
 */
static struct request *__fwd_dispatch_request(struct fwd_data *fwd,
					      struct blk_mq_hw_ctx *hctx)
{
	bool keep_pos = false;
	enum fwd_prio prio;
	struct request *rq;
	enum fwd_dir dir;

	lockdep_assert_held(&fwd->lock);

	rq = list_first_entry_or_null(&fwd->dispatch, struct request,
				      queuelist);
	if (rq) {
		list_del_init(&rq->queuelist);
		fwd_owner_dequeue(rq);
		fwd->stats[FWD_STAT_HEAD]++;
		goto account;
	}

	if (fwd_depth_hold(fwd, hctx)) {
		fwd->stats[FWD_STAT_DEPTH_HOLDS]++;
		return NULL;
	}

	rq = fwd_aged_request(fwd);
	if (rq) {
		fwd->stats[FWD_STAT_AGED]++;
		goto remove;
	}

	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		if (fwd_queued_prio(fwd, prio))
			break;
	if (prio == FWD_PRIO_COUNT)
		return NULL;

	dir = fwd_choose_dir(fwd, prio);
	if (fwd_head_expired(fwd, prio, dir)) {
		rq = list_first_entry(&fwd->fifo_list[prio][dir],
				      struct request, queuelist);
		fwd->stats[FWD_STAT_EXPIRED]++;
	} else {
		rq = fwd_sweep_pick(fwd, hctx, prio, dir, &keep_pos);
		if (!rq)
			return NULL;
	}
	fwd->batch_count++;
remove:
	fwd_remove_request(fwd, rq);

account:
	fwd_owner_dispatch(fwd, rq);
	if (blk_rq_pos(rq) >= fwd->sweep_pos)
		fwd->stats[FWD_STAT_FORWARD]++;
	else
		fwd->stats[FWD_STAT_BACKWARD]++;
	fwd->stats[FWD_STAT_DISPATCHED]++;
	fwd->seq++;
	if (!keep_pos)
		fwd->sweep_pos = blk_rq_pos(rq) + blk_rq_sectors(rq);
	rq->rq_flags |= RQF_STARTED;
	return rq;
}

/*
 * Called from blk_mq_run_hw_queue() -> __blk_mq_sched_dispatch_requests().
 * Returns a request whenever one is pending, except while requests are
 * in flight (see fwd_depth_hold() and fwd_fair_hold()), so the queue
 * never stalls.
 */
static struct request *fwd_dispatch_request(struct blk_mq_hw_ctx *hctx)
{
	struct fwd_data *fwd = hctx->queue->elevator->elevator_data;
	struct request *rq;

	spin_lock(&fwd->lock);
	rq = __fwd_dispatch_request(fwd, hctx);
	spin_unlock(&fwd->lock);

	return rq;
}

static bool fwd_has_work(struct blk_mq_hw_ctx *hctx)
{
	struct fwd_data *fwd = hctx->queue->elevator->elevator_data;
	enum fwd_prio prio;
	enum fwd_dir dir;

	if (!list_empty_careful(&fwd->dispatch))
		return true;
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		for (dir = 0; dir < FWD_DIR_COUNT; dir++)
			if (!list_empty_careful(&fwd->fifo_list[prio][dir]))
				return true;
	return false;
}

static void fwd_insert_request(struct fwd_data *fwd, struct request *rq,
			       blk_insert_t flags, struct list_head *free)
{
	struct request_queue *q = fwd->q;
	enum fwd_prio prio = fwd_rq_prio(rq);
	enum fwd_dir dir = fwd_rq_dir(rq);

	lockdep_assert_held(&fwd->lock);

	/*
	 * A requeued request comes back here; count it only once, and
	 * serve it first.  Since 6.4 the block layer asks for that with
	 * BLK_MQ_INSERT_AT_HEAD; before, requeues arrive without the flag.
	 */
	if (fwd_rq_proc(rq))
		flags |= BLK_MQ_INSERT_AT_HEAD;
	else
		fwd->stats[FWD_STAT_INSERTED]++;

	if (flags & BLK_MQ_INSERT_AT_HEAD) {
		trace_block_rq_insert(rq);
		rq->fifo_time = jiffies;
		fwd_owner_enqueue(fwd, rq);
		list_add(&rq->queuelist, &fwd->dispatch);
		return;
	}

	if (blk_mq_sched_try_insert_merge(q, rq, free)) {
		fwd->stats[FWD_STAT_INSERT_MERGES]++;
		return;
	}

	trace_block_rq_insert(rq);
	elv_rb_add(&fwd->sort_list[prio][dir], rq);
	if (rq_mergeable(rq)) {
		elv_rqhash_add(q, rq);
		if (!q->last_merge)
			q->last_merge = rq;
	}
	rq->fifo_time = jiffies;
	fwd_owner_enqueue(fwd, rq);
	list_add_tail(&rq->queuelist, &fwd->fifo_list[prio][dir]);
	fwd->queued[prio][dir]++;
}

static void fwd_insert_requests(struct blk_mq_hw_ctx *hctx,
				struct list_head *list, blk_insert_t flags)
{
	struct fwd_data *fwd = hctx->queue->elevator->elevator_data;
	LIST_HEAD(free);

	spin_lock(&fwd->lock);
	while (!list_empty(list)) {
		struct request *rq = list_first_entry(list, struct request,
						      queuelist);

		list_del_init(&rq->queuelist);
		fwd_insert_request(fwd, rq, flags, &free);
	}
	spin_unlock(&fwd->lock);

	blk_mq_free_requests(&free);
}

/* Called by blk_mq_rq_ctx_init() when a request is allocated. */
static void fwd_prepare_request(struct request *rq)
{
	rq->elv.priv[0] = NULL;
	rq->elv.priv[1] = NULL;
}

/*
 * Callback from inside blk_mq_free_request(), possibly in interrupt
 * context: only atomics and a plain store of the completion time.  Flush
 * and passthrough requests never reach the scheduler, and requests
 * merged into another one are freed without being dispatched; neither
 * is charged.
 */
static void fwd_finish_request(struct request *rq)
{
	struct fwd_data *fwd = rq->q->elevator->elevator_data;
	struct fwd_proc *p = fwd_rq_proc(rq);

	if (!p)
		return;
	if (fwd_rq_started(rq)) {
		WRITE_ONCE(p->last_done, jiffies);
		atomic_dec(&p->inflight);
		atomic_dec(&fwd->inflight);
		/*
		 * blk-mq tests the restart mark after this callback; order
		 * the decrement before that test, paired with the barrier in
		 * fwd_hold_inflight(), so that a hold never misses its restart.
		 */
		smp_mb__after_atomic();
	}
	rq->elv.priv[0] = NULL;
}

static bool fwd_bio_merge(struct request_queue *q, struct bio *bio,
			  unsigned int nr_segs)
{
	struct fwd_data *fwd = q->elevator->elevator_data;
	struct request *free = NULL;
	bool merged;

	spin_lock(&fwd->lock);
	merged = blk_mq_sched_try_merge(q, bio, nr_segs, &free);
	if (merged)
		fwd->stats[FWD_STAT_BIO_MERGES]++;
	spin_unlock(&fwd->lock);

	if (free)
		blk_mq_free_request(free);

	return merged;
}

/* Looks for a request that @bio can be merged in front of. */
static int fwd_request_merge(struct request_queue *q, struct request **rq,
			     struct bio *bio)
{
	struct fwd_data *fwd = q->elevator->elevator_data;
	enum fwd_prio prio = fwd_ioprio_class(bio->bi_ioprio);
	enum fwd_dir dir = bio_data_dir(bio) == READ ? FWD_READ : FWD_WRITE;
	struct request *found;

	lockdep_assert_held(&fwd->lock);

	if (!fwd->front_merges)
		return ELEVATOR_NO_MERGE;

	found = elv_rb_find(&fwd->sort_list[prio][dir], bio_end_sector(bio));
	if (!found || !elv_bio_merge_ok(found, bio))
		return ELEVATOR_NO_MERGE;

	*rq = found;
	if (blk_discard_mergable(found))
		return ELEVATOR_DISCARD_MERGE;
	return ELEVATOR_FRONT_MERGE;
}

/* A front merge moved the start of @rq: re-sort it. */
static void fwd_request_merged(struct request_queue *q, struct request *rq,
			       enum elv_merge type)
{
	struct fwd_data *fwd = q->elevator->elevator_data;
	struct rb_root *root = &fwd->sort_list[fwd_rq_prio(rq)][fwd_rq_dir(rq)];

	lockdep_assert_held(&fwd->lock);

	if (type != ELEVATOR_FRONT_MERGE)
		return;
	elv_rb_del(root, rq);
	elv_rb_add(root, rq);
}

/*
 * @next was merged into @rq; @rq inherits the earlier insertion time, and
 * @next, which is freed without being dispatched, is no longer charged.
 */
static void fwd_requests_merged(struct request_queue *q, struct request *rq,
				struct request *next)
{
	struct fwd_data *fwd = q->elevator->elevator_data;

	lockdep_assert_held(&fwd->lock);

	if (!list_empty(&rq->queuelist) && !list_empty(&next->queuelist) &&
	    time_before((unsigned long)next->fifo_time,
			(unsigned long)rq->fifo_time)) {
		list_move(&rq->queuelist, &next->queuelist);
		rq->fifo_time = next->fifo_time;
	}
	/*
	 * On an insert merge (blk_mq_sched_try_insert_merge()) @next is the
	 * request being inserted: it was never queued here, so it is in
	 * neither the sort tree nor the counts, and has no owner yet.
	 */
	if (RB_EMPTY_NODE(&next->rb_node)) {
		elv_rqhash_del(q, next);
		if (q->last_merge == next)
			q->last_merge = NULL;
	} else {
		fwd_remove_request(fwd, next);
	}
	if (next->rq_flags & RQF_USE_SCHED)
		next->elv.priv[0] = NULL;
	fwd->stats[FWD_STAT_RQ_MERGES]++;
}

/*
 * Called by __blk_mq_alloc_request().  Synchronous reads are never
 * throttled; everything else may use at most async_depth tags, so that a
 * writeback storm cannot take the tags that readers are waiting for.
 */
static void fwd_limit_depth(blk_opf_t opf, struct blk_mq_alloc_data *data)
{
	struct fwd_data *fwd = data->q->elevator->elevator_data;

	if (op_is_sync(opf) && !op_is_write(opf))
		return;

	data->shallow_depth = fwd_shallow_depth(data,
						READ_ONCE(*fwd_async_depth(fwd)));
}

static unsigned int fwd_default_async_depth(struct request_queue *q)
{
	return max(1UL, q->nr_requests * FWD_ASYNC_PERCENT / 100UL);
}

/*
 * Called from blk_mq_init_sched() and when q->nr_requests changes.  Since
 * 7.0 the block layer scales q->async_depth with nr_requests itself;
 * before, the default follows nr_requests here and a value written by the
 * user is kept within it.  The minimum shallow depth stays 1 because
 * async_depth may be set as low as that at any time.
 */
static void fwd_depth_updated(struct request_queue *q)
{
	struct fwd_data *fwd = q->elevator->elevator_data;
	unsigned int *depth = fwd_async_depth(fwd);

#ifndef FWD_HAVE_Q_ASYNC_DEPTH
	if (!fwd->async_depth_set)
		*depth = fwd_default_async_depth(q);
#endif
	*depth = clamp_t(unsigned int, *depth, 1, q->nr_requests);
	blk_mq_set_min_shallow_depth(q, 1);
}

#ifndef FWD_HAVE_DEPTH_UPDATED_Q
static void fwd_depth_updated_hctx(struct blk_mq_hw_ctx *hctx)
{
	fwd_depth_updated(hctx->queue);
}
#endif

static int fwd_init_sched(struct request_queue *q, struct elevator_queue *eq)
{
	struct fwd_data *fwd;
	enum fwd_prio prio;
	enum fwd_dir dir;
	int i;

	fwd = kvzalloc_node(sizeof(*fwd), GFP_KERNEL, q->node);
	if (!fwd)
		return -ENOMEM;

	fwd->q = q;
	spin_lock_init(&fwd->lock);
	INIT_LIST_HEAD(&fwd->dispatch);
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++) {
		for (dir = 0; dir < FWD_DIR_COUNT; dir++) {
			fwd->sort_list[prio][dir] = RB_ROOT;
			INIT_LIST_HEAD(&fwd->fifo_list[prio][dir]);
		}
	}
	INIT_LIST_HEAD(&fwd->active);
	for (i = 0; i < FWD_NR_PROCS; i++) {
		INIT_LIST_HEAD(&fwd->procs[i].active);
		fwd->procs[i].last_done = jiffies - FWD_GRACE;
	}
	strscpy(fwd->procs[0].comm, "(other)", sizeof(fwd->procs[0].comm));

	fwd->fifo_expire_ms[FWD_READ] = read_expire_ms;
	fwd->fifo_expire_ms[FWD_WRITE] = write_expire_ms;
	for (dir = 0; dir < FWD_DIR_COUNT; dir++)
		fwd->fifo_expire[dir] = msecs_to_jiffies(fwd->fifo_expire_ms[dir]);
	fwd->writes_starved = writes_starved;
	fwd->fifo_batch = fifo_batch;
	fwd->front_merges = 1;
	fwd->fair_slack = fair_slack;
	if ((q->tag_set->flags & BLK_MQ_F_BLOCKING) && q->nr_hw_queues == 1)
		fwd->dispatch_depth = FWD_BLOCKING_DEPTH;
	fwd->prio_aging_ms = prio_aging_ms;
	fwd->prio_aging = msecs_to_jiffies(prio_aging_ms);
	fwd->batch_dir = FWD_READ;
	*fwd_async_depth(fwd) = fwd_default_async_depth(q);

	/* One sweep per queue, whatever the number of hardware queues. */
	blk_queue_flag_set(QUEUE_FLAG_SQ_SCHED, q);

	eq->elevator_data = fwd;
	q->elevator = eq;
	fwd_depth_updated(q);
	return 0;
}

#ifndef FWD_HAVE_INIT_SCHED_EQ
/* Before 6.16 the scheduler allocated its elevator_queue itself. */
static int fwd_init_sched_alloc(struct request_queue *q,
				struct elevator_type *e)
{
	struct elevator_queue *eq;
	int ret;

	eq = elevator_alloc(q, e);
	if (!eq)
		return -ENOMEM;

	ret = fwd_init_sched(q, eq);
	if (ret)
		kobject_put(&eq->kobj);
	return ret;
}
#endif

/*
 * The queue is frozen and quiesced before this is called, so every
 * request has been dispatched and finished; anything left would be lost.
 */
static void fwd_exit_sched(struct elevator_queue *e)
{
	struct fwd_data *fwd = e->elevator_data;
	unsigned int queued = 0;
	enum fwd_prio prio;

	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		queued += fwd_queued_prio(fwd, prio);
	WARN_ONCE(queued || !list_empty(&fwd->dispatch),
		  "fwdsched: exit with %u requests queued\n", queued);
	kvfree(fwd);
}

/* sysfs: unsigned tunables with an inclusive range; bad input is refused. */
static ssize_t fwd_store_uint(struct fwd_data *fwd, unsigned int *var,
			      const char *page, size_t count,
			      unsigned int min, unsigned int max)
{
	unsigned int val;

	if (kstrtouint(page, 10, &val) || val < min || val > max)
		return -EINVAL;

	spin_lock(&fwd->lock);
	WRITE_ONCE(*var, val);
	spin_unlock(&fwd->lock);
	return count;
}

/* sysfs: a time in ms, kept also in jiffies. */
static ssize_t fwd_store_ms(struct fwd_data *fwd, unsigned int *ms,
			    unsigned long *jiffies_var, const char *page,
			    size_t count)
{
	unsigned int val;

	if (kstrtouint(page, 10, &val) || val < 1 || val > FWD_EXPIRE_MAX_MS)
		return -EINVAL;

	spin_lock(&fwd->lock);
	*ms = val;
	*jiffies_var = msecs_to_jiffies(val);
	spin_unlock(&fwd->lock);
	return count;
}

static ssize_t fwd_read_expire_show(struct elevator_queue *e, char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", fwd->fifo_expire_ms[FWD_READ]);
}

static ssize_t fwd_read_expire_store(struct elevator_queue *e,
				     const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;

	return fwd_store_ms(fwd, &fwd->fifo_expire_ms[FWD_READ],
			    &fwd->fifo_expire[FWD_READ], page, count);
}

static ssize_t fwd_write_expire_show(struct elevator_queue *e, char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", fwd->fifo_expire_ms[FWD_WRITE]);
}

static ssize_t fwd_write_expire_store(struct elevator_queue *e,
				      const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;

	return fwd_store_ms(fwd, &fwd->fifo_expire_ms[FWD_WRITE],
			    &fwd->fifo_expire[FWD_WRITE], page, count);
}

static ssize_t fwd_prio_aging_expire_show(struct elevator_queue *e,
					  char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", fwd->prio_aging_ms);
}

static ssize_t fwd_prio_aging_expire_store(struct elevator_queue *e,
					   const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;

	return fwd_store_ms(fwd, &fwd->prio_aging_ms, &fwd->prio_aging,
			    page, count);
}

static ssize_t fwd_writes_starved_show(struct elevator_queue *e, char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", READ_ONCE(fwd->writes_starved));
}

static ssize_t fwd_writes_starved_store(struct elevator_queue *e,
					const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;

	return fwd_store_uint(fwd, &fwd->writes_starved, page, count,
			      0, FWD_WRITES_STARVED_MAX);
}

static ssize_t fwd_fifo_batch_show(struct elevator_queue *e, char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", READ_ONCE(fwd->fifo_batch));
}

static ssize_t fwd_fifo_batch_store(struct elevator_queue *e,
				    const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;

	return fwd_store_uint(fwd, &fwd->fifo_batch, page, count,
			      1, FWD_FIFO_BATCH_MAX);
}

static ssize_t fwd_front_merges_show(struct elevator_queue *e, char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", READ_ONCE(fwd->front_merges));
}

static ssize_t fwd_front_merges_store(struct elevator_queue *e,
				      const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;

	return fwd_store_uint(fwd, &fwd->front_merges, page, count, 0, 1);
}

static ssize_t fwd_fair_slack_show(struct elevator_queue *e, char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", READ_ONCE(fwd->fair_slack));
}

static ssize_t fwd_fair_slack_store(struct elevator_queue *e,
				    const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;

	return fwd_store_uint(fwd, &fwd->fair_slack, page, count,
			      0, FWD_FAIR_SLACK_OFF);
}

static ssize_t fwd_dispatch_depth_show(struct elevator_queue *e, char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", READ_ONCE(fwd->dispatch_depth));
}

static ssize_t fwd_dispatch_depth_store(struct elevator_queue *e,
					const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;

	return fwd_store_uint(fwd, &fwd->dispatch_depth, page, count,
			      0, FWD_DISPATCH_DEPTH_MAX);
}

static ssize_t fwd_async_depth_show(struct elevator_queue *e, char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", READ_ONCE(*fwd_async_depth(fwd)));
}

static ssize_t fwd_async_depth_store(struct elevator_queue *e,
				     const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;
	ssize_t ret;

	ret = fwd_store_uint(fwd, fwd_async_depth(fwd), page, count, 1,
			     fwd->q->nr_requests);
#ifndef FWD_HAVE_Q_ASYNC_DEPTH
	if (ret > 0)
		fwd->async_depth_set = true;
#endif
	return ret;
}

#define FWD_ATTR(name) \
	__ATTR(name, 0644, fwd_##name##_show, fwd_##name##_store)

static struct elv_fs_entry fwd_attrs[] = {
	FWD_ATTR(read_expire),
	FWD_ATTR(write_expire),
	FWD_ATTR(writes_starved),
	FWD_ATTR(fifo_batch),
	FWD_ATTR(front_merges),
	FWD_ATTR(async_depth),
	FWD_ATTR(fair_slack),
	FWD_ATTR(dispatch_depth),
	FWD_ATTR(prio_aging_expire),
	__ATTR_NULL
};

#undef FWD_ATTR

#ifdef CONFIG_BLK_DEBUG_FS
static int fwd_stats_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	u64 stats[FWD_STAT_COUNT];
	int i;

	spin_lock(&fwd->lock);
	memcpy(stats, fwd->stats, sizeof(stats));
	spin_unlock(&fwd->lock);

	for (i = 0; i < FWD_STAT_COUNT; i++)
		seq_printf(m, "%s %llu\n", fwd_stat_names[i], stats[i]);
	return 0;
}

static int fwd_sweep_pos_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	sector_t pos;

	spin_lock(&fwd->lock);
	pos = fwd->sweep_pos;
	spin_unlock(&fwd->lock);

	seq_printf(m, "%llu\n", (unsigned long long)pos);
	return 0;
}

static int fwd_queued_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	unsigned int n[FWD_PRIO_COUNT][FWD_DIR_COUNT], head = 0;
	enum fwd_prio prio;
	struct request *rq;

	spin_lock(&fwd->lock);
	memcpy(n, fwd->queued, sizeof(n));
	list_for_each_entry(rq, &fwd->dispatch, queuelist)
		head++;
	spin_unlock(&fwd->lock);

	seq_printf(m, "reads %u writes %u head %u\n",
		   n[0][FWD_READ] + n[1][FWD_READ] + n[2][FWD_READ],
		   n[0][FWD_WRITE] + n[1][FWD_WRITE] + n[2][FWD_WRITE], head);
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		seq_printf(m, "%s reads %u writes %u\n", fwd_prio_names[prio],
			   n[prio][FWD_READ], n[prio][FWD_WRITE]);
	return 0;
}

static int fwd_batch_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;

	spin_lock(&fwd->lock);
	seq_printf(m, "dir %s count %u starved %u\n",
		   fwd_dir_names[fwd->batch_dir], fwd->batch_count,
		   fwd->starved);
	spin_unlock(&fwd->lock);
	return 0;
}

static u64 fwd_jiffies_to_us(u64 j)
{
	return div_u64(jiffies64_to_nsecs(j), NSEC_PER_USEC);
}

static unsigned int fwd_idle_ms(unsigned long last_used)
{
	return jiffies_to_msecs(jiffies - last_used);
}

static bool fwd_proc_shown(struct fwd_proc *p)
{
	return p->reqs[FWD_READ] || p->reqs[FWD_WRITE] || p->queued ||
	       atomic_read(&p->inflight);
}

static void fwd_proc_show(struct seq_file *m, struct fwd_proc *p)
{
	enum fwd_dir dir;

	seq_printf(m, "%d", p->tgid);
	for (dir = 0; dir < FWD_DIR_COUNT; dir++)
		seq_printf(m, " %llu %llu %llu %llu", p->reqs[dir],
			   p->sectors[dir], fwd_jiffies_to_us(p->wait_sum[dir]),
			   fwd_jiffies_to_us(p->wait_max[dir]));
	seq_printf(m, " %u %d %llu %s %llu %u %s\n", p->queued,
		   atomic_read(&p->inflight), p->max_passed,
		   fwd_prio_names[p->prio], p->vtime, fwd_idle_ms(p->last_used),
		   p->comm);
}

/*
 * debugfs "procs": one line per process that dispatched or has requests
 * pending since the counters were reset.  Writing "reset" zeroes the
 * counters (not the scheduling state); anything else is refused.
 */
static int fwd_procs_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	int i;

	seq_puts(m, "# tgid rd_reqs rd_sectors rd_wait_us rd_wait_max_us wr_reqs wr_sectors wr_wait_us wr_wait_max_us queued inflight max_passed class vtime idle_ms comm\n");
	seq_printf(m, "# sectors of 512 bytes; waits from insertion to dispatch, summed and maximum, in us with a resolution of %u us; max_passed in dispatches; vtime in 1/%u requests\n",
		   jiffies_to_usecs(1), FWD_VUNIT);
	spin_lock(&fwd->lock);
	for (i = 0; i < FWD_NR_PROCS; i++)
		if (fwd_proc_shown(&fwd->procs[i]))
			fwd_proc_show(m, &fwd->procs[i]);
	spin_unlock(&fwd->lock);
	return 0;
}

static ssize_t fwd_procs_write(void *data, const char __user *buf,
			       size_t count, loff_t *ppos)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	char cmd[8];
	int i;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, buf, count))
		return -EFAULT;
	cmd[count] = '\0';
	if (!sysfs_streq(cmd, "reset"))
		return -EINVAL;

	spin_lock(&fwd->lock);
	for (i = 0; i < FWD_NR_PROCS; i++) {
		struct fwd_proc *p = &fwd->procs[i];

		memset(p->reqs, 0, sizeof(p->reqs));
		memset(p->sectors, 0, sizeof(p->sectors));
		memset(p->wait_sum, 0, sizeof(p->wait_sum));
		memset(p->wait_max, 0, sizeof(p->wait_max));
		p->max_passed = 0;
	}
	for (i = 0; i < FWD_NR_THREADS; i++)
		fwd->threads[i].reqs = 0;
	spin_unlock(&fwd->lock);
	return count;
}

static int fwd_threads_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	int i;

	seq_puts(m, "# pid tgid reqs queued idle_ms\n");
	spin_lock(&fwd->lock);
	for (i = 0; i < FWD_NR_THREADS; i++) {
		struct fwd_thread *t = &fwd->threads[i];

		if (t->reqs || t->queued)
			seq_printf(m, "%d %d %llu %u %u\n", t->pid, t->tgid,
				   t->reqs, t->queued,
				   fwd_idle_ms(t->last_used));
	}
	spin_unlock(&fwd->lock);
	return 0;
}

/*
 * Jain's index, (sum x)^2 / (n * sum x^2), times 1e6, rounded down.  The
 * values are scaled down until they fit in 24 bits so that nothing
 * overflows; below that the result is exact.
 */
static u64 fwd_jain(const u64 *x, unsigned int n)
{
	u64 max = 0, sum = 0, sq = 0;
	unsigned int i, shift = 0;

	for (i = 0; i < n; i++)
		max = max(max, x[i]);
	while ((max >> shift) >= (1ULL << 24))
		shift++;
	for (i = 0; i < n; i++) {
		u64 v = x[i] >> shift;

		sum += v;
		sq += v * v;
	}
	if (!sq)
		return 0;
	return mul_u64_u64_div_u64(sum, sum * 1000000, (u64)n * sq);
}

/*
 * debugfs "fairness": Jain's index of the requests dispatched (since the
 * last reset) by the processes, and by the threads, that dispatched
 * within the last FWD_ACTIVE_WINDOW.
 */
static int fwd_fairness_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	u64 px[FWD_NR_PROCS], tx[FWD_NR_THREADS];
	unsigned int np = 0, nt = 0;
	int i;

	spin_lock(&fwd->lock);
	for (i = 0; i < FWD_NR_PROCS; i++) {
		struct fwd_proc *p = &fwd->procs[i];
		u64 reqs = p->reqs[FWD_READ] + p->reqs[FWD_WRITE];

		if (reqs && time_before(jiffies,
					p->last_used + FWD_ACTIVE_WINDOW))
			px[np++] = reqs;
	}
	for (i = 0; i < FWD_NR_THREADS; i++) {
		struct fwd_thread *t = &fwd->threads[i];

		if (t->reqs && time_before(jiffies,
					   t->last_used + FWD_ACTIVE_WINDOW))
			tx[nt++] = t->reqs;
	}
	spin_unlock(&fwd->lock);

	seq_printf(m, "window_ms %u\n", jiffies_to_msecs(FWD_ACTIVE_WINDOW));
	seq_printf(m, "procs %u\nprocs_jain %llu\n", np, fwd_jain(px, np));
	seq_printf(m, "threads %u\nthreads_jain %llu\n", nt, fwd_jain(tx, nt));
	return 0;
}

#define FWD_DEBUGFS_LIST(name, list_expr)				\
static struct list_head *fwd_##name##_list(struct seq_file *m)		\
{									\
	struct request_queue *q = m->private;				\
	struct fwd_data *fwd = q->elevator->elevator_data;		\
									\
	return list_expr;						\
}									\
static void *fwd_##name##_start(struct seq_file *m, loff_t *pos)	\
	__acquires(&fwd->lock)						\
{									\
	struct request_queue *q = m->private;				\
	struct fwd_data *fwd = q->elevator->elevator_data;		\
									\
	spin_lock(&fwd->lock);						\
	return seq_list_start(fwd_##name##_list(m), *pos);		\
}									\
static void *fwd_##name##_next(struct seq_file *m, void *v, loff_t *pos) \
{									\
	return seq_list_next(v, fwd_##name##_list(m), pos);		\
}									\
static void fwd_##name##_stop(struct seq_file *m, void *v)		\
	__releases(&fwd->lock)						\
{									\
	struct request_queue *q = m->private;				\
	struct fwd_data *fwd = q->elevator->elevator_data;		\
									\
	spin_unlock(&fwd->lock);					\
}									\
static const struct seq_operations fwd_##name##_seq_ops = {		\
	.start	= fwd_##name##_start,					\
	.next	= fwd_##name##_next,					\
	.stop	= fwd_##name##_stop,					\
	.show	= blk_mq_debugfs_rq_show,				\
}

FWD_DEBUGFS_LIST(read_fifo, &fwd->fifo_list[FWD_PRIO_BE][FWD_READ]);
FWD_DEBUGFS_LIST(write_fifo, &fwd->fifo_list[FWD_PRIO_BE][FWD_WRITE]);
FWD_DEBUGFS_LIST(rt_read_fifo, &fwd->fifo_list[FWD_PRIO_RT][FWD_READ]);
FWD_DEBUGFS_LIST(rt_write_fifo, &fwd->fifo_list[FWD_PRIO_RT][FWD_WRITE]);
FWD_DEBUGFS_LIST(idle_read_fifo, &fwd->fifo_list[FWD_PRIO_IDLE][FWD_READ]);
FWD_DEBUGFS_LIST(idle_write_fifo, &fwd->fifo_list[FWD_PRIO_IDLE][FWD_WRITE]);
FWD_DEBUGFS_LIST(dispatch, &fwd->dispatch);
#undef FWD_DEBUGFS_LIST

static const struct blk_mq_debugfs_attr fwd_queue_debugfs_attrs[] = {
	{"stats", 0400, fwd_stats_show},
	{"sweep_pos", 0400, fwd_sweep_pos_show},
	{"queued", 0400, fwd_queued_show},
	{"batch", 0400, fwd_batch_show},
	{"procs", 0600, fwd_procs_show, fwd_procs_write},
	{"threads", 0400, fwd_threads_show},
	{"fairness", 0400, fwd_fairness_show},
	{"read_fifo_list", 0400, .seq_ops = &fwd_read_fifo_seq_ops},
	{"write_fifo_list", 0400, .seq_ops = &fwd_write_fifo_seq_ops},
	{"rt_read_fifo_list", 0400, .seq_ops = &fwd_rt_read_fifo_seq_ops},
	{"rt_write_fifo_list", 0400, .seq_ops = &fwd_rt_write_fifo_seq_ops},
	{"idle_read_fifo_list", 0400, .seq_ops = &fwd_idle_read_fifo_seq_ops},
	{"idle_write_fifo_list", 0400, .seq_ops = &fwd_idle_write_fifo_seq_ops},
	{"dispatch_list", 0400, .seq_ops = &fwd_dispatch_seq_ops},
	{},
};
#endif /* CONFIG_BLK_DEBUG_FS */
static struct elevator_type fwd_sched = {
	.ops = {
#ifdef FWD_HAVE_DEPTH_UPDATED_Q
		.depth_updated		= fwd_depth_updated,
#else
		.depth_updated		= fwd_depth_updated_hctx,
#endif
		.limit_depth		= fwd_limit_depth,
		.insert_requests	= fwd_insert_requests,
		.dispatch_request	= fwd_dispatch_request,
		.prepare_request	= fwd_prepare_request,
		.finish_request		= fwd_finish_request,
		.next_request		= elv_rb_latter_request,
		.former_request		= elv_rb_former_request,
		.bio_merge		= fwd_bio_merge,
		.request_merge		= fwd_request_merge,
		.requests_merged	= fwd_requests_merged,
		.request_merged		= fwd_request_merged,
		.has_work		= fwd_has_work,
#ifdef FWD_HAVE_INIT_SCHED_EQ
		.init_sched		= fwd_init_sched,
#else
		.init_sched		= fwd_init_sched_alloc,
#endif
		.exit_sched		= fwd_exit_sched,
	},

#ifdef CONFIG_BLK_DEBUG_FS
	.queue_debugfs_attrs = fwd_queue_debugfs_attrs,
#endif
	.elevator_attrs = fwd_attrs,
	.elevator_name = "fwdsched",
	.elevator_owner = THIS_MODULE,
};
MODULE_ALIAS("fwdsched-iosched");

static int __init fwd_init(void)
{
	return elv_register(&fwd_sched);
}

static void __exit fwd_exit(void)
{
	elv_unregister(&fwd_sched);
}

module_init(fwd_init);
module_exit(fwd_exit);

MODULE_AUTHOR("The fwdsched authors");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Forward-sweep (C-LOOK) I/O scheduler for flash storage");
