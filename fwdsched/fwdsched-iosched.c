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
 * and reads cannot starve writes (see fwd_choose_dir()).  I/O priority
 * classes are served in order, real-time first.
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
#include <linux/jiffies.h>
#include <linux/ioprio.h>
#ifndef FWD_NO_FAIRNESS
#include <linux/hashtable.h>
#include <linux/ktime.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#endif
#ifndef FWD_NO_HOLDS
#include <uapi/linux/major.h>
#endif
#ifndef FWD_NO_ANTICIPATION
#include <linux/hrtimer.h>
#include <linux/rcupdate.h>
#endif
#ifndef FWD_NO_DEBUGFS
#include <linux/math64.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>
#endif

#include <trace/events/block.h>

#include "elevator.h"
#include "blk.h"
#include "blk-mq.h"
#ifndef FWD_NO_DEBUGFS
#include "blk-mq-debugfs.h"
#endif
#include "blk-mq-sched.h"
/*
 * Out of tree only (tools/patches/mkpatches drops this comment and the
 * include): compat.h supplies what older kernels lack, and the
 * FWD_NO_<feature> conditionals mark the code that each step of the
 * upstream series adds.  The module defines none of them.
 */
#include "compat.h"

#define CREATE_TRACE_POINTS
#include <trace/events/fwdsched.h>

/* Defaults of the tunables; see Documentation/block/fwdsched-iosched.rst. */
static const unsigned int read_expire_ms = 500;	  /* read deadline */
static const unsigned int write_expire_ms = 5000; /* write deadline */
static const unsigned int writes_starved = 2;	  /* read batches per write batch */
static const unsigned int fifo_batch = 16;	  /* requests per batch */
#ifndef FWD_NO_AGING
static const unsigned int prio_aging_ms = 10000;  /* lower class aging */
#endif
#ifndef FWD_NO_FAIRNESS
static const unsigned int fair_slack = 8;	  /* units of service of lead */
#endif
#ifndef FWD_NO_ANTICIPATION
static const unsigned int anticipate_us = 4000;	  /* longest think time waited for */
#endif

/* Limits of the tunables. */
#define FWD_EXPIRE_MAX_MS	600000U
#define FWD_WRITES_STARVED_MAX	64U
#define FWD_FIFO_BATCH_MAX	1024U
#ifndef FWD_NO_FAIRNESS
/* fair_slack: this value, the largest, turns enforcement off. */
#define FWD_FAIR_SLACK_OFF	4096U
#endif
#ifndef FWD_NO_HOLDS
#define FWD_DISPATCH_DEPTH_MAX	4096U
#endif
#ifndef FWD_NO_ANTICIPATION
#define FWD_ANTICIPATE_MAX_US	100000U
#endif

#ifndef FWD_NO_HOLDS
/*
 * Default dispatch_depth of an MMC card without command queueing: one
 * request on the card and the next being prepared.  The MMC block driver
 * gives a command-queueing (CQE) host one tag per hardware slot (at most
 * 32) and every other host its fixed depth of 64.  Hosts with software
 * queueing (HSQ) also get 64 and cannot be told apart here; their driver
 * turns away requests beyond its own depth (2 before 6.5, up to 5 after),
 * so the default of 2 costs them at most that difference.
 */
#define FWD_MMC_DEPTH		2U
#define FWD_MMC_CQ_MAX_TAGS	32U
#endif

#ifndef FWD_HAVE_Q_ASYNC_DEPTH
/* Default async_depth before 7.0, in percent of nr_requests. */
#define FWD_ASYNC_PERCENT	75UL
#endif

#ifndef FWD_NO_FAIRNESS
/*
 * Requests of the sweep examined for an eligible one before falling back
 * to the oldest request of the least served process, see fwd_sweep_fair().
 */
#define FWD_SCAN_MAX		16

/* Think time: weight of the running mean, and cap of one sample. */
#define FWD_TTIME_WEIGHT	8
#define FWD_TTIME_CAP_NS	(50 * NSEC_PER_MSEC)
/* Samples before the mean is trusted. */
#define FWD_TTIME_SAMPLES	2
/*
 * A process stays backlogged after its last completion for twice its
 * mean think time plus this margin, at most FWD_GRACE_MAX_NS, which is
 * also the grace of a process whose think time is not known yet.
 */
#define FWD_GRACE_MARGIN_NS	(250 * NSEC_PER_USEC)
#define FWD_GRACE_MAX_NS	(20 * NSEC_PER_MSEC)

/* Processes (per class) kept in the table before idle ones are retired. */
#define FWD_PROCS_SOFT_MAX	1024U
/* An entry idle this long is retired; it counts in "fairness" until then. */
#define FWD_ACTIVE_WINDOW	(10 * HZ)
#define FWD_PROC_HASH_BITS	8
#endif

#ifndef FWD_NO_DEBUGFS
/* Threads tracked at most while thread accounting is on (debugfs). */
#define FWD_THREADS_MAX		4096U
#endif

enum fwd_dir {
	FWD_READ,
	FWD_WRITE,
	FWD_DIR_COUNT
};

#ifndef FWD_NO_DEBUGFS
static const char *const fwd_dir_names[FWD_DIR_COUNT] = {
	[FWD_READ]	= "read",
	[FWD_WRITE]	= "write",
};
#endif

/* The tunables that are times: kept in ms and in jiffies. */
enum fwd_time {
	FWD_TIME_READ_EXPIRE,		/* deadline of a read */
	FWD_TIME_WRITE_EXPIRE,		/* deadline of a write */
#ifndef FWD_NO_AGING
	FWD_TIME_PRIO_AGING,		/* wait of a lower class */
#endif
	FWD_TIME_COUNT
};

/* Deadline of a request of each direction, see fwd_data.time[]. */
static const enum fwd_time fwd_expire_time[FWD_DIR_COUNT] = {
	[FWD_READ]	= FWD_TIME_READ_EXPIRE,
	[FWD_WRITE]	= FWD_TIME_WRITE_EXPIRE,
};

/* I/O priority classes, served in this order. */
enum fwd_prio {
	FWD_PRIO_RT,
	FWD_PRIO_BE,
	FWD_PRIO_IDLE,
	FWD_PRIO_COUNT
};

#ifndef FWD_NO_DEBUGFS
static const char *const fwd_prio_names[FWD_PRIO_COUNT] = {
	[FWD_PRIO_RT]	= "rt",
	[FWD_PRIO_BE]	= "be",
	[FWD_PRIO_IDLE]	= "idle",
};
#endif

#ifndef FWD_NO_FAIRNESS
/*
 * Service is counted in units: a request costs one unit for the command
 * and one more for each 32 KiB it moves, an estimate of a flash device's
 * time for the access and for the transfer; see also FWD_ASYNC_CHARGE.
 * A unit is FWD_VUNIT vtime at the default priority level; level l costs
 * fwd_level_cost[l] per unit, so level 0 gets twice the share of level 4,
 * and level 7 a quarter.
 */
#define FWD_VUNIT		16U
#define FWD_UNIT_SECTORS_SHIFT	6	/* 32 KiB */
/*
 * A request that no one waits for (writeback: a write without REQ_SYNC)
 * is charged this many times its units, as BFQ charges asynchronous I/O,
 * so that a process reading while writeback runs keeps most of the device.
 */
#define FWD_ASYNC_CHARGE	3U
static const u8 fwd_level_cost[IOPRIO_NR_LEVELS] = {
	8, 9, 11, 13, 16, 21, 32, 64
};
#endif

#ifndef FWD_NO_DEBUGFS
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
	FWD_STAT_FAIR_SWITCHES,
	FWD_STAT_FAIR_FALLBACKS,
	FWD_STAT_FAIR_IDLE,
	FWD_STAT_FAIR_HOLDS,
	FWD_STAT_DEPTH_HOLDS,
	FWD_STAT_ANTIC_HOLDS,
	FWD_STAT_ANTIC_HITS,
	FWD_STAT_ANTIC_TIMEOUTS,
	FWD_STAT_EMPTY_DISPATCHES,
	FWD_STAT_PROCS_CREATED,
	FWD_STAT_PROCS_RETIRED,
	FWD_STAT_PROCS_NOMEM,
	FWD_STAT_COUNT
};

static const char *const fwd_stat_names[FWD_STAT_COUNT] = {
	[FWD_STAT_INSERTED]	  = "inserted",
	[FWD_STAT_DISPATCHED]	  = "dispatched",
	[FWD_STAT_FORWARD]	  = "forward",
	[FWD_STAT_BACKWARD]	  = "backward",
	[FWD_STAT_WRAPS]	  = "wraps",
	[FWD_STAT_EXPIRED]	  = "expired",
	[FWD_STAT_HEAD]		  = "head",
	[FWD_STAT_BIO_MERGES]	  = "bio_merges",
	[FWD_STAT_RQ_MERGES]	  = "rq_merges",
	[FWD_STAT_INSERT_MERGES]  = "insert_merges",
	[FWD_STAT_AGED]		  = "aged",
	[FWD_STAT_FAIR_SKIPS]	  = "fair_skips",
	[FWD_STAT_DETOURS]	  = "detours",
	[FWD_STAT_FAIR_SWITCHES]  = "fair_switches",
	[FWD_STAT_FAIR_FALLBACKS] = "fair_fallbacks",
	[FWD_STAT_FAIR_IDLE]	  = "fair_idle",
	[FWD_STAT_FAIR_HOLDS]	  = "fair_holds",
	[FWD_STAT_DEPTH_HOLDS]	  = "depth_holds",
	[FWD_STAT_ANTIC_HOLDS]	  = "antic_holds",
	[FWD_STAT_ANTIC_HITS]	  = "antic_hits",
	[FWD_STAT_ANTIC_TIMEOUTS] = "antic_timeouts",
	[FWD_STAT_EMPTY_DISPATCHES] = "empty_dispatches",
	[FWD_STAT_PROCS_CREATED]  = "procs_created",
	[FWD_STAT_PROCS_RETIRED]  = "procs_retired",
	[FWD_STAT_PROCS_NOMEM]	  = "procs_nomem",
};
#endif

#ifndef FWD_NO_ANTICIPATION
/*
 * fwd_data.hold while anticipating: until the anticipated process's next
 * request, or the anticipation timer, whichever comes first.
 */
#define FWD_HOLD_ANTIC_ON	(FWD_DISPATCH_DEPTH_MAX + 1)
#endif

#ifndef FWD_NO_FAIRNESS
/* Low bits of rq->elv.priv[0], which points to the owning fwd_proc. */
#define FWD_RQ_STARTED		1UL	/* dispatched (and charged) once */
#define FWD_RQ_FLAGS		1UL

/*
 * Every request is charged to its process in its I/O priority class
 * (struct fwd_proc).  The sweep takes only requests of processes that are
 * not more than fair_slack units of service ahead of the least served
 * backlogged process of the class (see fwd_fair_limit()).
 *
 * A process in one I/O priority class: the unit of fairness.  A process
 * with requests in two classes has two entries.  Entries live in a hash
 * table keyed by the thread group's struct pid (which cannot be reused
 * while the entry holds a reference), so a new process with a recycled
 * id starts with fresh service.  Entries are retired once idle, see
 * fwd_procs_retire().
 */
struct fwd_proc {
	struct hlist_node hash;		/* fwd_data.procs */
	struct list_head lru;		/* fwd_data.lru, by last insertion */
	struct pid *pid;		/* NULL: a fallback entry */
	enum fwd_prio prio;
	u64 serial;			/* creation order; breaks ties */

	/* Service received, in vtime (FWD_VUNIT per unit at level 4). */
	u64 vtime;
	/*
	 * In fwd_data.ready[prio][dir] while requests of that direction
	 * wait in the sweep; in fwd_data.waiting[prio] while backlogged
	 * with nothing waiting there (between two requests).
	 */
	struct rb_node ready_node[FWD_DIR_COUNT];
	struct rb_node waiting_node;
	/* In fwd_data.expire[prio][dir], keyed by its oldest request. */
	struct rb_node expire_node[FWD_DIR_COUNT];
	/* Requests waiting in the sweep, oldest first (rq->queuelist). */
	struct list_head fifo[FWD_DIR_COUNT];
	unsigned int queued[FWD_DIR_COUNT];
	/* Requests waiting in the head (requeue) list. */
	unsigned int head_queued;

#ifndef FWD_NO_DEBUGFS
	/* fwd_data.seq when its oldest waiting request began to wait. */
	u64 wait_seq;
	/* Most dispatches of others while it had a request waiting. */
	u64 max_passed;
#endif

	/* Think time: mean gap from a completion to the next request. */
	u64 ttime_ns;
	unsigned int ttime_samples;
#ifndef FWD_NO_ANTICIPATION
	/* A last_done_ns whose grace was given up, see fwd_antic_timedout(). */
	u64 cut_done_ns;
#endif
	unsigned long last_used;	/* jiffies of the last insertion */

	/* Written by the completion path. */
	u64 last_done_ns;		/* ktime of the last completion */
	atomic_t inflight;		/* dispatched, not yet finished */

#ifndef FWD_NO_DEBUGFS
	/* Statistics for debugfs "procs". */
	u64 reqs[FWD_DIR_COUNT];	/* requests dispatched */
	u64 sectors[FWD_DIR_COUNT];	/* 512-byte sectors dispatched */
	u64 wait_sum[FWD_DIR_COUNT];	/* insert to dispatch, in jiffies */
	unsigned long wait_max[FWD_DIR_COUNT];	/* in jiffies */
	char comm[TASK_COMM_LEN];
#endif
#ifndef FWD_NO_ANTICIPATION
	struct rcu_head rcu;
#endif
};
#endif

#ifndef FWD_NO_DEBUGFS
/* A thread, while thread accounting is on (debugfs "threads"). */
struct fwd_thread {
	struct hlist_node hash;
	pid_t pid;
	pid_t tgid;
	unsigned long last_used;	/* jiffies of the last dispatch */
	u64 reqs;			/* requests dispatched */
};
#endif

struct fwd_data {
	struct request_queue *q;

	/*
	 * Protects the fields below, but for those marked as touched by
	 * completions.  Taken in process context only, never by a
	 * completion or a timer.
	 */
	spinlock_t lock;

	/* At-head insertions and requeues, served before the sweep. */
	struct list_head dispatch;

	/* Waiting requests sorted by start sector, per class and direction. */
	struct rb_root sort_list[FWD_PRIO_COUNT][FWD_DIR_COUNT];
	unsigned int queued[FWD_PRIO_COUNT][FWD_DIR_COUNT];
	unsigned int nr_queued;		/* all of them, for fwd_has_work() */

#ifdef FWD_NO_FAIRNESS
	/* Waiting requests in insertion order, per class and direction. */
	struct list_head fifo_list[FWD_PRIO_COUNT][FWD_DIR_COUNT];
#else
	/* Processes by their oldest waiting request, see fwd_oldest(). */
	struct rb_root_cached expire[FWD_PRIO_COUNT][FWD_DIR_COUNT];
	/* Processes with requests waiting, by service. */
	struct rb_root_cached ready[FWD_PRIO_COUNT][FWD_DIR_COUNT];
	/* Backlogged processes with nothing waiting, by service. */
	struct rb_root_cached waiting[FWD_PRIO_COUNT];
	/* Processes in ready[prio][] or waiting[prio]. */
	unsigned int nr_backlogged[FWD_PRIO_COUNT];
	/* The least service of the class's backlogged processes seen. */
	u64 vclock[FWD_PRIO_COUNT];
	/* Least service of a process with nothing waiting, see fwd_fair_idle_floor(). */
	u64 floor[FWD_PRIO_COUNT];
#endif

	/* End sector of the last dispatched request. */
	sector_t sweep_pos;
	enum fwd_dir batch_dir;
	/* Requests dispatched in the current batch. */
	unsigned int batch_count;
	/* Read batches served since the last write batch. */
	unsigned int starved;
#ifndef FWD_NO_DEBUGFS
	/* Requests dispatched since the scheduler was selected. */
	u64 seq;

	u64 stats[FWD_STAT_COUNT];
#endif

#ifndef FWD_NO_FAIRNESS
	DECLARE_HASHTABLE(procs, FWD_PROC_HASH_BITS);
	struct list_head lru;		/* all entries, least recently used first */
	unsigned int nr_procs;
	u64 proc_serial;
	struct fwd_proc *last_proc;	/* the entry of the last insertion */
	/* Entries used when one cannot be allocated, per class. */
	struct fwd_proc nomem[FWD_PRIO_COUNT];
#endif

#ifndef FWD_NO_DEBUGFS
	/* Thread accounting, while on (NULL: off), see fwd_threads_write(). */
	DECLARE_HASHTABLE(threads, FWD_PROC_HASH_BITS);
	bool threads_on;
	unsigned int nr_threads;
	struct fwd_thread threads_other;

	/* The process a fairness hold waits for (for tracing only). */
	struct fwd_proc *hold_proc;
#endif
#ifndef FWD_NO_ANTICIPATION
	/*
	 * The process the next anticipation waits for, see fwd_hold_next(),
	 * and its think-time window (both read by completions, see
	 * fwd_hold_done()); the timer's delay.
	 */
	struct fwd_proc *antic_proc;
	u64 antic_window_ns;
	u64 antic_delay_ns;
#ifndef FWD_NO_DEBUGFS
	/* The process of the anticipation in effect, for the timer's trace. */
	pid_t antic_nr;
#endif
	/* Set by the anticipation timer when it ended a hold. */
	bool antic_timedout;
	/* Set by an insertion that ends the anticipation. */
	bool antic_arrived;
#endif

	/* Tunables. */
	unsigned int time_ms[FWD_TIME_COUNT];
	unsigned long time[FWD_TIME_COUNT];		/* in jiffies */
	unsigned int writes_starved;
	unsigned int fifo_batch;
	unsigned int front_merges;
#ifndef FWD_NO_FAIRNESS
	unsigned int fair_slack;			/* in units */
#endif
#ifndef FWD_NO_HOLDS
	unsigned int dispatch_depth;			/* 0: no limit */
#endif
#ifndef FWD_NO_ANTICIPATION
	unsigned int anticipate_us;			/* 0: off */
#endif
#ifndef FWD_HAVE_Q_ASYNC_DEPTH
	/*
	 * Before 7.0 the scheduler keeps the async depth itself.  It is
	 * FWD_ASYNC_PERCENT of nr_requests and follows nr_requests when
	 * that changes, unless the user wrote async_depth.
	 */
	unsigned int async_depth;
	bool async_depth_set;
#endif

#ifndef FWD_NO_HOLDS
	/*
	 * Touched by every completion; kept off the lock's cache line.
	 * hold, what the scheduler waits for before it dispatches again
	 * (requests at the head are served anyway), is written under the
	 * lock and cleared by cmpxchg() where the hold ends.  0: nothing,
	 * dispatch at will.  1 .. FWD_DISPATCH_DEPTH_MAX: a completion that
	 * leaves fewer requests than that in flight (the completion runs
	 * the queue).
	 */
	atomic_t inflight ____cacheline_aligned_in_smp;
	unsigned int hold;
#endif
#ifndef FWD_NO_ANTICIPATION
	/*
	 * Anticipations started by a completion, and those of them taken
	 * back at once as stale (see fwd_hold_done()); anticipations ended
	 * by their timer.  Counted without the lock, added to the stats.
	 */
	atomic_t antic_starts;
	atomic_t antic_taken_back;
	atomic_t antic_timeouts;
#endif
#ifndef FWD_NO_ANTICIPATION
	struct hrtimer antic_timer;
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

static inline unsigned int *fwd_async_depth(struct fwd_data *fwd)
{
#ifdef FWD_HAVE_Q_ASYNC_DEPTH
	return &fwd->q->async_depth;
#else
	return &fwd->async_depth;
#endif
}

#ifndef FWD_NO_FAIRNESS
/* Service of @rq in vtime, see FWD_VUNIT. */
static u64 fwd_rq_cost(struct request *rq)
{
	unsigned short ioprio = req_get_ioprio(rq);
	unsigned int units = 1;

	if (req_op(rq) == REQ_OP_READ || req_op(rq) == REQ_OP_WRITE)
		units += blk_rq_sectors(rq) >> FWD_UNIT_SECTORS_SHIFT;
	if (!rq_is_sync(rq))
		units *= FWD_ASYNC_CHARGE;
	if (IOPRIO_PRIO_CLASS(ioprio) == IOPRIO_CLASS_NONE)
		return (u64)units * FWD_VUNIT;
	return (u64)units * fwd_level_cost[IOPRIO_PRIO_LEVEL(ioprio)];
}

/*
 * The process a request is charged to, or NULL for a request that has
 * none yet.  Only requests that the block layer prepared for the
 * scheduler have valid elv.priv[] (flush and passthrough requests bypass
 * it).
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

#ifndef FWD_NO_DEBUGFS
static inline pid_t fwd_proc_nr(struct fwd_proc *p)
{
	return p && p->pid ? pid_nr(p->pid) : 0;
}
#endif

/* ---------------------------------------------------------------- trees */

/*
 * The trees of processes by service: ready[][] and waiting[] link a
 * struct fwd_proc through one of its rb_nodes, given by its offset.
 */
#define FWD_READY_NODE(dir)	(offsetof(struct fwd_proc, ready_node) + \
				 (dir) * sizeof(struct rb_node))
#define FWD_WAITING_NODE	offsetof(struct fwd_proc, waiting_node)

static inline struct rb_node *fwd_proc_node(struct fwd_proc *p, size_t off)
{
	return (struct rb_node *)((char *)p + off);
}

static inline struct fwd_proc *fwd_node_proc(struct rb_node *node,
					     size_t off)
{
	return (struct fwd_proc *)((char *)node - off);
}

/* Orders processes by service, then by age. */
static bool fwd_vtime_less(struct fwd_proc *a, struct fwd_proc *b)
{
	return a->vtime < b->vtime ||
	       (a->vtime == b->vtime && a->serial < b->serial);
}

static void fwd_vtree_insert(struct rb_root_cached *root, struct fwd_proc *p,
			     size_t off)
{
	struct rb_node **link = &root->rb_root.rb_node, *parent = NULL;
	bool leftmost = true;

	while (*link) {
		parent = *link;
		if (fwd_vtime_less(p, fwd_node_proc(parent, off))) {
			link = &parent->rb_left;
		} else {
			link = &parent->rb_right;
			leftmost = false;
		}
	}
	rb_link_node(fwd_proc_node(p, off), parent, link);
	rb_insert_color_cached(fwd_proc_node(p, off), root, leftmost);
}

static void fwd_vtree_erase(struct rb_root_cached *root, struct fwd_proc *p,
			    size_t off)
{
	rb_erase_cached(fwd_proc_node(p, off), root);
	RB_CLEAR_NODE(fwd_proc_node(p, off));
}

static void fwd_ready_add(struct fwd_data *fwd, struct fwd_proc *p,
			  enum fwd_dir dir)
{
	fwd_vtree_insert(&fwd->ready[p->prio][dir], p, FWD_READY_NODE(dir));
}

static void fwd_ready_del(struct fwd_data *fwd, struct fwd_proc *p,
			  enum fwd_dir dir)
{
	fwd_vtree_erase(&fwd->ready[p->prio][dir], p, FWD_READY_NODE(dir));
}

static void fwd_waiting_add(struct fwd_data *fwd, struct fwd_proc *p)
{
	fwd_vtree_insert(&fwd->waiting[p->prio], p, FWD_WAITING_NODE);
}

static void fwd_waiting_del(struct fwd_data *fwd, struct fwd_proc *p)
{
	fwd_vtree_erase(&fwd->waiting[p->prio], p, FWD_WAITING_NODE);
}

static struct fwd_proc *fwd_first_proc(struct rb_root_cached *root,
				       size_t off)
{
	struct rb_node *node = rb_first_cached(root);

	return node ? fwd_node_proc(node, off) : NULL;
}

static inline struct fwd_proc *fwd_first_ready(struct fwd_data *fwd,
					       enum fwd_prio prio,
					       enum fwd_dir dir)
{
	return fwd_first_proc(&fwd->ready[prio][dir], FWD_READY_NODE(dir));
}

static inline struct fwd_proc *fwd_first_waiting(struct fwd_data *fwd,
						 enum fwd_prio prio)
{
	return fwd_first_proc(&fwd->waiting[prio], FWD_WAITING_NODE);
}

static inline struct request *fwd_proc_oldest(struct fwd_proc *p,
					      enum fwd_dir dir)
{
	return list_first_entry(&p->fifo[dir], struct request, queuelist);
}

/* expire[prio][dir]: processes by the insertion time of their oldest request. */
static void fwd_expire_add(struct fwd_data *fwd, struct fwd_proc *p,
			   enum fwd_dir dir)
{
	struct rb_root_cached *root = &fwd->expire[p->prio][dir];
	struct rb_node **link = &root->rb_root.rb_node, *parent = NULL;
	unsigned long t = fwd_proc_oldest(p, dir)->fifo_time;
	bool leftmost = true;

	while (*link) {
		struct fwd_proc *o;
		unsigned long ot;

		parent = *link;
		o = rb_entry(parent, struct fwd_proc, expire_node[dir]);
		ot = fwd_proc_oldest(o, dir)->fifo_time;
		if (time_before(t, ot) || (t == ot && p->serial < o->serial)) {
			link = &parent->rb_left;
		} else {
			link = &parent->rb_right;
			leftmost = false;
		}
	}
	rb_link_node(&p->expire_node[dir], parent, link);
	rb_insert_color_cached(&p->expire_node[dir], root, leftmost);
}

static void fwd_expire_del(struct fwd_data *fwd, struct fwd_proc *p,
			   enum fwd_dir dir)
{
	rb_erase_cached(&p->expire_node[dir], &fwd->expire[p->prio][dir]);
	RB_CLEAR_NODE(&p->expire_node[dir]);
}

#endif

/* The oldest request waiting in the sweep of @prio and @dir, or NULL. */
static struct request *fwd_oldest(struct fwd_data *fwd, enum fwd_prio prio,
				  enum fwd_dir dir)
{
#ifdef FWD_NO_FAIRNESS
	return list_first_entry_or_null(&fwd->fifo_list[prio][dir],
					struct request, queuelist);
#else
	struct rb_node *node = rb_first_cached(&fwd->expire[prio][dir]);

	if (!node)
		return NULL;
	return fwd_proc_oldest(rb_entry(node, struct fwd_proc,
					expire_node[dir]), dir);
#endif
}

#ifndef FWD_NO_FAIRNESS
/* ---------------------------------------------------------------- processes */

static void fwd_proc_init(struct fwd_proc *p, enum fwd_prio prio)
{
	enum fwd_dir dir;

	INIT_HLIST_NODE(&p->hash);
	INIT_LIST_HEAD(&p->lru);
	p->prio = prio;
	for (dir = 0; dir < FWD_DIR_COUNT; dir++) {
		RB_CLEAR_NODE(&p->ready_node[dir]);
		RB_CLEAR_NODE(&p->expire_node[dir]);
		INIT_LIST_HEAD(&p->fifo[dir]);
	}
	RB_CLEAR_NODE(&p->waiting_node);
	atomic_set(&p->inflight, 0);
}

static inline bool fwd_proc_queued(struct fwd_proc *p)
{
	return p->queued[FWD_READ] || p->queued[FWD_WRITE] || p->head_queued;
}

/* Backlogged: in ready[][] or waiting[] (membership, not a judgement). */
static inline bool fwd_proc_listed(struct fwd_proc *p)
{
	return !RB_EMPTY_NODE(&p->ready_node[FWD_READ]) ||
	       !RB_EMPTY_NODE(&p->ready_node[FWD_WRITE]) ||
	       !RB_EMPTY_NODE(&p->waiting_node);
}

/*
 * How long @p stays backlogged after a completion: twice its mean think
 * time plus a margin, so that a process that reads one block at a time
 * is not taken for idle between two requests (deceptive idleness), but
 * is soon after it stops.
 */
static u64 fwd_proc_grace_ns(struct fwd_proc *p)
{
	if (p->ttime_samples < FWD_TTIME_SAMPLES)
		return FWD_GRACE_MAX_NS;
	return min_t(u64, 2 * p->ttime_ns + FWD_GRACE_MARGIN_NS,
		     FWD_GRACE_MAX_NS);
}

/*
 * A process is backlogged while it has requests waiting or on the
 * device, and for its grace after its last completion.
 */
static bool fwd_proc_backlogged(struct fwd_proc *p, u64 now)
{
	u64 done;

	/* Pairs with the barrier before the decrement in fwd_finish_request(). */
	if (fwd_proc_queued(p) || atomic_read_acquire(&p->inflight))
		return true;
	done = READ_ONCE(p->last_done_ns);
	if (!done)
		return false;
#ifndef FWD_NO_ANTICIPATION
	if (done == p->cut_done_ns)
		return false;
#endif
	return now < done + fwd_proc_grace_ns(p);
}

/* Drops the processes at the front of waiting[@prio] that are no longer backlogged. */
static void fwd_prune_waiting(struct fwd_data *fwd, enum fwd_prio prio)
{
	struct fwd_proc *p;
	u64 now = 0;

	while ((p = fwd_first_waiting(fwd, prio))) {
		if (!now)
			now = ktime_get_ns();
		if (fwd_proc_backlogged(p, now))
			break;
		fwd_waiting_del(fwd, p);
		fwd->nr_backlogged[prio]--;
	}
}

/*
 * The least service of a backlogged process of @prio, V: the least of the
 * processes with requests waiting, and of the processes between two
 * requests, these counted at no less than the floor (see
 * fwd_fair_idle_floor()).  U64_MAX when none is backlogged.  V never
 * decreases: processes join at V or above, and service only grows.
 */
static u64 fwd_least_service(struct fwd_data *fwd, enum fwd_prio prio)
{
	struct fwd_proc *p;
	u64 v = U64_MAX;
	enum fwd_dir dir;

	fwd_prune_waiting(fwd, prio);
	for (dir = 0; dir < FWD_DIR_COUNT; dir++) {
		p = fwd_first_ready(fwd, prio, dir);
		if (p)
			v = min(v, p->vtime);
	}
	p = fwd_first_waiting(fwd, prio);
	if (p)
		v = min(v, max(p->vtime, fwd->floor[prio]));
	if (v != U64_MAX)
		fwd->vclock[prio] = max(fwd->vclock[prio], v);
	return v;
}

/*
 * Computes the most service a process of class @prio may have received
 * for its requests to be taken by the sweep: V plus fair_slack units.
 * Returns false when there is nothing to enforce: enforcement is off, or
 * fewer than two processes of the class are backlogged.
 */
static bool fwd_fair_limit(struct fwd_data *fwd, enum fwd_prio prio,
			   u64 *limit)
{
	u64 v;

	lockdep_assert_held(&fwd->lock);

	if (fwd->fair_slack >= FWD_FAIR_SLACK_OFF)
		return false;
	v = fwd_least_service(fwd, prio);
	if (v == U64_MAX)
		return false;
	*limit = v + (u64)fwd->fair_slack * FWD_VUNIT;
	return fwd->nr_backlogged[prio] > 1;
}

/* Re-sorts @p in the trees it is in after its service changed. */
static void fwd_proc_set_vtime(struct fwd_data *fwd, struct fwd_proc *p,
			       u64 vtime)
{
	bool in_ready[FWD_DIR_COUNT], in_waiting;
	enum fwd_dir dir;

	for (dir = 0; dir < FWD_DIR_COUNT; dir++) {
		in_ready[dir] = !RB_EMPTY_NODE(&p->ready_node[dir]);
		if (in_ready[dir])
			fwd_ready_del(fwd, p, dir);
	}
	in_waiting = !RB_EMPTY_NODE(&p->waiting_node);
	if (in_waiting)
		fwd_waiting_del(fwd, p);
	p->vtime = vtime;
	for (dir = 0; dir < FWD_DIR_COUNT; dir++)
		if (in_ready[dir])
			fwd_ready_add(fwd, p, dir);
	if (in_waiting)
		fwd_waiting_add(fwd, p);
}

/* @p has nothing waiting in the sweep any more: it waits for its next request. */
static void fwd_proc_to_waiting(struct fwd_data *fwd, struct fwd_proc *p)
{
	if (p->queued[FWD_READ] || p->queued[FWD_WRITE] ||
	    !RB_EMPTY_NODE(&p->waiting_node))
		return;
	fwd_waiting_add(fwd, p);
}

/*
 * A request of @p is about to wait in the scheduler.  A process that was
 * not backlogged joins at V, the least service of its class, so that
 * time spent idle is not banked as credit.  A process that had nothing
 * waiting and nothing in flight gives a think-time sample.
 */
static void fwd_proc_activate(struct fwd_data *fwd, struct fwd_proc *p)
{
	enum fwd_prio prio = p->prio;
	u64 now = 0, done;

	if (!fwd_proc_queued(p) && !atomic_read(&p->inflight)) {
		done = READ_ONCE(p->last_done_ns);
		now = ktime_get_ns();
		if (done && now > done) {
			u64 t = min_t(u64, now - done, FWD_TTIME_CAP_NS);

			if (p->ttime_samples)
				p->ttime_ns = (p->ttime_ns *
					       (FWD_TTIME_WEIGHT - 1) + t) /
					      FWD_TTIME_WEIGHT;
			else
				p->ttime_ns = t;
			if (p->ttime_samples < FWD_TTIME_WEIGHT)
				p->ttime_samples++;
		}
	}

	if (!RB_EMPTY_NODE(&p->waiting_node)) {
		if (fwd_proc_backlogged(p, now ?: ktime_get_ns()))
			return;
		/* Its grace ran out but it was not pruned yet. */
		fwd_waiting_del(fwd, p);
		fwd->nr_backlogged[prio]--;
	}
	if (fwd_proc_listed(p))
		return;
	fwd->nr_backlogged[prio]++;
	fwd_least_service(fwd, prio);
	p->vtime = max3(p->vtime, fwd->vclock[prio], fwd->floor[prio]);
}

static unsigned int fwd_procs_hash_key(struct pid *pid, enum fwd_prio prio)
{
	return hash_ptr(pid, FWD_PROC_HASH_BITS) ^ prio;
}

/*
 * Retires at most two entries from the front of the LRU list: those with
 * nothing waiting or in flight that are no longer backlogged and were
 * last used FWD_ACTIVE_WINDOW ago, or any such entry while there are
 * more than FWD_PROCS_SOFT_MAX.  Bounded work on every insertion keeps
 * the table's size in step with the number of processes doing I/O.
 */
static void fwd_procs_retire(struct fwd_data *fwd)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct fwd_proc *p;

		p = list_first_entry_or_null(&fwd->lru, struct fwd_proc, lru);
		if (!p || p == fwd->last_proc)
			return;
#ifndef FWD_NO_ANTICIPATION
		if (p == fwd->antic_proc)
			return;
#endif
		if (fwd->nr_procs <= FWD_PROCS_SOFT_MAX &&
		    time_before(jiffies, p->last_used + FWD_ACTIVE_WINDOW))
			return;
		if (fwd_proc_queued(p) || atomic_read(&p->inflight) ||
		    !RB_EMPTY_NODE(&p->ready_node[FWD_READ]) ||
		    !RB_EMPTY_NODE(&p->ready_node[FWD_WRITE])) {
			list_move_tail(&p->lru, &fwd->lru);
			continue;
		}
		if (!RB_EMPTY_NODE(&p->waiting_node)) {
			if (fwd_proc_backlogged(p, ktime_get_ns())) {
				list_move_tail(&p->lru, &fwd->lru);
				continue;
			}
			fwd_waiting_del(fwd, p);
			fwd->nr_backlogged[p->prio]--;
		}
		hash_del(&p->hash);
		list_del(&p->lru);
		fwd->nr_procs--;
		fwd->stats[FWD_STAT_PROCS_RETIRED]++;
		put_pid(p->pid);
#ifdef FWD_NO_ANTICIPATION
		kfree(p);
#else
		/* The completion path may still read it, see fwd_hold_done(). */
		kfree_rcu(p, rcu);
#endif
	}
}

/*
 * Returns the entry of the current process in class @prio, creating it.
 * The allocation must not sleep; if it fails, the request is charged to
 * the class's fallback entry, shown as "(nomem)".
 */
static struct fwd_proc *fwd_proc_get(struct fwd_data *fwd, enum fwd_prio prio)
{
	struct pid *pid = task_tgid(current);
	unsigned int key = fwd_procs_hash_key(pid, prio);
	struct fwd_proc *p = fwd->last_proc;

	lockdep_assert_held(&fwd->lock);

	if (p && p->pid == pid && p->prio == prio)
		return p;

	hash_for_each_possible(fwd->procs, p, hash, key)
		if (p->pid == pid && p->prio == prio)
			goto found;

	fwd_procs_retire(fwd);
	p = kzalloc_node(sizeof(*p), GFP_NOWAIT | __GFP_NOWARN, fwd->q->node);
	if (!p) {
		fwd->stats[FWD_STAT_PROCS_NOMEM]++;
		return &fwd->nomem[prio];
	}
	fwd_proc_init(p, prio);
	p->pid = get_pid(pid);
	p->serial = ++fwd->proc_serial;
	p->last_used = jiffies;
#ifndef FWD_NO_DEBUGFS
	strscpy(p->comm, current->comm, sizeof(p->comm));
#endif
	hash_add(fwd->procs, &p->hash, key);
	list_add_tail(&p->lru, &fwd->lru);
	fwd->nr_procs++;
	fwd->stats[FWD_STAT_PROCS_CREATED]++;
found:
	fwd->last_proc = p;
	return p;
}
#endif

#ifndef FWD_NO_DEBUGFS
/* ---------------------------------------------------------------- threads */

/*
 * The entry of thread @pid of process @tgid, or the "(other)" entry when
 * FWD_THREADS_MAX threads are tracked or none can be allocated.  Thread
 * accounting is read only by debugfs and is off until it is asked for.
 */
static struct fwd_thread *fwd_thread_get(struct fwd_data *fwd, pid_t pid,
					 pid_t tgid)
{
	struct fwd_thread *t;

	lockdep_assert_held(&fwd->lock);

	hash_for_each_possible(fwd->threads, t, hash, pid)
		if (t->pid == pid)
			return t;
	if (fwd->nr_threads >= FWD_THREADS_MAX)
		return &fwd->threads_other;
	t = kzalloc_node(sizeof(*t), GFP_NOWAIT | __GFP_NOWARN, fwd->q->node);
	if (!t)
		return &fwd->threads_other;
	t->pid = pid;
	t->tgid = tgid;
	hash_add(fwd->threads, &t->hash, pid);
	fwd->nr_threads++;
	return t;
}

static void fwd_threads_free(struct fwd_data *fwd)
{
	struct hlist_node *tmp;
	struct fwd_thread *t;
	int bkt;

	hash_for_each_safe(fwd->threads, bkt, tmp, t, hash) {
		hash_del(&t->hash);
		kfree(t);
	}
	fwd->nr_threads = 0;
	memset(&fwd->threads_other, 0, sizeof(fwd->threads_other));
}
#endif

/* ---------------------------------------------------------------- queueing */

#ifndef FWD_NO_FAIRNESS
/*
 * A request enters the scheduler: charge it to its process (found on its
 * first insertion; a requeued request keeps it), which joins the
 * backlogged processes of its class if it was not among them.
 */
static struct fwd_proc *fwd_owner_enqueue(struct fwd_data *fwd,
					  struct request *rq)
{
	struct fwd_proc *p = fwd_rq_proc(rq);

	lockdep_assert_held(&fwd->lock);

	if (!p) {
		p = fwd_proc_get(fwd, fwd_rq_prio(rq));
		rq->elv.priv[0] = p;
#ifndef FWD_NO_DEBUGFS
		rq->elv.priv[1] = (void *)(unsigned long)current->pid;
#endif
	}
	fwd_proc_activate(fwd, p);
#ifndef FWD_NO_DEBUGFS
	if (!fwd_proc_queued(p))
		p->wait_seq = fwd->seq;
#endif
	p->last_used = jiffies;
	if (!list_empty(&p->lru))
		list_move_tail(&p->lru, &fwd->lru);
	return p;
}
#endif

/* Queues @rq in the sweep. */
static void fwd_add_request(struct fwd_data *fwd, struct request *rq)
{
#ifndef FWD_NO_FAIRNESS
	struct fwd_proc *p = fwd_rq_proc(rq);
#endif
	enum fwd_dir dir = fwd_rq_dir(rq);
	enum fwd_prio prio = fwd_rq_prio(rq);

	lockdep_assert_held(&fwd->lock);

	elv_rb_add(&fwd->sort_list[prio][dir], rq);
	rq->fifo_time = jiffies;
#ifdef FWD_NO_FAIRNESS
	list_add_tail(&rq->queuelist, &fwd->fifo_list[prio][dir]);
#else
	list_add_tail(&rq->queuelist, &p->fifo[dir]);
	if (!p->queued[dir]++) {
		if (!RB_EMPTY_NODE(&p->waiting_node)) {
			/* Back from between two requests: no banked service. */
			fwd_waiting_del(fwd, p);
			p->vtime = max(p->vtime, fwd->floor[prio]);
		}
		fwd_ready_add(fwd, p, dir);
		fwd_expire_add(fwd, p, dir);
	}
#endif
	fwd->queued[prio][dir]++;
	fwd->nr_queued++;
}

/* @rq leaves the sweep, dispatched or merged away. */
static void fwd_remove_request(struct fwd_data *fwd, struct request *rq)
{
	enum fwd_dir dir = fwd_rq_dir(rq);
	enum fwd_prio prio = fwd_rq_prio(rq);
#ifndef FWD_NO_FAIRNESS
	struct fwd_proc *p = fwd_rq_proc(rq);
	bool oldest = fwd_proc_oldest(p, dir) == rq;
#endif

	lockdep_assert_held(&fwd->lock);

#ifndef FWD_NO_FAIRNESS
	if (oldest)
		fwd_expire_del(fwd, p, dir);
#endif
	list_del_init(&rq->queuelist);
	elv_rb_del(&fwd->sort_list[prio][dir], rq);
	elv_rqhash_del(fwd->q, rq);
	if (fwd->q->last_merge == rq)
		fwd->q->last_merge = NULL;
	fwd->queued[prio][dir]--;
	fwd->nr_queued--;
#ifndef FWD_NO_FAIRNESS
	if (!--p->queued[dir]) {
		fwd_ready_del(fwd, p, dir);
		fwd_proc_to_waiting(fwd, p);
	} else if (oldest) {
		fwd_expire_add(fwd, p, dir);
	}
#endif
}

#ifndef FWD_NO_FAIRNESS
/*
 * Charges the dispatch of @rq to its owner.  A requeued request is
 * charged only on its first dispatch.
 */
static void fwd_owner_dispatch(struct fwd_data *fwd, struct request *rq)
{
	struct fwd_proc *p = fwd_rq_proc(rq);
#ifndef FWD_NO_DEBUGFS
	enum fwd_dir dir = fwd_rq_dir(rq);
	unsigned long wait;
	u64 passed;
#endif

	lockdep_assert_held(&fwd->lock);

	if (!p)
		return;
#ifndef FWD_NO_DEBUGFS
	passed = fwd->seq - p->wait_seq;
	if (passed > p->max_passed)
		p->max_passed = passed;
	p->wait_seq = fwd->seq + 1;
#endif

	if (fwd_rq_started(rq))
		return;
	rq->elv.priv[0] = (void *)((unsigned long)p | FWD_RQ_STARTED);
	atomic_inc(&p->inflight);
#ifndef FWD_NO_HOLDS
	atomic_inc(&fwd->inflight);
#endif
	fwd_proc_set_vtime(fwd, p, p->vtime + fwd_rq_cost(rq));

#ifndef FWD_NO_DEBUGFS
	wait = jiffies - (unsigned long)rq->fifo_time;
	p->reqs[dir]++;
	p->sectors[dir] += blk_rq_sectors(rq);
	p->wait_sum[dir] += wait;
	if (wait > p->wait_max[dir])
		p->wait_max[dir] = wait;
	if (fwd->threads_on) {
		struct fwd_thread *t;

		t = fwd_thread_get(fwd, (pid_t)(unsigned long)rq->elv.priv[1],
				   fwd_proc_nr(p));
		t->reqs++;
		t->last_used = jiffies;
	}
#endif
}
#endif

static unsigned int fwd_queued_prio(struct fwd_data *fwd, enum fwd_prio prio)
{
	return fwd->queued[prio][FWD_READ] + fwd->queued[prio][FWD_WRITE];
}

/* The highest class with requests waiting in the sweep, or FWD_PRIO_COUNT. */
static enum fwd_prio fwd_first_prio(struct fwd_data *fwd)
{
	enum fwd_prio prio;

	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		if (fwd_queued_prio(fwd, prio))
			break;
	return prio;
}

/* ---------------------------------------------------------------- picks */

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
	struct request *rq = fwd_oldest(fwd, prio, dir);

	return rq && fwd_waited(rq, fwd->time[fwd_expire_time[dir]]);
}

#ifndef FWD_NO_AGING
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
			struct request *rq = fwd_oldest(fwd, prio, dir);

			if (rq && fwd_waited(rq, fwd->time[FWD_TIME_PRIO_AGING]))
				return rq;
		}
		higher = true;
	}
	return NULL;
}
#endif

static void fwd_start_batch(struct fwd_data *fwd, enum fwd_dir dir)
{
	if (dir == FWD_WRITE)
		fwd->starved = 0;
	fwd->batch_dir = dir;
	fwd->batch_count = 0;
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

	if (dir == FWD_READ && writes)
		fwd->starved++;
	fwd_start_batch(fwd, dir);
	return dir;
}

/* The plain sweep: the lowest request at or above the position, else a wrap. */
static struct request *fwd_sweep(struct fwd_data *fwd, enum fwd_prio prio,
				 enum fwd_dir dir, enum fwd_decision *why)
{
	struct rb_root *root = &fwd->sort_list[prio][dir];
	struct request *rq = fwd_find_from(root, fwd->sweep_pos);

	if (rq)
		return rq;
	*why = FWD_DECIDE_WRAP;
	return fwd_first_rq(root);
}

#ifndef FWD_NO_FAIRNESS
static inline bool fwd_eligible(struct request *rq, u64 limit)
{
	return fwd_rq_proc(rq)->vtime <= limit;
}

/* Does a request of a process within @limit wait in @prio, @dir? */
static bool fwd_dir_eligible(struct fwd_data *fwd, enum fwd_prio prio,
			     enum fwd_dir dir, u64 limit)
{
	struct fwd_proc *p = fwd_first_ready(fwd, prio, dir);

	return p && p->vtime <= limit;
}

/*
 * The sweep among the requests of processes within @limit, of which at
 * least one waits in @prio, @dir: the lowest such request at or above
 * the sweep position, else the lowest below it -- a detour, which keeps
 * the sweep position so that the requests skipped above are still served
 * in this sweep, or a wrap when nothing at all waits above.  At most
 * FWD_SCAN_MAX requests are examined; when none of them qualifies, the
 * oldest request of the least served process is taken instead.  The work
 * is therefore O(FWD_SCAN_MAX + log n) whatever the number of requests
 * and processes.
 */
static struct request *fwd_sweep_fair(struct fwd_data *fwd,
				      enum fwd_prio prio, enum fwd_dir dir,
				      u64 limit, enum fwd_decision *why)
{
	struct rb_root *root = &fwd->sort_list[prio][dir];
	struct request *start, *rq;
	int budget = FWD_SCAN_MAX;

	start = fwd_find_from(root, fwd->sweep_pos);
	for (rq = start; rq && budget; rq = fwd_next_rq(rq), budget--) {
		if (fwd_eligible(rq, limit))
			goto above;
	}
	if (!rq) {
		for (rq = fwd_first_rq(root); rq != start && budget;
		     rq = fwd_next_rq(rq), budget--) {
			if (fwd_eligible(rq, limit))
				goto below;
		}
	}
	fwd->stats[FWD_STAT_FAIR_FALLBACKS]++;
	rq = fwd_proc_oldest(fwd_first_ready(fwd, prio, dir), dir);
	if (blk_rq_pos(rq) < fwd->sweep_pos)
		goto below;
above:
	if (rq != start) {
		fwd->stats[FWD_STAT_FAIR_SKIPS]++;
		*why = FWD_DECIDE_FAIR_SKIP;
	}
	return rq;
below:
	if (start || rq != fwd_first_rq(root))
		fwd->stats[FWD_STAT_FAIR_SKIPS]++;
	if (start) {
		fwd->stats[FWD_STAT_DETOURS]++;
		*why = FWD_DECIDE_DETOUR;
	} else {
		*why = FWD_DECIDE_WRAP;
	}
	return rq;
}

/*
 * The sweep served an ineligible process because no process within the
 * limit had anything waiting (they are between two requests).  Such a
 * process must not bank the service it misses: it is counted at no less
 * than the floor, fair_slack + 1 units below the process just served
 * (after its dispatch), see fwd_least_service().
 */
static void fwd_fair_idle_floor(struct fwd_data *fwd, struct request *rq)
{
	struct fwd_proc *served = fwd_rq_proc(rq);
	u64 lag = (u64)(fwd->fair_slack + 1) * FWD_VUNIT;

	if (served && served->vtime > lag)
		fwd->floor[served->prio] = max(fwd->floor[served->prio],
					       served->vtime - lag);
}
#endif

#ifndef FWD_NO_HOLDS
/* ---------------------------------------------------------------- holds */

#ifndef FWD_NO_ANTICIPATION
/* Think time and window of @w if anticipating its next request is worth it. */
static bool fwd_antic_worth(struct fwd_data *fwd, struct fwd_proc *w,
			    u64 *window)
{
	u64 max_ns = (u64)fwd->anticipate_us * NSEC_PER_USEC;

	if (!max_ns || fwd->dispatch_depth > 2 || !w->pid ||
	    w->ttime_samples < FWD_TTIME_SAMPLES || w->ttime_ns > max_ns)
		return false;
	*window = min(fwd_proc_grace_ns(w), max_ns);
	return true;
}

/*
 * The anticipation timer ended a hold without the anticipated request
 * (and counted it, see fwd_antic_timer_fn()): the process's grace after
 * that completion is given up, so that the sweep goes on without it.
 */
static void fwd_antic_timedout(struct fwd_data *fwd)
{
	struct fwd_proc *w = fwd->antic_proc;

	lockdep_assert_held(&fwd->lock);

	if (!READ_ONCE(fwd->antic_timedout))
		return;
	WRITE_ONCE(fwd->antic_timedout, false);
	if (!w)
		return;
	w->cut_done_ns = READ_ONCE(w->last_done_ns);
	WRITE_ONCE(fwd->antic_proc, NULL);
}
#endif

/*
 * What fairness asks of the next dispatch, see fwd_fair_state().
 */
enum fwd_fair_state {
	FWD_FAIR_FREE,		/* nothing: the sweep goes on */
	FWD_FAIR_OWED,		/* the next request is owed to W */
	FWD_FAIR_BLOCKED,	/* no request within the limit waits */
};

/*
 * Judges, in one pass under the lock, what fairness asks of the next
 * dispatch in the first class with requests.  *@w is set to the least
 * served backlogged process, W, when it is between two requests:
 *
 *  - FWD_FAIR_BLOCKED: no request of a process within the limit waits
 *    in the class (nor an aged or expired request);
 *  - FWD_FAIR_OWED: W has nothing in flight, and no process with
 *    requests waiting in the class has received less service (counting
 *    W at no less than the floor).  The processes ahead of W may still
 *    be within the limit: their requests are served, but not queued on
 *    the device for W's next request to wait behind, see
 *    fwd_hold_next();
 *  - FWD_FAIR_FREE otherwise.
 */
static enum fwd_fair_state fwd_fair_state(struct fwd_data *fwd,
					  struct fwd_proc **w)
{
	bool eligible = false, less = false;
	struct fwd_proc *p, *wp;
	enum fwd_prio prio;
	enum fwd_dir dir;
	u64 limit, v;

	if (fwd_aged_request(fwd))
		return FWD_FAIR_FREE;
	prio = fwd_first_prio(fwd);
	if (prio == FWD_PRIO_COUNT || !fwd_fair_limit(fwd, prio, &limit))
		return FWD_FAIR_FREE;
	wp = fwd_first_waiting(fwd, prio);
	if (!wp)
		return FWD_FAIR_FREE;
	v = max(wp->vtime, fwd->floor[prio]);
	for (dir = 0; dir < FWD_DIR_COUNT; dir++) {
		if (fwd_head_expired(fwd, prio, dir))
			return FWD_FAIR_FREE;
		p = fwd_first_ready(fwd, prio, dir);
		if (!p)
			continue;
		eligible |= p->vtime <= limit;
		less |= p->vtime < v;
	}
	*w = wp;
	if (!eligible)
		return FWD_FAIR_BLOCKED;
	if (less || atomic_read(&wp->inflight))
		return FWD_FAIR_FREE;
	return FWD_FAIR_OWED;
}

/*
 * Decides what the next dispatch must wait for, see fwd_data.hold.
 * Requests at the head are served regardless.  Only on a device with a
 * dispatch_depth (one that serves few requests at a time, like an SD
 * card; 0 elsewhere), and in this order:
 *
 *  - fairness: when fairness blocks, or when the next request is owed
 *    to the least served process, W, which is between two requests (see
 *    fwd_fair_state()), the device is not handed
 *    yet another request of the processes ahead while it has
 *    max(1, dispatch_depth - 1) requests to work on, so that W's next
 *    request waits behind at most that many;
 *  - dispatch_depth: while that many requests are in flight.
 *
 * On a device with parallelism to spare (dispatch_depth 0) nothing is
 * ever held: fairness only orders the requests that wait.
 */
static unsigned int fwd_hold_next(struct fwd_data *fwd,
				  enum fwd_hold_reason *reason)
{
	unsigned int depth = fwd->dispatch_depth, inflight, n;
	enum fwd_fair_state fair;
	struct fwd_proc *w;
#ifndef FWD_NO_ANTICIPATION
	u64 window, now, end;
#endif

	lockdep_assert_held(&fwd->lock);

#ifndef FWD_NO_ANTICIPATION
	/* A timeout is charged to the process it waited for, not the next. */
	fwd_antic_timedout(fwd);
	WRITE_ONCE(fwd->antic_proc, NULL);
#endif
#ifndef FWD_NO_DEBUGFS
	fwd->hold_proc = NULL;
#endif
	if (!depth || !fwd->nr_queued || !list_empty(&fwd->dispatch))
		return 0;
	inflight = atomic_read(&fwd->inflight);
	n = max(1U, depth - 1);
	fair = fwd_fair_state(fwd, &w);
	if (fair == FWD_FAIR_BLOCKED) {
#ifndef FWD_NO_DEBUGFS
		fwd->hold_proc = w;
#endif
		if (inflight >= n) {
#ifndef FWD_NO_ANTICIPATION
			if (fwd_antic_worth(fwd, w, &window)) {
				WRITE_ONCE(fwd->antic_window_ns, window);
				WRITE_ONCE(fwd->antic_proc, w);
			}
#endif
			*reason = FWD_HOLD_FAIR;
			return n;
		}
#ifndef FWD_NO_ANTICIPATION
		/*
		 * Anticipation: on a device that serves one request at a
		 * time (dispatch_depth 1 or 2), with nothing in flight, and
		 * when W's mean think time is at most anticipate_us, the
		 * device is left idle until W's next request or the end of
		 * W's think-time window, whichever comes first.  A fairness
		 * hold prepares it for when the device falls idle, see
		 * fwd_hold_done().
		 */
		if (!inflight && fwd_antic_worth(fwd, w, &window)) {
			u64 done = READ_ONCE(w->last_done_ns);

			now = ktime_get_ns();
			end = done + window;
			if (done && done != w->cut_done_ns && now < end &&
			    !atomic_read(&w->inflight)) {
				WRITE_ONCE(fwd->antic_proc, w);
				fwd->antic_delay_ns = end - now;
				*reason = FWD_HOLD_ANTIC;
				return FWD_HOLD_ANTIC_ON;
			}
		}
#endif
	} else if (fair == FWD_FAIR_OWED && inflight >= n) {
#ifndef FWD_NO_DEBUGFS
		fwd->hold_proc = w;
#endif
		*reason = FWD_HOLD_FAIR;
		return n;
	}
	if (inflight >= depth) {
		*reason = FWD_HOLD_DEPTH;
		return depth;
	}
	return 0;
}

#ifndef FWD_NO_DEBUGFS
static const enum fwd_stat fwd_hold_stat[] = {
	[FWD_HOLD_DEPTH]	= FWD_STAT_DEPTH_HOLDS,
	[FWD_HOLD_FAIR]		= FWD_STAT_FAIR_HOLDS,
	[FWD_HOLD_ANTIC]	= FWD_STAT_ANTIC_HOLDS,
};
#endif

/*
 * Sets fwd->hold to @hold and returns whether the scheduler holds.  A hold
 * on a completion is stored before the in-flight count is read; a
 * completion decrements the count, then reads the hold (see
 * fwd_finish_request()), so one of the two sees the other and a hold never
 * misses the completion that ends it.
 *
 * Completions and the anticipation timer change the hold without the
 * lock, each with a cmpxchg(); here it is exchanged.  Every start and
 * every end of an anticipation is therefore counted once, by whoever's
 * atomic operation made it: a start here, by a completion
 * (fwd_hold_done()) or nowhere else; an end here, by a completion that
 * takes its start back, or by the timer.
 */
static bool fwd_set_hold(struct fwd_data *fwd, unsigned int hold,
			 enum fwd_hold_reason reason)
{
	unsigned int old = READ_ONCE(fwd->hold);

	lockdep_assert_held(&fwd->lock);

#if !defined(FWD_NO_ANTICIPATION) && !defined(FWD_NO_DEBUGFS)
	if (hold == FWD_HOLD_ANTIC_ON && hold != old)
		WRITE_ONCE(fwd->antic_nr, fwd_proc_nr(fwd->antic_proc));
#endif
	/* Only a change dirties the cache line that completions read. */
	if (hold != old)
		old = xchg(&fwd->hold, hold);
#ifndef FWD_NO_ANTICIPATION
	if (old == FWD_HOLD_ANTIC_ON && hold != FWD_HOLD_ANTIC_ON) {
		/* Ended before its timer: the request came, or is moot. */
		hrtimer_try_to_cancel(&fwd->antic_timer);
		fwd->stats[FWD_STAT_ANTIC_HITS]++;
		trace_fwdsched_anticipated(fwd->q, READ_ONCE(fwd->antic_nr),
					   true);
	}
	if (hold && hold != FWD_HOLD_ANTIC_ON) {
#else
	if (hold) {
#endif
		/* The hold, then the count; pairs with fwd_finish_request(). */
		smp_mb();
		if (atomic_read(&fwd->inflight) < hold) {
			/*
			 * Unless a completion ended the hold meanwhile (and
			 * ran the queue) or turned it into an anticipation.
			 */
			if (cmpxchg(&fwd->hold, hold, 0) != hold)
				return true;
			hold = 0;
		}
	}
	if (!hold || hold == old)
		return hold;
#ifndef FWD_NO_ANTICIPATION
	/* Stored before its timer is started: the timer always finds it. */
	if (hold == FWD_HOLD_ANTIC_ON)
		hrtimer_start(&fwd->antic_timer,
			      ns_to_ktime(fwd->antic_delay_ns),
			      HRTIMER_MODE_REL);
#endif
	fwd->stats[fwd_hold_stat[reason]]++;
	trace_fwdsched_hold(fwd->q, reason, atomic_read(&fwd->inflight),
			    reason == FWD_HOLD_DEPTH ? 0 :
			    fwd_proc_nr(fwd->hold_proc));
	return true;
}

/*
 * Decides the hold and sets it.  (Not in one expression: the order in
 * which a call's arguments are evaluated is unspecified, and the reason
 * must be read after fwd_hold_next() wrote it.)
 */
static bool fwd_decide_hold(struct fwd_data *fwd)
{
	enum fwd_hold_reason reason = FWD_HOLD_DEPTH;
	unsigned int hold = fwd_hold_next(fwd, &reason);

	return fwd_set_hold(fwd, hold, reason);
}

#ifndef FWD_NO_ANTICIPATION
static enum hrtimer_restart fwd_antic_timer_fn(struct hrtimer *timer)
{
	struct fwd_data *fwd = container_of(timer, struct fwd_data,
					    antic_timer);

	if (cmpxchg(&fwd->hold, FWD_HOLD_ANTIC_ON, 0) == FWD_HOLD_ANTIC_ON) {
		atomic_inc(&fwd->antic_timeouts);
		trace_fwdsched_anticipated(fwd->q, READ_ONCE(fwd->antic_nr),
					   false);
		WRITE_ONCE(fwd->antic_timedout, true);
		blk_mq_run_hw_queues(fwd->q, true);
	}
	return HRTIMER_NORESTART;
}
#endif
#endif

/* ---------------------------------------------------------------- dispatch */

/* Accounts the dispatch of @rq, chosen for @why, and moves the sweep. */
static void fwd_dispatched(struct fwd_data *fwd, struct request *rq,
			   enum fwd_decision why)
{
#ifndef FWD_NO_DEBUGFS
	static const enum fwd_stat why_stat[] = {
		[FWD_DECIDE_WRAP]	= FWD_STAT_WRAPS,
		[FWD_DECIDE_EXPIRED]	= FWD_STAT_EXPIRED,
		[FWD_DECIDE_AGED]	= FWD_STAT_AGED,
		[FWD_DECIDE_HEAD]	= FWD_STAT_HEAD,
	};
	sector_t pos = fwd->sweep_pos;

#endif
#ifndef FWD_NO_FAIRNESS
	fwd_owner_dispatch(fwd, rq);
#endif
	fwd->stats[blk_rq_pos(rq) >= pos ? FWD_STAT_FORWARD :
					   FWD_STAT_BACKWARD]++;
	fwd->stats[FWD_STAT_DISPATCHED]++;
	if (why < ARRAY_SIZE(why_stat) && why_stat[why])
		fwd->stats[why_stat[why]]++;
#ifndef FWD_NO_DEBUGFS
	fwd->seq++;
#endif
#ifdef FWD_NO_FAIRNESS
	fwd->sweep_pos = blk_rq_pos(rq) + blk_rq_sectors(rq);
#else
	/* A detour keeps the sweep position, see fwd_sweep_fair(). */
	if (why != FWD_DECIDE_DETOUR)
		fwd->sweep_pos = blk_rq_pos(rq) + blk_rq_sectors(rq);
#endif
	if (why != FWD_DECIDE_SWEEP)
		trace_fwdsched_decide(rq, why, pos,
				      fwd_proc_nr(fwd_rq_proc(rq)));
}

/*
 * Called with the lock held; picks the next request.  Returns NULL when
 * nothing waits.
 */
static struct request *__fwd_dispatch_request(struct fwd_data *fwd)
{
	enum fwd_decision why = FWD_DECIDE_SWEEP;
#ifndef FWD_NO_HOLDS
	enum fwd_hold_reason reason;
#endif
#ifndef FWD_NO_FAIRNESS
	bool fair_idle = false;
#endif
	struct request *rq;
	enum fwd_prio prio;
#ifndef FWD_NO_HOLDS
	unsigned int hold;
#endif
	enum fwd_dir dir;
#ifndef FWD_NO_FAIRNESS
	u64 limit;
#endif

	lockdep_assert_held(&fwd->lock);

#ifndef FWD_NO_ANTICIPATION
	fwd_antic_timedout(fwd);
#endif

	rq = list_first_entry_or_null(&fwd->dispatch, struct request,
				      queuelist);
	if (rq) {
#ifndef FWD_NO_FAIRNESS
		struct fwd_proc *p = fwd_rq_proc(rq);
#endif

		list_del_init(&rq->queuelist);
#ifndef FWD_NO_FAIRNESS
		if (p && !--p->head_queued)
			fwd_proc_to_waiting(fwd, p);
#endif
		why = FWD_DECIDE_HEAD;
		goto account;
	}

#ifndef FWD_NO_HOLDS
	/*
	 * Nothing while a hold is in effect (fwd_hold_next()): then
	 * fwd_has_work() is false, and whatever ends the hold runs the
	 * queue again.
	 */
#ifndef FWD_NO_ANTICIPATION
	if (READ_ONCE(fwd->hold) == FWD_HOLD_ANTIC_ON)
		goto empty;
#endif
	hold = fwd_hold_next(fwd, &reason);
	if (hold && fwd_set_hold(fwd, hold, reason))
		goto empty;
#endif

#ifndef FWD_NO_AGING
	rq = fwd_aged_request(fwd);
	if (rq) {
		why = FWD_DECIDE_AGED;
		goto remove;
	}
#endif

	prio = fwd_first_prio(fwd);
	if (prio == FWD_PRIO_COUNT)
		return NULL;

	dir = fwd_choose_dir(fwd, prio);
	if (fwd_head_expired(fwd, prio, dir)) {
		rq = fwd_oldest(fwd, prio, dir);
		why = FWD_DECIDE_EXPIRED;
#ifdef FWD_NO_FAIRNESS
	} else {
		rq = fwd_sweep(fwd, prio, dir, &why);
#else
	} else if (!fwd_fair_limit(fwd, prio, &limit)) {
		rq = fwd_sweep(fwd, prio, dir, &why);
	} else if (fwd_dir_eligible(fwd, prio, dir, limit)) {
		rq = fwd_sweep_fair(fwd, prio, dir, limit, &why);
	} else if (fwd_dir_eligible(fwd, prio, !dir, limit)) {
		/* A process within the limit waits in the other direction. */
		fwd_start_batch(fwd, !dir);
		fwd->stats[FWD_STAT_FAIR_SWITCHES]++;
		rq = fwd_sweep_fair(fwd, prio, !dir, limit, &why);
		if (why == FWD_DECIDE_SWEEP)
			why = FWD_DECIDE_FAIR_SWITCH;
	} else if (fwd_head_expired(fwd, prio, !dir)) {
		fwd_start_batch(fwd, !dir);
		rq = fwd_oldest(fwd, prio, !dir);
		why = FWD_DECIDE_EXPIRED;
	} else {
		/* Nobody within the limit waits: the sweep goes on. */
		fair_idle = true;
		rq = fwd_sweep(fwd, prio, dir, &why);
#endif
	}
	fwd->batch_count++;
#ifndef FWD_NO_AGING
remove:
#endif
	fwd_remove_request(fwd, rq);
account:
	fwd_dispatched(fwd, rq, why);
#ifndef FWD_NO_FAIRNESS
	if (fair_idle) {
		fwd->stats[FWD_STAT_FAIR_IDLE]++;
		fwd_fair_idle_floor(fwd, rq);
		trace_fwdsched_decide(rq, FWD_DECIDE_FAIR_IDLE, fwd->sweep_pos,
				      fwd_proc_nr(fwd_rq_proc(rq)));
	}
#endif
#ifndef FWD_NO_HOLDS
	fwd_decide_hold(fwd);
#endif
	rq->rq_flags |= RQF_STARTED;
	return rq;
#ifndef FWD_NO_HOLDS
empty:
	fwd->stats[FWD_STAT_EMPTY_DISPATCHES]++;
	return NULL;
#endif
}

/* Called from blk_mq_run_hw_queue() -> __blk_mq_sched_dispatch_requests(). */
static struct request *fwd_dispatch_request(struct blk_mq_hw_ctx *hctx)
{
	struct fwd_data *fwd = hctx->queue->elevator->elevator_data;
	struct request *rq;

	spin_lock(&fwd->lock);
	rq = __fwd_dispatch_request(fwd);
	spin_unlock(&fwd->lock);

	return rq;
}

/* Called without the lock. */
static bool fwd_has_work(struct blk_mq_hw_ctx *hctx)
{
	struct fwd_data *fwd = hctx->queue->elevator->elevator_data;

	if (!list_empty_careful(&fwd->dispatch))
		return true;
#ifndef FWD_NO_HOLDS
	/*
	 * False while a hold is in effect, so that blk-mq neither asks for
	 * a request it would not get nor schedules its delayed re-run:
	 * whatever ends the hold runs the queue.
	 */
	if (READ_ONCE(fwd->hold))
		return false;
#endif
	return READ_ONCE(fwd->nr_queued);
}

/* ---------------------------------------------------------------- insertion */

static void fwd_insert_request(struct fwd_data *fwd, struct request *rq,
			       blk_insert_t flags, struct list_head *free)
{
	struct request_queue *q = fwd->q;
#ifndef FWD_NO_FAIRNESS
	struct fwd_proc *p;
#endif
#ifndef FWD_NO_ANTICIPATION
	struct fwd_proc *w;
#endif

	lockdep_assert_held(&fwd->lock);

#ifndef FWD_NO_FAIRNESS
	/* Nothing to charge it to: serve it first, as blk-mq would. */
	if (!(rq->rq_flags & RQF_USE_SCHED)) {
		trace_block_rq_insert(rq);
		list_add_tail(&rq->queuelist, &fwd->dispatch);
		return;
	}

	/*
	 * A requeued request comes back here; count it only once, and
	 * serve it first.  Since 6.4 the block layer asks for that with
	 * BLK_MQ_INSERT_AT_HEAD; before, requeues arrive without the flag.
	 */
	if (fwd_rq_proc(rq))
		flags |= BLK_MQ_INSERT_AT_HEAD;
	else
		fwd->stats[FWD_STAT_INSERTED]++;
#endif

	if (!(flags & BLK_MQ_INSERT_AT_HEAD) &&
	    blk_mq_sched_try_insert_merge(q, rq, free)) {
		fwd->stats[FWD_STAT_INSERT_MERGES]++;
		return;
	}

	trace_block_rq_insert(rq);
#ifndef FWD_NO_FAIRNESS
	p = fwd_owner_enqueue(fwd, rq);
#endif
	if (flags & BLK_MQ_INSERT_AT_HEAD) {
		list_add(&rq->queuelist, &fwd->dispatch);
#ifndef FWD_NO_FAIRNESS
		p->head_queued++;
		fwd_proc_to_waiting(fwd, p);
#endif
#ifndef FWD_NO_DEBUGFS
		rq->fifo_time = jiffies;
#endif
		return;
	}

	fwd_add_request(fwd, rq);
	if (rq_mergeable(rq)) {
		elv_rqhash_add(q, rq);
		if (!q->last_merge)
			q->last_merge = rq;
	}
#ifndef FWD_NO_ANTICIPATION
	/*
	 * The anticipated process's request, or one of a higher class: the
	 * anticipation is over.
	 */
	w = fwd->antic_proc;
	if (w && (p == w || p->prio < w->prio))
		fwd->antic_arrived = true;
#endif
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
#ifndef FWD_NO_HOLDS
#ifndef FWD_NO_ANTICIPATION
	/*
	 * An anticipation lasts until its process's request or the timer.
	 * One that ends here is over: a new one decided next is counted as
	 * a new anticipation, with a timer of its own.
	 */
	if (READ_ONCE(fwd->hold) == FWD_HOLD_ANTIC_ON && fwd->antic_arrived)
		fwd_set_hold(fwd, 0, FWD_HOLD_ANTIC);
	fwd->antic_arrived = false;
	if (READ_ONCE(fwd->hold) != FWD_HOLD_ANTIC_ON)
#endif
		fwd_decide_hold(fwd);
#endif
	spin_unlock(&fwd->lock);

	blk_mq_free_requests(&free);
}

#ifndef FWD_NO_FAIRNESS
/* Called by blk_mq_rq_ctx_init() when a request is allocated. */
static void fwd_prepare_request(struct request *rq)
{
	rq->elv.priv[0] = NULL;
#ifndef FWD_NO_DEBUGFS
	rq->elv.priv[1] = NULL;
#endif
}

#ifndef FWD_NO_HOLDS
/*
 * A completion left fewer requests in flight than the hold waits for:
 * end the hold and run the queue.
 */
static void fwd_hold_done(struct fwd_data *fwd, unsigned int hold,
			  unsigned int left)
{
#ifndef FWD_NO_ANTICIPATION
	struct fwd_proc *w;
	u64 now, end;

	/*
	 * Unless the device is now idle and the anticipated process's
	 * window is still open: then the anticipation prepared by
	 * fwd_hold_next() starts.  Without the lock, the entry may be
	 * retired meanwhile: it is freed after a grace period.
	 *
	 * The decision may be stale: an insertion may have queued W's
	 * request and kept the same hold value.  It wrote antic_proc
	 * before its fwd_set_hold() ordered the hold against the in-flight
	 * count; this completion decremented the count before it read the
	 * hold, and the cmpxchg() is fully ordered, so reading antic_proc
	 * again after it sees the insertion's value.  A stale start is
	 * taken back.
	 */
	rcu_read_lock();
	w = READ_ONCE(fwd->antic_proc);
	if (!left && w) {
		now = ktime_get_ns();
		end = READ_ONCE(w->last_done_ns) +
		      READ_ONCE(fwd->antic_window_ns);
		if (now < end && !atomic_read(&w->inflight) &&
		    cmpxchg(&fwd->hold, hold, FWD_HOLD_ANTIC_ON) == hold) {
#ifndef FWD_NO_DEBUGFS
			WRITE_ONCE(fwd->antic_nr, fwd_proc_nr(w));
#endif
			atomic_inc(&fwd->antic_starts);
			trace_fwdsched_hold(fwd->q, FWD_HOLD_ANTIC, 0,
					    fwd_proc_nr(w));
			if (READ_ONCE(fwd->antic_proc) == w) {
				hrtimer_start(&fwd->antic_timer,
					      ns_to_ktime(end - now),
					      HRTIMER_MODE_REL);
				rcu_read_unlock();
				return;
			}
			/*
			 * Stale: ended at once, as by the request it waited
			 * for, unless an insertion ended it first (and
			 * counted it).
			 */
			if (cmpxchg(&fwd->hold, FWD_HOLD_ANTIC_ON, 0) ==
			    FWD_HOLD_ANTIC_ON) {
				atomic_inc(&fwd->antic_taken_back);
				trace_fwdsched_anticipated(fwd->q,
							   fwd_proc_nr(w),
							   true);
				blk_mq_run_hw_queues(fwd->q, true);
			}
			rcu_read_unlock();
			return;
		}
	}
	rcu_read_unlock();
#endif
	if (cmpxchg(&fwd->hold, hold, 0) == hold)
		blk_mq_run_hw_queues(fwd->q, true);
}
#endif

/*
 * Callback from inside blk_mq_free_request(), possibly in interrupt
 * context: it takes no lock.
 * Flush and passthrough requests never reach the scheduler, and requests
 * merged into another one are freed without being dispatched; neither is
 * charged.
 */
static void fwd_finish_request(struct request *rq)
{
#ifndef FWD_NO_HOLDS
	struct fwd_data *fwd = rq->q->elevator->elevator_data;
	unsigned int hold, left;
#endif
	struct fwd_proc *p = fwd_rq_proc(rq);

	if (!p)
		return;
	if (fwd_rq_started(rq)) {
		WRITE_ONCE(p->last_done_ns, ktime_get_ns());
		/* The completion time, then the count; see fwd_proc_backlogged(). */
		smp_mb__before_atomic();
		atomic_dec(&p->inflight);
#ifndef FWD_NO_HOLDS
		/* Fully ordered: the decrement before the read of the hold. */
		left = atomic_dec_return(&fwd->inflight);
		hold = READ_ONCE(fwd->hold);
#ifdef FWD_NO_ANTICIPATION
		if (hold && left < hold)
#else
		if (hold && hold != FWD_HOLD_ANTIC_ON && left < hold)
#endif
			fwd_hold_done(fwd, hold, left);
#endif
	}
	rq->elv.priv[0] = NULL;
}
#endif

/* ---------------------------------------------------------------- merges */

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
	struct rb_root *root;

	lockdep_assert_held(&fwd->lock);

	if (type != ELEVATOR_FRONT_MERGE)
		return;
#ifndef FWD_NO_FAIRNESS
	/* Not in the sweep. */
	if (!fwd_rq_proc(rq))
		return;
#endif
	root = &fwd->sort_list[fwd_rq_prio(rq)][fwd_rq_dir(rq)];
	elv_rb_del(root, rq);
	elv_rb_add(root, rq);
}

/*
 * @next was merged into @rq.  If both wait in the same FIFO and @next
 * waited longer, @rq takes its place there, and its deadline.
 */
static void fwd_requests_merged(struct request_queue *q, struct request *rq,
				struct request *next)
{
	struct fwd_data *fwd = q->elevator->elevator_data;
#ifndef FWD_NO_FAIRNESS
	struct fwd_proc *p = fwd_rq_proc(rq);
#endif

	lockdep_assert_held(&fwd->lock);

	/*
	 * On an insert merge (blk_mq_sched_try_insert_merge()) @next is the
	 * request being inserted: it was never queued here, so it is in
	 * neither the sort tree nor the counts.
	 */
	if (RB_EMPTY_NODE(&next->rb_node)) {
		elv_rqhash_del(q, next);
		if (q->last_merge == next)
			q->last_merge = NULL;
	} else {
		bool older = !RB_EMPTY_NODE(&rq->rb_node) &&
			     time_before((unsigned long)next->fifo_time,
					 (unsigned long)rq->fifo_time);

#ifndef FWD_NO_FAIRNESS
		/* Each process has its own FIFO. */
		older = older && p && p == fwd_rq_proc(next);
#endif
		if (older) {
			list_move(&rq->queuelist, &next->queuelist);
			rq->fifo_time = next->fifo_time;
		}
		fwd_remove_request(fwd, next);
	}
#ifndef FWD_NO_FAIRNESS
	/* Freed without being dispatched, it is no longer charged. */
	if (next->rq_flags & RQF_USE_SCHED)
		next->elv.priv[0] = NULL;
#endif
	fwd->stats[FWD_STAT_RQ_MERGES]++;
}

/* ---------------------------------------------------------------- depth */

static unsigned int fwd_async_limit(struct fwd_data *fwd)
{
	return min(READ_ONCE(*fwd_async_depth(fwd)), fwd->q->nr_requests);
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

	data->shallow_depth = fwd_shallow_depth(data, fwd_async_limit(fwd));
}

/*
 * Called from blk_mq_init_sched() and when q->nr_requests changes.  The
 * async depth is the queue's own (queue/async_depth), which the block
 * layer scales with nr_requests: fwdsched uses it as it is.  The minimum
 * shallow depth stays 1 because async_depth may be set as low as that at
 * any time.
 */
#ifndef FWD_HAVE_Q_ASYNC_DEPTH
static unsigned int fwd_default_async_depth(unsigned int nr_requests)
{
	return max(1UL, nr_requests * FWD_ASYNC_PERCENT / 100UL);
}
#endif

static void fwd_set_depth(struct request_queue *q, unsigned int nr)
{
#ifndef FWD_HAVE_Q_ASYNC_DEPTH
	struct fwd_data *fwd = q->elevator->elevator_data;

	/*
	 * Before 7.0 the async depth is the scheduler's: its default
	 * follows nr_requests (@nr) here and a value written by the user
	 * is kept within it.
	 */
	if (!fwd->async_depth_set)
		fwd->async_depth = fwd_default_async_depth(nr);
	fwd->async_depth = clamp_t(unsigned int, fwd->async_depth, 1, nr);
#endif
	blk_mq_set_min_shallow_depth(q, 1);
}

static void fwd_depth_updated(struct request_queue *q)
{
	fwd_set_depth(q, q->nr_requests);
}

#ifndef FWD_HAVE_DEPTH_UPDATED_Q
/*
 * Before the per-queue callback, blk_mq_update_nr_requests() calls this
 * for each hardware context after resizing its scheduler tags but before
 * q->nr_requests takes the new value: take the new depth from the tags.
 * (Shared scheduler tags are resized after the loop; their depth is the
 * old one here, as nr_requests is.)
 */
static void fwd_depth_updated_hctx(struct blk_mq_hw_ctx *hctx)
{
	struct blk_mq_tags *tags = hctx->sched_tags;

	fwd_set_depth(hctx->queue, tags ? tags->bitmap_tags.sb.depth +
				   tags->nr_reserved_tags :
				   hctx->queue->nr_requests);
}
#endif

#ifndef FWD_NO_HOLDS
/*
 * dispatch_depth defaults to FWD_MMC_DEPTH on an MMC card without command
 * queueing, where it was measured: the driver works on one request while
 * its ->queue_rq() prepares the next, and turns a third away
 * (BLK_STS_RESOURCE) into blk-mq's own dispatch list, where it is issued
 * next whatever arrives meanwhile.  Everything else (command-queueing
 * eMMC, UFS, NVMe, nbd, ...) has no limit by default.
 */
static unsigned int fwd_default_dispatch_depth(struct request_queue *q)
{
	if (q->disk && q->disk->major == MMC_BLOCK_MAJOR &&
	    q->tag_set->queue_depth > FWD_MMC_CQ_MAX_TAGS)
		return FWD_MMC_DEPTH;
	return 0;
}
#endif

/* ---------------------------------------------------------------- set-up */

static int fwd_init_sched(struct request_queue *q, struct elevator_queue *eq)
{
	struct fwd_data *fwd;
	enum fwd_prio prio;
	enum fwd_dir dir;
	int i;

	fwd = kzalloc_node(sizeof(*fwd), GFP_KERNEL, q->node);
	if (!fwd)
		return -ENOMEM;

	fwd->q = q;
	spin_lock_init(&fwd->lock);
	INIT_LIST_HEAD(&fwd->dispatch);
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++) {
		for (dir = 0; dir < FWD_DIR_COUNT; dir++) {
			fwd->sort_list[prio][dir] = RB_ROOT;
#ifdef FWD_NO_FAIRNESS
			INIT_LIST_HEAD(&fwd->fifo_list[prio][dir]);
#else
			fwd->expire[prio][dir] = RB_ROOT_CACHED;
			fwd->ready[prio][dir] = RB_ROOT_CACHED;
#endif
		}
#ifndef FWD_NO_FAIRNESS
		fwd->waiting[prio] = RB_ROOT_CACHED;
		fwd_proc_init(&fwd->nomem[prio], prio);
		fwd->nomem[prio].serial = ++fwd->proc_serial;
#ifndef FWD_NO_DEBUGFS
		strscpy(fwd->nomem[prio].comm, "(nomem)",
			sizeof(fwd->nomem[prio].comm));
#endif
#endif
	}
#ifndef FWD_NO_FAIRNESS
	hash_init(fwd->procs);
	INIT_LIST_HEAD(&fwd->lru);
#endif
#ifndef FWD_NO_DEBUGFS
	hash_init(fwd->threads);
#endif
#ifndef FWD_NO_ANTICIPATION
	hrtimer_setup(&fwd->antic_timer, fwd_antic_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL);
#endif
#ifndef FWD_NO_HOLDS
	atomic_set(&fwd->inflight, 0);
#endif

	fwd->time_ms[FWD_TIME_READ_EXPIRE] = read_expire_ms;
	fwd->time_ms[FWD_TIME_WRITE_EXPIRE] = write_expire_ms;
#ifndef FWD_NO_AGING
	fwd->time_ms[FWD_TIME_PRIO_AGING] = prio_aging_ms;
#endif
	for (i = 0; i < FWD_TIME_COUNT; i++)
		fwd->time[i] = msecs_to_jiffies(fwd->time_ms[i]);
	fwd->writes_starved = writes_starved;
	fwd->fifo_batch = fifo_batch;
	fwd->front_merges = 1;
#ifndef FWD_NO_FAIRNESS
	fwd->fair_slack = fair_slack;
#endif
#ifndef FWD_NO_HOLDS
	fwd->dispatch_depth = fwd_default_dispatch_depth(q);
#endif
#ifndef FWD_NO_ANTICIPATION
	fwd->anticipate_us = anticipate_us;
#endif
	fwd->batch_dir = FWD_READ;
#ifndef FWD_HAVE_Q_ASYNC_DEPTH
	fwd->async_depth = fwd_default_async_depth(q->nr_requests);
#endif

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
#ifndef FWD_NO_FAIRNESS
	struct hlist_node *tmp;
	struct fwd_proc *p;
	int bkt;
#endif

#ifndef FWD_NO_ANTICIPATION
	hrtimer_cancel(&fwd->antic_timer);
#endif
	WARN_ONCE(fwd->nr_queued || !list_empty(&fwd->dispatch),
		  "fwdsched: exit with %u requests queued\n", fwd->nr_queued);
#ifndef FWD_NO_FAIRNESS
	hash_for_each_safe(fwd->procs, bkt, tmp, p, hash) {
		hash_del(&p->hash);
		put_pid(p->pid);
		kfree(p);
	}
#endif
#ifndef FWD_NO_DEBUGFS
	fwd_threads_free(fwd);
#endif
	kfree(fwd);
}

/* ---------------------------------------------------------------- sysfs */

#ifndef FWD_NO_HOLDS
/*
 * A tunable changed: the hold in effect may no longer apply, or one may
 * apply now.  Decide again, and run the queue unless something holds.
 */
static void fwd_retune(struct fwd_data *fwd)
{
	unsigned int hold;

	spin_lock(&fwd->lock);
#ifndef FWD_NO_ANTICIPATION
	if (READ_ONCE(fwd->hold) != FWD_HOLD_ANTIC_ON)
#endif
		fwd_decide_hold(fwd);
	hold = READ_ONCE(fwd->hold);
	spin_unlock(&fwd->lock);
	if (!hold)
		blk_mq_run_hw_queues(fwd->q, true);
}
#endif

/* Parses an unsigned tunable within [@min, @max]; bad input is refused. */
static int fwd_parse_uint(const char *page, unsigned int min, unsigned int max,
			  unsigned int *val)
{
	if (kstrtouint(page, 10, val) || *val < min || *val > max)
		return -EINVAL;
	return 0;
}

static unsigned int *fwd_tunable(struct elevator_queue *e, size_t offset)
{
	return (unsigned int *)((char *)e->elevator_data + offset);
}

static ssize_t fwd_show_uint(struct elevator_queue *e, size_t offset,
			     char *page)
{
	return sysfs_emit(page, "%u\n", READ_ONCE(*fwd_tunable(e, offset)));
}

/* A count within [@min, @max]. */
static ssize_t fwd_store_uint(struct elevator_queue *e, size_t offset,
			      unsigned int min, unsigned int max,
			      const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;
	unsigned int val;

	if (fwd_parse_uint(page, min, max, &val))
		return -EINVAL;
	spin_lock(&fwd->lock);
	WRITE_ONCE(*fwd_tunable(e, offset), val);
	spin_unlock(&fwd->lock);
#ifndef FWD_NO_HOLDS
	/* It may change what the scheduler holds. */
	fwd_retune(fwd);
#endif
	return count;
}

static ssize_t fwd_show_ms(struct elevator_queue *e, enum fwd_time t,
			   char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", READ_ONCE(fwd->time_ms[t]));
}

/* A time in ms within [1, FWD_EXPIRE_MAX_MS], also kept in jiffies. */
static ssize_t fwd_store_ms(struct elevator_queue *e, enum fwd_time t,
			    const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;
	unsigned int val;

	if (fwd_parse_uint(page, 1, FWD_EXPIRE_MAX_MS, &val))
		return -EINVAL;
	spin_lock(&fwd->lock);
	fwd->time_ms[t] = val;
	fwd->time[t] = msecs_to_jiffies(val);
	spin_unlock(&fwd->lock);
	return count;
}

/* The handlers of a count, the member of struct fwd_data of the same name. */
#define FWD_UINT_SHOW(name)						\
static ssize_t fwd_##name##_show(struct elevator_queue *e, char *page)	\
{									\
	return fwd_show_uint(e, offsetof(struct fwd_data, name), page);	\
}

#define FWD_UINT_STORE(name, min, max)					\
static ssize_t fwd_##name##_store(struct elevator_queue *e,		\
				  const char *page, size_t count)	\
{									\
	return fwd_store_uint(e, offsetof(struct fwd_data, name),	\
			      min, max, page, count);			\
}

/* The handlers of a time in ms, fwd_data.time_ms[t]. */
#define FWD_MS_SHOW(name, t)						\
static ssize_t fwd_##name##_show(struct elevator_queue *e, char *page)	\
{									\
	return fwd_show_ms(e, t, page);					\
}

#define FWD_MS_STORE(name, t)						\
static ssize_t fwd_##name##_store(struct elevator_queue *e,		\
				  const char *page, size_t count)	\
{									\
	return fwd_store_ms(e, t, page, count);				\
}

FWD_MS_SHOW(read_expire, FWD_TIME_READ_EXPIRE)
FWD_MS_STORE(read_expire, FWD_TIME_READ_EXPIRE)
FWD_MS_SHOW(write_expire, FWD_TIME_WRITE_EXPIRE)
FWD_MS_STORE(write_expire, FWD_TIME_WRITE_EXPIRE)
#ifndef FWD_NO_AGING
FWD_MS_SHOW(prio_aging_expire, FWD_TIME_PRIO_AGING)
FWD_MS_STORE(prio_aging_expire, FWD_TIME_PRIO_AGING)
#endif
FWD_UINT_SHOW(writes_starved)
FWD_UINT_STORE(writes_starved, 0, FWD_WRITES_STARVED_MAX)
FWD_UINT_SHOW(fifo_batch)
FWD_UINT_STORE(fifo_batch, 1, FWD_FIFO_BATCH_MAX)
FWD_UINT_SHOW(front_merges)
FWD_UINT_STORE(front_merges, 0, 1)
#ifndef FWD_NO_FAIRNESS
FWD_UINT_SHOW(fair_slack)
FWD_UINT_STORE(fair_slack, 0, FWD_FAIR_SLACK_OFF)
#endif
#ifndef FWD_NO_HOLDS
FWD_UINT_SHOW(dispatch_depth)
FWD_UINT_STORE(dispatch_depth, 0, FWD_DISPATCH_DEPTH_MAX)
#endif
#ifndef FWD_NO_ANTICIPATION
FWD_UINT_SHOW(anticipate_us)
FWD_UINT_STORE(anticipate_us, 0, FWD_ANTICIPATE_MAX_US)
#endif

#undef FWD_MS_STORE
#undef FWD_MS_SHOW
#undef FWD_UINT_STORE
#undef FWD_UINT_SHOW

static ssize_t fwd_async_depth_show(struct elevator_queue *e, char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", READ_ONCE(*fwd_async_depth(fwd)));
}

/* async_depth: its upper bound is nr_requests, which can change. */
static ssize_t fwd_async_depth_store(struct elevator_queue *e,
				     const char *page, size_t count)
{
	struct fwd_data *fwd = e->elevator_data;
	unsigned int val;

	if (fwd_parse_uint(page, 1, fwd->q->nr_requests, &val))
		return -EINVAL;
	spin_lock(&fwd->lock);
	WRITE_ONCE(*fwd_async_depth(fwd), val);
#ifndef FWD_HAVE_Q_ASYNC_DEPTH
	fwd->async_depth_set = true;
#endif
	spin_unlock(&fwd->lock);
	return count;
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
#ifndef FWD_NO_FAIRNESS
	FWD_ATTR(fair_slack),
#endif
#ifndef FWD_NO_HOLDS
	FWD_ATTR(dispatch_depth),
#endif
#ifndef FWD_NO_ANTICIPATION
	FWD_ATTR(anticipate_us),
#endif
#ifndef FWD_NO_AGING
	FWD_ATTR(prio_aging_expire),
#endif
	__ATTR_NULL
};

#undef FWD_ATTR

#ifndef FWD_NO_DEBUGFS
/* ---------------------------------------------------------------- debugfs */

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
#ifndef FWD_NO_ANTICIPATION
	/* Anticipations that a completion started, without the lock. */
	stats[FWD_STAT_ANTIC_HOLDS] += atomic_read(&fwd->antic_starts);
	stats[FWD_STAT_ANTIC_HITS] += atomic_read(&fwd->antic_taken_back);
	stats[FWD_STAT_ANTIC_TIMEOUTS] += atomic_read(&fwd->antic_timeouts);
#endif

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
	unsigned int hold, inflight;
	enum fwd_prio prio;
	struct request *rq;

	spin_lock(&fwd->lock);
	memcpy(n, fwd->queued, sizeof(n));
	list_for_each_entry(rq, &fwd->dispatch, queuelist)
		head++;
	hold = READ_ONCE(fwd->hold);
	inflight = atomic_read(&fwd->inflight);
	spin_unlock(&fwd->lock);

	seq_printf(m, "reads %u writes %u head %u inflight %u hold %s\n",
		   n[0][FWD_READ] + n[1][FWD_READ] + n[2][FWD_READ],
		   n[0][FWD_WRITE] + n[1][FWD_WRITE] + n[2][FWD_WRITE], head,
		   inflight, !hold ? "none" :
		   hold == FWD_HOLD_ANTIC_ON ? "anticipate" : "completion");
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
	return p->reqs[FWD_READ] || p->reqs[FWD_WRITE] ||
	       fwd_proc_queued(p) || atomic_read(&p->inflight);
}

static void fwd_proc_show(struct seq_file *m, struct fwd_proc *p)
{
	enum fwd_dir dir;

	seq_printf(m, "%d %s", fwd_proc_nr(p), fwd_prio_names[p->prio]);
	for (dir = 0; dir < FWD_DIR_COUNT; dir++)
		seq_printf(m, " %llu %llu %llu %llu", p->reqs[dir],
			   p->sectors[dir], fwd_jiffies_to_us(p->wait_sum[dir]),
			   fwd_jiffies_to_us(p->wait_max[dir]));
	seq_printf(m, " %u %d %llu %llu %llu %u %s\n",
		   p->queued[FWD_READ] + p->queued[FWD_WRITE] + p->head_queued,
		   atomic_read(&p->inflight), p->max_passed, p->vtime,
		   p->ttime_samples ? div_u64(p->ttime_ns, NSEC_PER_USEC) : 0,
		   fwd_idle_ms(p->last_used), p->comm);
}

/*
 * debugfs "procs": one line per process and class that dispatched or has
 * requests pending since the counters were reset.  Writing "reset" zeroes
 * the counters (not the scheduling state); anything else is refused.
 */
static int fwd_procs_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	enum fwd_prio prio;
	struct fwd_proc *p;
	int bkt;

	seq_puts(m, "# tgid class rd_reqs rd_sectors rd_wait_us rd_wait_max_us wr_reqs wr_sectors wr_wait_us wr_wait_max_us queued inflight max_passed vtime ttime_us idle_ms comm\n");
	seq_printf(m, "# sectors of 512 bytes; waits from insertion to dispatch, summed and maximum, in us with a resolution of %u us; max_passed in dispatches; vtime in 1/%u units of service; ttime_us mean think time (0: none measured)\n",
		   jiffies_to_usecs(1), FWD_VUNIT);
	spin_lock(&fwd->lock);
	hash_for_each(fwd->procs, bkt, p, hash)
		if (fwd_proc_shown(p))
			fwd_proc_show(m, p);
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		if (fwd_proc_shown(&fwd->nomem[prio]))
			fwd_proc_show(m, &fwd->nomem[prio]);
	spin_unlock(&fwd->lock);
	return 0;
}

static void fwd_proc_reset(struct fwd_proc *p)
{
	memset(p->reqs, 0, sizeof(p->reqs));
	memset(p->sectors, 0, sizeof(p->sectors));
	memset(p->wait_sum, 0, sizeof(p->wait_sum));
	memset(p->wait_max, 0, sizeof(p->wait_max));
	p->max_passed = 0;
}

/* Reads a one-word command written to a debugfs file. */
static int fwd_debugfs_cmd(const char __user *buf, size_t count, char *cmd,
			   size_t size)
{
	if (count >= size)
		return -EINVAL;
	if (copy_from_user(cmd, buf, count))
		return -EFAULT;
	cmd[count] = '\0';
	return 0;
}

static ssize_t fwd_procs_write(void *data, const char __user *buf,
			       size_t count, loff_t *ppos)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	struct fwd_thread *t;
	enum fwd_prio prio;
	struct fwd_proc *p;
	char cmd[8];
	int bkt, ret;

	ret = fwd_debugfs_cmd(buf, count, cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (!sysfs_streq(cmd, "reset"))
		return -EINVAL;

	spin_lock(&fwd->lock);
	hash_for_each(fwd->procs, bkt, p, hash)
		fwd_proc_reset(p);
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		fwd_proc_reset(&fwd->nomem[prio]);
	hash_for_each(fwd->threads, bkt, t, hash)
		t->reqs = 0;
	fwd->threads_other.reqs = 0;
	spin_unlock(&fwd->lock);
	return count;
}

static void fwd_thread_show(struct seq_file *m, struct fwd_thread *t)
{
	if (t->reqs)
		seq_printf(m, "%d %d %llu %u\n", t->pid, t->tgid, t->reqs,
			   fwd_idle_ms(t->last_used));
}

/*
 * debugfs "threads": requests dispatched per thread, while thread
 * accounting is on.  Writing "on" starts it afresh, "off" stops it and
 * frees its table; anything else is refused.
 */
static int fwd_threads_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	struct fwd_thread *t;
	int bkt;

	spin_lock(&fwd->lock);
	seq_printf(m, "# accounting %s; pid tgid reqs idle_ms (pid 0: threads beyond %u)\n",
		   fwd->threads_on ? "on" : "off", FWD_THREADS_MAX);
	hash_for_each(fwd->threads, bkt, t, hash)
		fwd_thread_show(m, t);
	fwd_thread_show(m, &fwd->threads_other);
	spin_unlock(&fwd->lock);
	return 0;
}

static ssize_t fwd_threads_write(void *data, const char __user *buf,
				 size_t count, loff_t *ppos)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	char cmd[8];
	bool on;
	int ret;

	ret = fwd_debugfs_cmd(buf, count, cmd, sizeof(cmd));
	if (ret)
		return ret;
	if (sysfs_streq(cmd, "on"))
		on = true;
	else if (sysfs_streq(cmd, "off"))
		on = false;
	else
		return -EINVAL;

	spin_lock(&fwd->lock);
	fwd_threads_free(fwd);
	fwd->threads_on = on;
	spin_unlock(&fwd->lock);
	return count;
}

/*
 * Jain's index, (sum x)^2 / (n * sum x^2), times 1e6, rounded down.  The
 * values are scaled down until they fit in 24 bits so that nothing
 * overflows; below that the result is exact.
 */
static u64 fwd_jain(const u64 *x, unsigned int n)
{
	u64 max = 0, sum = 0, sq = 0, lim;
	unsigned int i, shift = 0;

	/*
	 * Scaled so that n * max < 2^30: then n * sq < 2^60 and
	 * sum * 10^6 < 2^50, whatever the number of processes.
	 */
	lim = max_t(u64, div_u64(1ULL << 30, max(n, 1U)), 1);
	for (i = 0; i < n; i++)
		max = max(max, x[i]);
	while ((max >> shift) >= lim)
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

/* Collects into @x (at most @max) the active entries' requests. */
static unsigned int fwd_active_procs(struct fwd_data *fwd, u64 *x,
				     unsigned int max)
{
	unsigned int n = 0;
	enum fwd_prio prio;
	struct fwd_proc *p;
	int bkt;

	hash_for_each(fwd->procs, bkt, p, hash) {
		u64 reqs = p->reqs[FWD_READ] + p->reqs[FWD_WRITE];

		if (n < max && reqs &&
		    time_before(jiffies, p->last_used + FWD_ACTIVE_WINDOW))
			x[n++] = reqs;
	}
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++) {
		p = &fwd->nomem[prio];
		if (n < max && (p->reqs[FWD_READ] || p->reqs[FWD_WRITE]))
			x[n++] = p->reqs[FWD_READ] + p->reqs[FWD_WRITE];
	}
	return n;
}

static unsigned int fwd_active_threads(struct fwd_data *fwd, u64 *x,
				       unsigned int max)
{
	struct fwd_thread *t;
	unsigned int n = 0;
	int bkt;

	hash_for_each(fwd->threads, bkt, t, hash)
		if (n < max && t->reqs &&
		    time_before(jiffies, t->last_used + FWD_ACTIVE_WINDOW))
			x[n++] = t->reqs;
	if (n < max && fwd->threads_other.reqs)
		x[n++] = fwd->threads_other.reqs;
	return n;
}

/*
 * debugfs "fairness": Jain's index of the requests dispatched (since the
 * last reset) by the processes, and by the threads (while thread
 * accounting is on), that were active within the last FWD_ACTIVE_WINDOW.
 */
static int fwd_fairness_show(void *data, struct seq_file *m)
{
	struct request_queue *q = data;
	struct fwd_data *fwd = q->elevator->elevator_data;
	unsigned int max, np, nt;
	u64 *px, *tx;

	spin_lock(&fwd->lock);
	max = fwd->nr_procs + FWD_PRIO_COUNT + fwd->nr_threads + 1;
	spin_unlock(&fwd->lock);
	px = kvmalloc_array(max, sizeof(*px), GFP_KERNEL);
	tx = kvmalloc_array(max, sizeof(*tx), GFP_KERNEL);
	if (!px || !tx) {
		kvfree(px);
		kvfree(tx);
		return -ENOMEM;
	}

	spin_lock(&fwd->lock);
	np = fwd_active_procs(fwd, px, max);
	nt = fwd_active_threads(fwd, tx, max);
	spin_unlock(&fwd->lock);

	seq_printf(m, "window_ms %u\n", jiffies_to_msecs(FWD_ACTIVE_WINDOW));
	seq_printf(m, "procs %u\nprocs_jain %llu\n", np, fwd_jain(px, np));
	seq_printf(m, "threads %u\nthreads_jain %llu\n", nt, fwd_jain(tx, nt));
	kvfree(px);
	kvfree(tx);
	return 0;
}

static struct fwd_data *fwd_seq_data(struct seq_file *m)
{
	struct request_queue *q = m->private;

	return q->elevator->elevator_data;
}

static int fwd_rq_seq_show(struct seq_file *m, void *v)
{
	return __blk_mq_debugfs_rq_show(m, v);
}

/* The requests waiting in one sort tree, in sector order. */
#define FWD_DEBUGFS_SORTED(name, prio, dir)				\
static void *fwd_##name##_start(struct seq_file *m, loff_t *pos)	\
	__acquires(&fwd->lock)						\
{									\
	struct fwd_data *fwd = fwd_seq_data(m);				\
	struct request *rq;						\
	loff_t i;							\
									\
	spin_lock(&fwd->lock);						\
	rq = fwd_first_rq(&fwd->sort_list[prio][dir]);			\
	for (i = 0; rq && i < *pos; i++)				\
		rq = fwd_next_rq(rq);					\
	return rq;							\
}									\
static void *fwd_##name##_next(struct seq_file *m, void *v, loff_t *pos) \
{									\
	++*pos;								\
	return fwd_next_rq(v);						\
}									\
static void fwd_##name##_stop(struct seq_file *m, void *v)		\
	__releases(&fwd->lock)						\
{									\
	struct fwd_data *fwd = fwd_seq_data(m);				\
									\
	spin_unlock(&fwd->lock);					\
}									\
static const struct seq_operations fwd_##name##_seq_ops = {		\
	.start	= fwd_##name##_start,					\
	.next	= fwd_##name##_next,					\
	.stop	= fwd_##name##_stop,					\
	.show	= fwd_rq_seq_show,					\
}

FWD_DEBUGFS_SORTED(read_sorted, FWD_PRIO_BE, FWD_READ);
FWD_DEBUGFS_SORTED(write_sorted, FWD_PRIO_BE, FWD_WRITE);
FWD_DEBUGFS_SORTED(rt_read_sorted, FWD_PRIO_RT, FWD_READ);
FWD_DEBUGFS_SORTED(rt_write_sorted, FWD_PRIO_RT, FWD_WRITE);
FWD_DEBUGFS_SORTED(idle_read_sorted, FWD_PRIO_IDLE, FWD_READ);
FWD_DEBUGFS_SORTED(idle_write_sorted, FWD_PRIO_IDLE, FWD_WRITE);
#undef FWD_DEBUGFS_SORTED

static void *fwd_dispatch_start(struct seq_file *m, loff_t *pos)
	__acquires(&fwd->lock)
{
	struct fwd_data *fwd = fwd_seq_data(m);

	spin_lock(&fwd->lock);
	return seq_list_start(&fwd->dispatch, *pos);
}

static void *fwd_dispatch_next(struct seq_file *m, void *v, loff_t *pos)
{
	return seq_list_next(v, &fwd_seq_data(m)->dispatch, pos);
}

static void fwd_dispatch_stop(struct seq_file *m, void *v)
	__releases(&fwd->lock)
{
	spin_unlock(&fwd_seq_data(m)->lock);
}

static const struct seq_operations fwd_dispatch_seq_ops = {
	.start	= fwd_dispatch_start,
	.next	= fwd_dispatch_next,
	.stop	= fwd_dispatch_stop,
	.show	= blk_mq_debugfs_rq_show,
};

static const struct blk_mq_debugfs_attr fwd_queue_debugfs_attrs[] = {
	{"stats", 0400, fwd_stats_show},
	{"sweep_pos", 0400, fwd_sweep_pos_show},
	{"queued", 0400, fwd_queued_show},
	{"batch", 0400, fwd_batch_show},
	{"procs", 0600, fwd_procs_show, fwd_procs_write},
	{"threads", 0600, fwd_threads_show, fwd_threads_write},
	{"fairness", 0400, fwd_fairness_show},
	{"read_sorted", 0400, .seq_ops = &fwd_read_sorted_seq_ops},
	{"write_sorted", 0400, .seq_ops = &fwd_write_sorted_seq_ops},
	{"rt_read_sorted", 0400, .seq_ops = &fwd_rt_read_sorted_seq_ops},
	{"rt_write_sorted", 0400, .seq_ops = &fwd_rt_write_sorted_seq_ops},
	{"idle_read_sorted", 0400, .seq_ops = &fwd_idle_read_sorted_seq_ops},
	{"idle_write_sorted", 0400, .seq_ops = &fwd_idle_write_sorted_seq_ops},
	{"dispatch_list", 0400, .seq_ops = &fwd_dispatch_seq_ops},
	{},
};
#endif /* CONFIG_BLK_DEBUG_FS */
#endif

/* ---------------------------------------------------------------- registration */

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
#ifndef FWD_NO_FAIRNESS
		.prepare_request	= fwd_prepare_request,
		.finish_request		= fwd_finish_request,
#endif
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

#ifndef FWD_NO_DEBUGFS
#ifdef CONFIG_BLK_DEBUG_FS
	.queue_debugfs_attrs = fwd_queue_debugfs_attrs,
#endif
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
