/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fwdsched: what the sweep (fwdsched-iosched.c) and the per-process
 * service and hold (fwdsched-fair.c) share.
 */
#ifndef _FWDSCHED_H
#define _FWDSCHED_H

#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/hashtable.h>
#include <linux/hrtimer.h>
#include <linux/ioprio.h>
#include <linux/rbtree.h>
#include <linux/sched.h>
#include <linux/workqueue.h>

#include <trace/events/fwdsched.h>

enum fwd_dir {
	FWD_READ,
	FWD_WRITE,
	FWD_DIR_COUNT
};

/* I/O priority classes, served in this order. */
enum fwd_prio {
	FWD_PRIO_RT,
	FWD_PRIO_BE,
	FWD_PRIO_IDLE,
	FWD_PRIO_COUNT
};

/* The tunables that are times: kept in ms and in jiffies. */
enum fwd_time {
	FWD_TIME_READ_EXPIRE,
	FWD_TIME_WRITE_EXPIRE,
	FWD_TIME_PRIO_AGING,
	FWD_TIME_COUNT
};

/* Counters of debugfs "stats" (fwd_stat_names[]), see the rst file. */
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
	FWD_STAT_FG_HOLDS,
	FWD_STAT_EMPTY_DISPATCHES,
	FWD_STAT_PROCS_CREATED,
	FWD_STAT_PROCS_RETIRED,
	FWD_STAT_PROCS_NOMEM,
	FWD_STAT_COUNT
};

/*
 * Times of the completion path are kept in ticks of 1024 ns (ktime >> 10)
 * in an unsigned long: a word is read and written whole on every
 * architecture, so they can be shared without the lock on 32-bit ARM too.
 * They wrap after 73 minutes there; every comparison is of differences.
 */
#define FWD_TICK_SHIFT		10
#define FWD_US_TO_TICKS(us)	((unsigned long)(us) * NSEC_PER_USEC >> \
				 FWD_TICK_SHIFT)

static inline unsigned long fwd_ticks(u64 ns)
{
	return (unsigned long)(ns >> FWD_TICK_SHIFT);
}

/* fair_slack: this value, the largest, turns enforcement off. */
#define FWD_FAIR_SLACK_OFF	4096U
#define FWD_DISPATCH_DEPTH_MAX	4096U

/*
 * A process in one I/O priority class: the unit of fairness, see
 * fwdsched-fair.c.  Fields without a note are under fwd_data.lock.
 */
struct fwd_proc {
	/* In fwd_class.backlog while backlogged, by service. */
	struct rb_node node;
	u64 vtime;			/* service received, see FWD_VUNIT */
	unsigned long serial;		/* creation order; breaks ties */
	enum fwd_prio prio;
	unsigned int queued[FWD_DIR_COUNT];	/* waiting in the sweep */
	unsigned int head_queued;	/* waiting in the head list */
	/* Mean think time and its samples, see fwd_proc_window(). */
	unsigned int ttime;		/* in ticks */
	unsigned int ttime_samples;
	unsigned long cut;		/* a done whose window was given up */

	struct hlist_node hash;		/* fwd_data.procs */
	struct list_head lru;		/* fwd_data.lru, by last insertion */
	struct pid *pid;		/* NULL: a shared entry */
	unsigned long last_used;	/* jiffies of the last insertion */

	/* For debugfs "procs"; st is zeroed by "reset". */
	u64 wait_seq;			/* fwd_data.seq when it began to wait */
	struct {
		u64 max_passed;		/* most dispatches of others meanwhile */
		u64 reqs[FWD_DIR_COUNT];
		u64 sectors[FWD_DIR_COUNT];
		u64 wait_sum[FWD_DIR_COUNT];	/* insertion to dispatch */
		unsigned long wait_max[FWD_DIR_COUNT];	/* in jiffies */
	} st;
	char comm[TASK_COMM_LEN];

	/*
	 * Written by completions, without the lock, of the requests
	 * dispatched while the class had two processes backlogged or
	 * dispatch_depth was set (FWD_RQ_TRACKED): alone, a process needs
	 * neither, and its requests cost no atomic operation.
	 */
	unsigned long done ____cacheline_aligned_in_smp; /* last, in ticks */
	atomic_t inflight;		/* dispatched, not yet finished */
};

/* The requests and processes of one I/O priority class. */
struct fwd_class {
	struct rb_root sort[FWD_DIR_COUNT];	/* by start sector */
	struct list_head fifo[FWD_DIR_COUNT];	/* by insertion */
	unsigned int queued[FWD_DIR_COUNT];
	unsigned int async_writes;	/* of queued[FWD_WRITE], see fwd_rq_async() */
	/* Backlogged processes by service, and how many. */
	struct rb_root_cached backlog;
	unsigned int nr_backlogged;
	/* None joins or resumes below this, nor is counted below it with
	 * nothing in the sweep.
	 */
	u64 vbase;
};

struct fwd_data {
	/*
	 * The fields used by every insertion and dispatch come first.
	 * The lock protects everything but the fields marked otherwise;
	 * it is taken in process context only.
	 */
	spinlock_t lock;
	struct request_queue *q;
	unsigned int nr_queued;		/* in the sweep, see fwd_has_work() */
	sector_t sweep_pos;		/* end of the last dispatched request */
	enum fwd_dir batch_dir;
	unsigned int batch_count;	/* dispatched in the current batch */
	unsigned int starved;		/* read batches since a write batch */
	unsigned int fifo_batch;
	unsigned int writes_starved;
	unsigned int fair_slack;	/* in units of service */
	unsigned int dispatch_depth;	/* 0: no hold */
	unsigned int sync_depth;	/* with dispatch_depth 0; 0: off */
	struct fwd_proc *last_proc;	/* of the last insertion */
	struct fwd_proc *fg;		/* the foreground, see __fwd_fg_active() */
	unsigned long async_seen;	/* jiffies of the last async write */
	u64 seq;			/* dispatches so far */
	unsigned long time[FWD_TIME_COUNT];	/* in jiffies */
	struct list_head dispatch;	/* at-head insertions and requeues */
	struct fwd_class cls[FWD_PRIO_COUNT];

	/* Colder: tunables, the anticipation, counters, the table. */
	unsigned int time_ms[FWD_TIME_COUNT];
	unsigned int front_merges;
	unsigned int anticipate_us;	/* 0: off */
	unsigned int foreground_us;	/* 0: off */
	unsigned int foreground_idle;	/* with dispatch_depth 0 */
#ifndef FWD_HAVE_Q_ASYNC_DEPTH
	unsigned int async_depth;	/* before 7.0, see fwd_async_depth() */
	bool async_depth_set;
#endif
	struct fwd_proc *antic_proc;	/* the process anticipated */
	bool antic_fg;			/* for the foreground, against writes */
	struct hrtimer antic_timer;
	struct work_struct hold_work;	/* see fwd_hold_rerun() */
	u64 stats[FWD_STAT_COUNT];

	DECLARE_HASHTABLE(procs, 8);
	struct list_head lru;		/* least recently used first */
	unsigned int nr_procs;
	unsigned long proc_serial;
	/* Kernel threads' requests, and those without an entry. */
	struct fwd_proc shared[FWD_PRIO_COUNT];

	/*
	 * Touched by completions of requests dispatched while
	 * dispatch_depth was set, without the lock: how many are in
	 * flight, what the scheduler holds back for (see fwdsched-fair.c),
	 * and the latest time seen, in ticks (also moved by insertions).
	 */
	atomic_t inflight ____cacheline_aligned_in_smp;
	atomic_t hold;
	unsigned long clock;
};

/* Low bits of rq->elv.priv[0], which points to the owning fwd_proc. */
#define FWD_RQ_STARTED		1UL	/* dispatched (and charged) once */
#define FWD_RQ_COUNTED		2UL	/* counted in fwd_data.inflight */
#define FWD_RQ_TRACKED		4UL	/* counted in fwd_proc.inflight */
#define FWD_RQ_FLAGS		7UL

static inline enum fwd_dir fwd_rq_dir(struct request *rq)
{
	return rq_data_dir(rq) == READ ? FWD_READ : FWD_WRITE;
}

/* A write that no one waits for: writeback, not fsync nor O_DIRECT. */
static inline bool fwd_rq_async(struct request *rq)
{
	return rq_data_dir(rq) == WRITE && !rq_is_sync(rq);
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

/*
 * The process @rq is charged to, or NULL.  Only requests that the block
 * layer prepared for the scheduler have valid elv.priv[].
 */
static inline struct fwd_proc *fwd_rq_proc(struct request *rq)
{
	if (!(rq->rq_flags & RQF_USE_SCHED))
		return NULL;
	return (struct fwd_proc *)((unsigned long)rq->elv.priv[0] &
				   ~FWD_RQ_FLAGS);
}

static inline unsigned long fwd_rq_flags(struct request *rq)
{
	return (unsigned long)rq->elv.priv[0] & FWD_RQ_FLAGS;
}

static inline pid_t fwd_proc_nr(struct fwd_proc *p)
{
	return p && p->pid ? pid_nr(p->pid) : 0;
}

static inline unsigned int fwd_proc_pending(struct fwd_proc *p)
{
	return p->queued[FWD_READ] + p->queued[FWD_WRITE] + p->head_queued;
}

static inline bool fwd_proc_in_sweep(struct fwd_proc *p)
{
	return p->queued[FWD_READ] || p->queued[FWD_WRITE];
}

/* The scheduler of a debugfs attribute's queue. */
static inline struct fwd_data *fwd_of(void *data)
{
	return ((struct request_queue *)data)->elevator->elevator_data;
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

/* fwdsched-iosched.c */
struct request *fwd_find_from(struct rb_root *root, sector_t pos);
struct request *__fwd_aged_request(struct fwd_data *fwd,
				   enum fwd_prio prio);
enum fwd_prio fwd_first_prio(struct fwd_data *fwd);
bool fwd_head_expired(struct fwd_data *fwd, enum fwd_prio prio,
		      enum fwd_dir dir);

/* fwdsched-fair.c: processes and their service. */
void fwd_fair_init(struct fwd_data *fwd);
void fwd_fair_exit(struct fwd_data *fwd);
struct fwd_proc *fwd_owner_enqueue(struct fwd_data *fwd, struct request *rq);
void fwd_owner_resume(struct fwd_data *fwd, struct fwd_proc *p);
void fwd_owner_dispatch(struct fwd_data *fwd, struct request *rq);
void fwd_owner_done(struct request *rq, u64 now);
void fwd_owner_finish(struct request *rq);
bool fwd_limit(struct fwd_data *fwd, enum fwd_prio prio, u64 *limit);
bool fwd_dir_eligible(struct fwd_data *fwd, enum fwd_prio prio,
		      enum fwd_dir dir, u64 limit);
struct request *fwd_sweep_fair(struct fwd_data *fwd, enum fwd_prio prio,
			       enum fwd_dir dir, u64 limit,
			       enum fwd_decision *why);
void fwd_fair_idle(struct fwd_data *fwd, struct fwd_proc *p);
struct fwd_proc *__fwd_fg_active(struct fwd_data *fwd);

/* fwdsched-fair.c: the hold. */
bool fwd_hold_check(struct fwd_data *fwd);
void __fwd_hold_arrival(struct fwd_data *fwd, struct fwd_proc *p,
			struct request *rq);
void fwd_hold_rerun(struct fwd_data *fwd);

/*
 * The hot paths' checks, inline: with one process backlogged and no
 * dispatch_depth, none of fwdsched-fair.c's work runs.
 */

/* An aged request of a class below @prio, see __fwd_aged_request(). */
static inline struct request *fwd_aged_request(struct fwd_data *fwd,
					       enum fwd_prio prio)
{
	struct fwd_class *c = &fwd->cls[prio];

	/* Every request is of @prio: none of a lower class. */
	if (c->queued[FWD_READ] + c->queued[FWD_WRITE] == fwd->nr_queued)
		return NULL;
	return __fwd_aged_request(fwd, prio);
}

/* The limit for a pick: one request waiting leaves no choice to make. */
static inline bool fwd_fair_limit(struct fwd_data *fwd, enum fwd_prio prio,
				  u64 *limit)
{
	struct fwd_class *c = &fwd->cls[prio];

	return c->nr_backlogged > 1 &&
	       c->queued[FWD_READ] + c->queued[FWD_WRITE] > 1 &&
	       fwd_limit(fwd, prio, limit);
}

/* A request of @p waits in the sweep; one that resumes takes vbase. */
static inline void fwd_owner_queue(struct fwd_data *fwd, struct fwd_proc *p,
				   enum fwd_dir dir)
{
	if (!fwd_proc_in_sweep(p) && p->vtime < fwd->cls[p->prio].vbase)
		fwd_owner_resume(fwd, p);
	p->queued[dir]++;
}

/*
 * Are the writes of class @prio all asynchronous, with a foreground
 * reader of that class or a higher one active?  Then they wait for it
 * (see __fwd_fg_active()).
 */
static inline bool fwd_fg_holds_writes(struct fwd_data *fwd,
				       enum fwd_prio prio)
{
	struct fwd_class *c = &fwd->cls[prio];

	return fwd->fg && fwd->fg->prio <= prio && c->async_writes &&
	       c->async_writes == c->queued[FWD_WRITE] && __fwd_fg_active(fwd);
}

/* Is sync_depth in force: are two processes backlogged? */
static inline bool fwd_sync_wanted(struct fwd_data *fwd)
{
	return fwd->sync_depth && fwd->cls[FWD_PRIO_RT].nr_backlogged +
				  fwd->cls[FWD_PRIO_BE].nr_backlogged +
				  fwd->cls[FWD_PRIO_IDLE].nr_backlogged > 1;
}

/*
 * Is there a hold to decide: dispatch_depth, a hold, a foreground,
 * sync_depth?
 */
static inline bool fwd_hold_wanted(struct fwd_data *fwd)
{
	return fwd->dispatch_depth || fwd->fg || atomic_read(&fwd->hold) ||
	       fwd_sync_wanted(fwd);
}

/* For fwd_has_work(): a hold is in effect, or is being decided again. */
static inline bool fwd_hold_blocks(struct fwd_data *fwd)
{
	return atomic_read(&fwd->hold);
}

/* After a dispatch or insertions, and when a tunable changed. */
static inline void fwd_hold_update(struct fwd_data *fwd)
{
	if (fwd_hold_wanted(fwd))
		fwd_hold_check(fwd);
}

static inline void fwd_hold_arrival(struct fwd_data *fwd, struct fwd_proc *p,
				    struct request *rq)
{
	if (fwd->antic_proc)
		__fwd_hold_arrival(fwd, p, rq);
}

#ifdef CONFIG_BLK_DEBUG_FS
int fwd_procs_show(void *data, struct seq_file *m);
ssize_t fwd_procs_write(void *data, const char __user *buf, size_t count,
			loff_t *ppos);
#endif

#endif /* _FWDSCHED_H */
