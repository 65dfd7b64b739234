// SPDX-License-Identifier: GPL-2.0
/*
 * fwdsched: per-process service, eligibility, and the hold.
 *
 * Every request is charged to its process in its I/O priority class
 * (struct fwd_proc).  While two or more processes of a class are
 * backlogged, the sweep takes only requests of processes within
 * fair_slack units of service of the least served one, V.  The hold
 * keeps requests back for the least served process (dispatch_depth,
 * anticipation, sync_depth) and for an active foreground reader.
 * Entries are keyed by thread group in a table of the scheduler's own:
 * the block layer's io_context is per thread (unless CLONE_IO).
 *
 * See Documentation/block/fwdsched-iosched.rst.
 */
#include <linux/kernel.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/slab.h>
#include <linux/jiffies.h>
#include <linux/pid.h>
#include <linux/math64.h>
#include <linux/seq_file.h>
#include <linux/uaccess.h>

#include "elevator.h"
#include "blk-mq.h"
#include "blk-mq-sched.h"
/* Out of tree only: what older kernels lack. */
#include "compat.h"
#include "fwdsched.h"

/*
 * Service in units: one for the command and one per 32 KiB.  A unit is
 * FWD_VUNIT vtime at the default level, fwd_level_cost[l] at level l; a
 * write without REQ_SYNC costs FWD_ASYNC_CHARGE times more (as in BFQ).
 */
#define FWD_VUNIT		16U
#define FWD_UNIT_SECTORS_SHIFT	6
#define FWD_ASYNC_CHARGE	3U
static const u8 fwd_level_cost[IOPRIO_NR_LEVELS] = {
	8, 9, 11, 13, 16, 21, 32, 64
};

/* Requests of the sweep examined for an eligible one, see fwd_sweep_fair(). */
#define FWD_SCAN_MAX		16

/* Think time: weight of the running mean, cap of a sample, samples trusted. */
#define FWD_TTIME_WEIGHT	8
#define FWD_TTIME_CAP		FWD_US_TO_TICKS(50 * USEC_PER_MSEC)
#define FWD_TTIME_SAMPLES	2
/* The window: twice the think time plus a margin, at most the maximum. */
#define FWD_WINDOW_MARGIN	FWD_US_TO_TICKS(250)
#define FWD_WINDOW_MAX		FWD_US_TO_TICKS(20 * USEC_PER_MSEC)

/* Entries kept before idle ones are retired, and how long idle is. */
#define FWD_PROCS_SOFT_MAX	1024U
#define FWD_ACTIVE_WINDOW	(10 * HZ)

/* fwd_data.hold beyond the in-flight thresholds, see fwd_hold_set(). */
#define FWD_HOLD_ANTIC_ON		(FWD_DISPATCH_DEPTH_MAX + 1)
#define FWD_HOLD_TIMED_OUT	(FWD_DISPATCH_DEPTH_MAX + 2)
#define FWD_HOLD_RERUN		(FWD_DISPATCH_DEPTH_MAX + 3)

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

/* ---------------------------------------------------------------- backlog */

static bool fwd_vtime_less(struct rb_node *a, const struct rb_node *b)
{
	const struct fwd_proc *pa = rb_entry(a, struct fwd_proc, node);
	const struct fwd_proc *pb = rb_entry(b, struct fwd_proc, node);

	return pa->vtime < pb->vtime ||
	       (pa->vtime == pb->vtime && pa->serial < pb->serial);
}

static inline struct fwd_proc *fwd_node_proc(struct rb_node *node)
{
	return node ? rb_entry(node, struct fwd_proc, node) : NULL;
}

static void fwd_backlog_leave(struct fwd_data *fwd, struct fwd_proc *p)
{
	struct fwd_class *c = &fwd->cls[p->prio];

	rb_erase_cached(&p->node, &c->backlog);
	RB_CLEAR_NODE(&p->node);
	c->nr_backlogged--;
}

/* Raises @p's service; it moves in the backlog past its successor only. */
static inline void fwd_proc_set_vtime(struct fwd_data *fwd,
				      struct fwd_proc *p, u64 vtime)
{
	struct fwd_class *c = &fwd->cls[p->prio];
	struct rb_node *next;

	p->vtime = vtime;
	if (c->nr_backlogged < 2 || RB_EMPTY_NODE(&p->node))
		return;
	next = rb_next(&p->node);
	if (!next || fwd_vtime_less(&p->node, next))
		return;
	rb_erase_cached(&p->node, &c->backlog);
	rb_add_cached(&p->node, &c->backlog, fwd_vtime_less);
}

/*
 * The one notion of a process's next request: expected within its window
 * after a completion, twice its mean think time plus a margin.  It keeps
 * a process backlogged between two requests, and bounds anticipation.
 */
static unsigned long fwd_proc_window(struct fwd_proc *p)
{
	if (p->ttime_samples < FWD_TTIME_SAMPLES)
		return FWD_WINDOW_MAX;
	return min_t(unsigned long, 2UL * p->ttime + FWD_WINDOW_MARGIN,
		     FWD_WINDOW_MAX);
}

/*
 * Think time known (two samples), not the shared entry: the only kind of
 * process anticipation, sync_depth and the foreground wait for.
 */
static bool fwd_proc_thinks(struct fwd_proc *p)
{
	return p->pid && p->ttime_samples >= FWD_TTIME_SAMPLES;
}

/* Ticks left of @p's window at fwd_data.clock, or 0. */
static unsigned long fwd_window_left(struct fwd_data *fwd, struct fwd_proc *p,
				     unsigned long window)
{
	unsigned long done = READ_ONCE(p->done);
	unsigned long now = READ_ONCE(fwd->clock);
	long left;

	if (!done || done == p->cut)
		return 0;
	/* The clock may lag a completion that did not move it. */
	if ((long)(done - now) > 0)
		now = done;
	left = (long)(done + window - now);
	return left > 0 ? left : 0;
}

/* Backlogged: requests waiting or in flight, or inside the window. */
static bool fwd_proc_backlogged(struct fwd_data *fwd, struct fwd_proc *p)
{
	/* Pairs with the barrier before the decrement in fwd_owner_finish(). */
	if (fwd_proc_pending(p) || atomic_read_acquire(&p->inflight))
		return true;
	return fwd_window_left(fwd, p, fwd_proc_window(p));
}

/*
 * V, the least service of a backlogged process of @prio (U64_MAX: none),
 * pruning those at the front no longer backlogged; one with nothing in
 * the sweep counts at least vbase.  The one rule against banked credit:
 * vbase follows V and fwd_fair_idle(), and a process that joins or
 * resumes takes at least vbase.
 */
static u64 fwd_least_service(struct fwd_data *fwd, enum fwd_prio prio)
{
	struct fwd_class *c = &fwd->cls[prio];
	struct fwd_proc *p;
	u64 v = U64_MAX;

	while ((p = fwd_node_proc(rb_first_cached(&c->backlog))) &&
	       !fwd_proc_backlogged(fwd, p))
		fwd_backlog_leave(fwd, p);
	for (; p && p->vtime < v; p = fwd_node_proc(rb_next(&p->node))) {
		if (fwd_proc_in_sweep(p)) {
			v = p->vtime;
			break;
		}
		v = min(v, max(p->vtime, c->vbase));
	}
	if (v != U64_MAX)
		c->vbase = max(c->vbase, v);
	return v;
}

/*
 * The most service a process of @prio may have had for the sweep to take
 * its requests, V + fair_slack units; false with nothing to enforce (off,
 * or fewer than two processes backlogged).
 */
bool fwd_limit(struct fwd_data *fwd, enum fwd_prio prio, u64 *limit)
{
	struct fwd_class *c = &fwd->cls[prio];
	u64 v;

	if (c->nr_backlogged < 2 || fwd->fair_slack >= FWD_FAIR_SLACK_OFF)
		return false;
	v = fwd_least_service(fwd, prio);
	if (v == U64_MAX || c->nr_backlogged < 2)
		return false;
	*limit = v + (u64)fwd->fair_slack * FWD_VUNIT;
	return true;
}

/* Does a request of a process within @limit wait in @prio, @dir? */
bool fwd_dir_eligible(struct fwd_data *fwd, enum fwd_prio prio,
		      enum fwd_dir dir, u64 limit)
{
	struct rb_node *node = rb_first_cached(&fwd->cls[prio].backlog);
	struct fwd_proc *p;

	for (; (p = fwd_node_proc(node)) && p->vtime <= limit;
	     node = rb_next(node))
		if (p->queued[dir])
			return true;
	return false;
}

static inline bool fwd_eligible(struct request *rq, u64 limit)
{
	return fwd_rq_proc(rq)->vtime <= limit;
}

/* The oldest request of the least served process with one in @prio, @dir. */
static struct request *fwd_fallback(struct fwd_data *fwd, enum fwd_prio prio,
				    enum fwd_dir dir)
{
	struct fwd_class *c = &fwd->cls[prio];
	struct rb_node *node = rb_first_cached(&c->backlog);
	struct request *rq;
	struct fwd_proc *p;

	while ((p = fwd_node_proc(node)) && !p->queued[dir])
		node = rb_next(node);
	list_for_each_entry(rq, &c->fifo[dir], queuelist)
		if (fwd_rq_proc(rq) == p)
			return rq;
	return list_first_entry(&c->fifo[dir], struct request, queuelist);
}

/*
 * The sweep among requests of processes within @limit (one at least
 * waits in @prio, @dir): the lowest at or above the position, else the
 * lowest below (a detour, from which the sweep continues, or a wrap).
 * After FWD_SCAN_MAX requests in vain, fwd_fallback() (O(nr_requests)).
 */
struct request *fwd_sweep_fair(struct fwd_data *fwd, enum fwd_prio prio,
			       enum fwd_dir dir, u64 limit,
			       enum fwd_decision *why)
{
	struct rb_root *root = &fwd->cls[prio].sort[dir];
	struct request *start, *rq;
	int budget = FWD_SCAN_MAX;

	start = fwd_find_from(root, fwd->sweep_pos);
	for (rq = start; rq && budget; rq = fwd_next_rq(rq), budget--)
		if (fwd_eligible(rq, limit))
			goto above;
	if (!rq) {
		for (rq = fwd_first_rq(root); rq != start && budget;
		     rq = fwd_next_rq(rq), budget--)
			if (fwd_eligible(rq, limit))
				goto below;
	}
	fwd->stats[FWD_STAT_FAIR_FALLBACKS]++;
	rq = fwd_fallback(fwd, prio, dir);
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
	if (start)
		fwd->stats[FWD_STAT_DETOURS]++;
	*why = start ? FWD_DECIDE_DETOUR : FWD_DECIDE_WRAP;
	return rq;
}

/*
 * The sweep served @p beyond the limit, none within it having a request:
 * vbase rises to fair_slack + 1 units below @p, so that the processes
 * between two requests do not bank the service they miss.
 */
void fwd_fair_idle(struct fwd_data *fwd, struct fwd_proc *p)
{
	u64 lag = (u64)(fwd->fair_slack + 1) * FWD_VUNIT;

	if (p && p->vtime > lag)
		fwd->cls[p->prio].vbase = max(fwd->cls[p->prio].vbase,
					      p->vtime - lag);
}

/* Ticks left of the foreground's window. */
static unsigned long fwd_fg_left(struct fwd_data *fwd, struct fwd_proc *p)
{
	return fwd_window_left(fwd, p, min(2UL * p->ttime + FWD_WINDOW_MARGIN,
					   FWD_US_TO_TICKS(fwd->foreground_us)));
}

/*
 * The foreground: the process of the last read dispatched during
 * writeback whose mean think time is at most foreground_us (an
 * application loading its files).  Active while it has reads waiting or
 * in flight, and for its window after a completion (at most
 * foreground_us); meanwhile asynchronous writes wait for it unless
 * expired.  Returns it, or NULL (and forgets it).
 */
struct fwd_proc *__fwd_fg_active(struct fwd_data *fwd)
{
	struct fwd_proc *p = fwd->fg;

	if (p->ttime <= FWD_US_TO_TICKS(fwd->foreground_us) &&
	    (fwd_proc_in_sweep(p) || atomic_read(&p->inflight) ||
	     fwd_fg_left(fwd, p)))
		return p;
	fwd->fg = NULL;
	return NULL;
}

/*
 * Writeback: asynchronous writes wait in @c, or were inserted in the last
 * second (with many tags all may be on the device).
 */
static bool fwd_writeback(struct fwd_data *fwd, struct fwd_class *c)
{
	return fwd->foreground_us && (c->async_writes ||
	       time_in_range(jiffies, fwd->async_seen, fwd->async_seen + HZ));
}

/* ---------------------------------------------------------------- owners */

static void fwd_proc_init(struct fwd_proc *p, enum fwd_prio prio)
{
	RB_CLEAR_NODE(&p->node);
	INIT_HLIST_NODE(&p->hash);
	INIT_LIST_HEAD(&p->lru);
	p->prio = prio;
}

/*
 * Retires at most two entries, not backlogged, from the front of the LRU
 * list: unused for FWD_ACTIVE_WINDOW, or any beyond FWD_PROCS_SOFT_MAX.
 */
static void fwd_procs_retire(struct fwd_data *fwd)
{
	int i;

	for (i = 0; i < 2; i++) {
		struct fwd_proc *p;

		p = list_first_entry_or_null(&fwd->lru, struct fwd_proc, lru);
		if (!p || p == fwd->last_proc || p == fwd->antic_proc ||
		    p == fwd->fg)
			return;
		if (fwd->nr_procs <= FWD_PROCS_SOFT_MAX &&
		    time_before(jiffies, p->last_used + FWD_ACTIVE_WINDOW))
			return;
		if (fwd_proc_backlogged(fwd, p)) {
			list_move_tail(&p->lru, &fwd->lru);
			continue;
		}
		if (!RB_EMPTY_NODE(&p->node))
			fwd_backlog_leave(fwd, p);
		hash_del(&p->hash);
		list_del(&p->lru);
		fwd->nr_procs--;
		fwd->stats[FWD_STAT_PROCS_RETIRED]++;
		put_pid(p->pid);
		kfree(p);
	}
}

/*
 * The entry of the current process in class @prio, created without
 * sleeping.  Kernel threads (flushers, kworkers, loop, dm) and failed
 * allocations share one entry per class, "(kernel)".
 */
static struct fwd_proc *fwd_proc_get(struct fwd_data *fwd, enum fwd_prio prio)
{
	struct pid *pid = task_tgid(current);
	unsigned int key = hash_ptr(pid, 8) ^ prio;
	struct fwd_proc *p = fwd->last_proc;

	if (p && p->pid == pid && p->prio == prio)
		return p;
	if (current->flags & PF_KTHREAD)
		return &fwd->shared[prio];
	hash_for_each_possible(fwd->procs, p, hash, key)
		if (p->pid == pid && p->prio == prio) {
			/* To the LRU end, where last_proc mostly is. */
			list_move_tail(&p->lru, &fwd->lru);
			goto found;
		}

	fwd_procs_retire(fwd);
	p = kzalloc_node(sizeof(*p), GFP_NOWAIT | __GFP_NOWARN, fwd->q->node);
	if (!p) {
		fwd->stats[FWD_STAT_PROCS_NOMEM]++;
		return &fwd->shared[prio];
	}
	fwd_proc_init(p, prio);
	p->pid = get_pid(pid);
	p->serial = ++fwd->proc_serial;
	strscpy(p->comm, current->comm, sizeof(p->comm));
	hash_add(fwd->procs, &p->hash, key);
	list_add_tail(&p->lru, &fwd->lru);
	fwd->nr_procs++;
	fwd->stats[FWD_STAT_PROCS_CREATED]++;
found:
	fwd->last_proc = p;
	return p;
}

/* A think-time sample: the gap from @p's last completion to @now. */
static void fwd_think(struct fwd_proc *p, unsigned long now)
{
	unsigned long done = READ_ONCE(p->done);
	unsigned long t;

	if (!done || (long)(now - done) <= 0)
		return;
	t = min_t(unsigned long, now - done, FWD_TTIME_CAP);
	p->ttime = !p->ttime_samples ? t :
		   (p->ttime * (FWD_TTIME_WEIGHT - 1) + t) / FWD_TTIME_WEIGHT;
	if (p->ttime_samples < FWD_TTIME_WEIGHT)
		p->ttime_samples++;
}

/* A request enters: its process, a think-time sample, the backlog. */
struct fwd_proc *fwd_owner_enqueue(struct fwd_data *fwd, struct request *rq)
{
	struct fwd_proc *p = fwd_rq_proc(rq);
	unsigned long now = READ_ONCE(fwd->clock);
	struct fwd_class *c;

	lockdep_assert_held(&fwd->lock);

	/* blk-mq stamps requests while a scheduler is attached. */
	if (rq->start_time_ns) {
		now = fwd_ticks(rq->start_time_ns);
		if ((long)(now - READ_ONCE(fwd->clock)) > 0)
			WRITE_ONCE(fwd->clock, now);
	}
	if (!p) {
		p = fwd_proc_get(fwd, fwd_rq_prio(rq));
		rq->elv.priv[0] = (void *)((unsigned long)p | fwd_rq_flags(rq));
	}
	if (!fwd_proc_pending(p)) {
		p->wait_seq = fwd->seq;
		if (!atomic_read(&p->inflight))
			fwd_think(p, now);
	}
	p->last_used = jiffies;

	c = &fwd->cls[p->prio];
	/* Its window ran out, not yet pruned: it joins anew (alone, stays). */
	if (!RB_EMPTY_NODE(&p->node) && c->nr_backlogged > 1 &&
	    !fwd_proc_backlogged(fwd, p))
		fwd_backlog_leave(fwd, p);
	if (RB_EMPTY_NODE(&p->node)) {
		if (c->nr_backlogged)
			fwd_least_service(fwd, p->prio);
		p->vtime = max(p->vtime, c->vbase);
		rb_add_cached(&p->node, &c->backlog, fwd_vtime_less);
		c->nr_backlogged++;
	}
	return p;
}

/* A process resumes after a pause: it takes vbase, see fwd_owner_queue(). */
void fwd_owner_resume(struct fwd_data *fwd, struct fwd_proc *p)
{
	fwd_proc_set_vtime(fwd, p, fwd->cls[p->prio].vbase);
}

/* Charges the dispatch of @rq to its owner, once. */
void fwd_owner_dispatch(struct fwd_data *fwd, struct request *rq)
{
	struct fwd_proc *p = fwd_rq_proc(rq);
	unsigned long flags = FWD_RQ_STARTED, wait;
	enum fwd_dir dir = fwd_rq_dir(rq);
	struct fwd_class *c;
	u64 passed;
	bool wb;

	if (!p)
		return;
	passed = fwd->seq - p->wait_seq;
	p->st.max_passed = max(p->st.max_passed, passed);
	p->wait_seq = fwd->seq + 1;
	if (fwd_rq_flags(rq) & FWD_RQ_STARTED)
		return;

	c = &fwd->cls[p->prio];
	wb = dir == FWD_READ && fwd_writeback(fwd, c);
	if (wb && fwd_proc_thinks(p) &&
	    p->ttime <= FWD_US_TO_TICKS(fwd->foreground_us))
		fwd->fg = p;
	/*
	 * Counted in flight: every request with dispatch_depth; else the
	 * asynchronous writes (the foreground waits for them), with
	 * foreground_idle the foreground's reads (their completions start
	 * its anticipation), and with sync_depth those dispatched while two
	 * processes are backlogged (fwd_sync_cap()).
	 */
	if (fwd->dispatch_depth || (fwd->foreground_us && fwd_rq_async(rq)) ||
	    (wb && fwd->fg == p && fwd->foreground_idle) ||
	    fwd_sync_wanted(fwd)) {
		flags |= FWD_RQ_COUNTED | FWD_RQ_TRACKED;
		atomic_inc(&fwd->inflight);
	} else if (c->nr_backlogged > 1 || fwd->fg || wb) {
		flags |= FWD_RQ_TRACKED;
	}
	/* Untracked, no pointer to @p is kept: it may be retired. */
	if (flags & FWD_RQ_TRACKED) {
		atomic_inc(&p->inflight);
		rq->elv.priv[0] = (void *)((unsigned long)p | flags);
	} else {
		rq->elv.priv[0] = (void *)flags;
		if (READ_ONCE(p->done))
			WRITE_ONCE(p->done, 0);	/* no think time across it */
	}
	/* Alone, it is V: a process joining later starts from there. */
	if (c->nr_backlogged < 2)
		c->vbase = max(c->vbase, p->vtime);
	fwd_proc_set_vtime(fwd, p, p->vtime + fwd_rq_cost(rq));
	/* Nothing else waited: the others bank no more than fair_idle. */
	if (c->nr_backlogged > 1 && !c->queued[FWD_READ] &&
	    !c->queued[FWD_WRITE] && fwd->fair_slack < FWD_FAIR_SLACK_OFF)
		fwd_fair_idle(fwd, p);

	wait = jiffies - (unsigned long)rq->fifo_time;
	p->st.reqs[dir]++;
	p->st.sectors[dir] += blk_rq_sectors(rq);
	p->st.wait_sum[dir] += wait;
	p->st.wait_max[dir] = max(p->st.wait_max[dir], wait);
}

/* ---------------------------------------------------------------- holds */

/*
 * What fairness asks of the next dispatch in @prio, the first class with
 * requests.  W: the least served backlogged process with nothing in the
 * sweep.  BLOCKED: no request within the limit waits; OWED: W has nothing
 * in flight and no one waiting had less (at vbase); FREE: sweep on.
 */
enum fwd_fair_state { FWD_FAIR_FREE, FWD_FAIR_OWED, FWD_FAIR_BLOCKED };

/* No class has requests, or one aged or expired: no fairness hold. */
static bool fwd_hold_exempt(struct fwd_data *fwd, enum fwd_prio prio)
{
	return prio == FWD_PRIO_COUNT || fwd_aged_request(fwd, prio) ||
	       fwd_head_expired(fwd, prio, FWD_READ) ||
	       fwd_head_expired(fwd, prio, FWD_WRITE);
}

static enum fwd_fair_state fwd_fair_state(struct fwd_data *fwd,
					  enum fwd_prio prio,
					  struct fwd_proc **wp)
{
	u64 limit, v = 0, qmin = U64_MAX;
	struct fwd_proc *p, *w = NULL;
	bool eligible = false;
	struct rb_node *node;

	if (fwd_hold_exempt(fwd, prio) || !fwd_limit(fwd, prio, &limit))
		return FWD_FAIR_FREE;
	node = rb_first_cached(&fwd->cls[prio].backlog);
	for (; (p = fwd_node_proc(node)); node = rb_next(node)) {
		if (w && p->vtime > limit && p->vtime >= v)
			break;
		if (fwd_proc_in_sweep(p)) {
			eligible |= p->vtime <= limit;
			qmin = min(qmin, p->vtime);
		} else if (!w) {
			w = p;
			v = max(p->vtime, fwd->cls[prio].vbase);
		}
	}
	if (!w)
		return FWD_FAIR_FREE;
	*wp = w;
	if (!eligible)
		return FWD_FAIR_BLOCKED;
	if (qmin < v || atomic_read(&w->inflight))
		return FWD_FAIR_FREE;
	return FWD_FAIR_OWED;
}

/*
 * Ticks to anticipate @w's next request for, or 0: on a device serving a
 * request or two at a time, the rest of its window if it thinks within
 * anticipate_us.
 */
static unsigned long fwd_antic_delay(struct fwd_data *fwd, struct fwd_proc *w)
{
	unsigned long max = FWD_US_TO_TICKS(fwd->anticipate_us);

	if (!max || fwd->dispatch_depth > 2 || !fwd_proc_thinks(w) ||
	    w->ttime > max || atomic_read(&w->inflight))
		return 0;
	return fwd_window_left(fwd, w, min(fwd_proc_window(w), max));
}

/*
 * A process that sync_depth keeps room for: think time known, backlogged
 * with nothing in the sweep (between two requests, or waiting for one on
 * the device); of a class above @first (the first with requests), or of
 * @first within the limit; none while a request expired or aged.  Its
 * next request is served first, by class or by fairness.
 */
static struct fwd_proc *fwd_sync_proc(struct fwd_data *fwd,
				      enum fwd_prio first)
{
	u64 limit = U64_MAX;
	struct rb_node *node;
	struct fwd_proc *p;
	enum fwd_prio prio;

	if (fwd_hold_exempt(fwd, first))
		return NULL;
	for (prio = 0; prio <= first; prio++) {
		if (prio == first && !fwd_limit(fwd, first, &limit))
			return NULL;
		node = rb_first_cached(&fwd->cls[prio].backlog);
		for (; (p = fwd_node_proc(node)) && p->vtime <= limit;
		     node = rb_next(node))
			if (fwd_proc_thinks(p) && !fwd_proc_in_sweep(p) &&
			    fwd_proc_backlogged(fwd, p))
				return p;
	}
	return NULL;
}

/*
 * sync_depth (dispatch_depth 0): while such a process W is backlogged,
 * the others get at most sync_depth of the @inflight requests beside W's
 * own.  A threshold of at least one: the device never idles for W.
 */
static unsigned int fwd_sync_cap(struct fwd_data *fwd, enum fwd_prio prio,
				 enum fwd_hold_reason *reason,
				 struct fwd_proc **w, unsigned int inflight)
{
	unsigned int n = fwd->sync_depth;
	struct fwd_proc *p;

	if (!n || inflight < n)
		return 0;
	p = fwd_sync_proc(fwd, prio);
	if (!p)
		return 0;
	n = min_t(unsigned int, n + atomic_read(&p->inflight),
		  FWD_DISPATCH_DEPTH_MAX);
	if (inflight < n)
		return 0;
	*reason = FWD_HOLD_FAIR;
	*w = p;
	return n;
}

/*
 * What the next dispatch waits for, with nothing at the head:
 *  - the foreground, when only asynchronous writes (none expired nor
 *    aged) wait in the first class: until the requests counted in flight
 *    completed, then, with dispatch_depth or foreground_idle, its next
 *    read for the rest of its window.
 * With dispatch_depth (an SD card):
 *  - fairness blocks, or the next request is owed to W: the device gets
 *    no more of the others' while it has n = max(1, dispatch_depth - 1),
 *    and with nothing in flight W's next request is anticipated;
 *  - dispatch_depth requests in flight.
 * Without (command queueing): sync_depth, see fwd_sync_cap().
 */
static unsigned int fwd_hold_next(struct fwd_data *fwd,
				  enum fwd_hold_reason *reason,
				  struct fwd_proc **w, unsigned long *delay)
{
	unsigned int depth = fwd->dispatch_depth, inflight, n;
	enum fwd_fair_state fair;
	enum fwd_prio prio;

	if (!fwd->nr_queued || !list_empty(&fwd->dispatch))
		return 0;
	inflight = atomic_read(&fwd->inflight);
	prio = fwd_first_prio(fwd);
	if (!fwd->cls[prio].queued[FWD_READ] &&
	    fwd_fg_holds_writes(fwd, prio) &&
	    !fwd_head_expired(fwd, prio, FWD_WRITE) &&
	    !fwd_aged_request(fwd, prio)) {
		*reason = FWD_HOLD_FOREGROUND;
		*w = fwd->fg;
		if (inflight)
			return 1;
		*delay = depth || fwd->foreground_idle ?
			 fwd_fg_left(fwd, *w) : 0;
		return *delay ? FWD_HOLD_ANTIC_ON : 0;
	}
	if (!depth)
		return fwd_sync_cap(fwd, prio, reason, w, inflight);
	n = max(1U, depth - 1);
	fair = fwd_fair_state(fwd, prio, w);
	*reason = FWD_HOLD_FAIR;
	if (fair == FWD_FAIR_BLOCKED) {
		if (inflight >= n)
			return n;
		*delay = inflight ? 0 : fwd_antic_delay(fwd, *w);
		if (*delay) {
			*reason = FWD_HOLD_ANTIC;
			return FWD_HOLD_ANTIC_ON;
		}
	} else if (fair == FWD_FAIR_OWED && inflight >= n) {
		return n;
	}
	*reason = FWD_HOLD_DEPTH;
	*w = NULL;
	return inflight >= depth ? depth : 0;
}

/* An anticipation (@old) ended, by its request or by its timer. */
static void fwd_antic_ended(struct fwd_data *fwd, unsigned int old)
{
	struct fwd_proc *w = fwd->antic_proc;

	if (old == FWD_HOLD_ANTIC_ON) {
		hrtimer_try_to_cancel(&fwd->antic_timer);
		fwd->stats[FWD_STAT_ANTIC_HITS]++;
		trace_fwdsched_anticipated(fwd->q, fwd_proc_nr(w), true);
	} else if (old == FWD_HOLD_TIMED_OUT) {
		/* The sweep goes on without it: its window is given up. */
		fwd->stats[FWD_STAT_ANTIC_TIMEOUTS]++;
		trace_fwdsched_anticipated(fwd->q, fwd_proc_nr(w), false);
		if (w)
			w->cut = READ_ONCE(w->done);
	} else {
		return;
	}
	fwd->antic_proc = NULL;
}

/*
 * Sets fwd_data.hold; returns whether the scheduler holds.  The hold is:
 *  - 0: dispatch at will;
 *  - 1 .. FWD_DISPATCH_DEPTH_MAX: until fewer are in flight.  Stored,
 *    then the count is read; a completion decrements the count, then
 *    reads the hold (both fully ordered), so one sees the other.  The
 *    completion that ends it moves it by cmpxchg() to FWD_HOLD_RERUN and
 *    queues fwd_hold_rerun(), which decides again under the lock;
 *  - FWD_HOLD_ANTIC_ON: until the request arrives (an insertion clears
 *    it) or the timer moves it to FWD_HOLD_TIMED_OUT and queues the rerun.
 * Any value but 0 keeps fwd_has_work() false.  Only this function and
 * fwd_hold_arrival(), under the lock, start or end an anticipation.
 */
static bool fwd_hold_set(struct fwd_data *fwd, unsigned int hold,
			 enum fwd_hold_reason reason, struct fwd_proc *w,
			 unsigned long delay)
{
	unsigned int old = atomic_read(&fwd->hold);

	lockdep_assert_held(&fwd->lock);

	/*
	 * A timer still running for an anticipation that ended must not
	 * see the next one: wait for it before a new one is stored.
	 */
	if (hold == FWD_HOLD_ANTIC_ON)
		hrtimer_cancel(&fwd->antic_timer);
	/* Only a change dirties the cache line that completions read. */
	if (hold != old)
		old = atomic_xchg(&fwd->hold, hold);
	if (old != hold)
		fwd_antic_ended(fwd, old);
	if (hold && hold <= FWD_DISPATCH_DEPTH_MAX) {
		smp_mb();	/* the hold, then the count */
		if (atomic_read(&fwd->inflight) < hold) {
			/* Unless a completion ended it (and ran the queue). */
			if (atomic_cmpxchg(&fwd->hold, hold, 0) != hold)
				return true;
			hold = 0;
		}
	}
	if (!hold || hold == old)
		return hold;
	if (hold == FWD_HOLD_ANTIC_ON) {
		fwd->antic_proc = w;
		/* Counted and traced as an anticipation, whoever it is for. */
		fwd->antic_fg = reason == FWD_HOLD_FOREGROUND;
		reason = FWD_HOLD_ANTIC;
		hrtimer_start(&fwd->antic_timer,
			      ns_to_ktime((u64)delay << FWD_TICK_SHIFT),
			      HRTIMER_MODE_REL);
	}
	fwd->stats[reason == FWD_HOLD_DEPTH ? FWD_STAT_DEPTH_HOLDS :
		   reason == FWD_HOLD_FAIR ? FWD_STAT_FAIR_HOLDS :
		   reason == FWD_HOLD_FOREGROUND ? FWD_STAT_FG_HOLDS :
		   FWD_STAT_ANTIC_HOLDS]++;
	trace_fwdsched_hold(fwd->q, reason, atomic_read(&fwd->inflight),
			    fwd_proc_nr(w));
	return true;
}

/*
 * Decides and sets the hold, true while it holds: before a dispatch from
 * the sweep, after a dispatch or insertions, when a tunable changed.  An
 * anticipation lasts until its request or its timer.
 */
bool fwd_hold_check(struct fwd_data *fwd)
{
	enum fwd_hold_reason reason;
	unsigned long delay;
	struct fwd_proc *w;
	unsigned int hold = atomic_read(&fwd->hold);
	bool held;

	if (hold == FWD_HOLD_ANTIC_ON)
		return true;
	/* A window timed out is given up before the decision. */
	if (hold == FWD_HOLD_TIMED_OUT &&
	    atomic_cmpxchg(&fwd->hold, hold, FWD_HOLD_RERUN) == hold)
		fwd_antic_ended(fwd, hold);
	/*
	 * A threshold that completions passed before it was stored is
	 * decided again: with the lower count the foreground's next read
	 * may be anticipated.  While the lock is held the count only
	 * falls, so this ends.
	 */
	do {
		reason = FWD_HOLD_DEPTH;
		w = NULL;
		delay = 0;
		hold = fwd_hold_next(fwd, &reason, &w, &delay);
		held = fwd_hold_set(fwd, hold, reason, w, delay);
	} while (!held && hold && hold <= FWD_DISPATCH_DEPTH_MAX);
	return held;
}

/*
 * A request @rq of @p arrived: the one anticipated, of a higher class,
 * or, against writes for the foreground, one that is not held for it.
 */
void __fwd_hold_arrival(struct fwd_data *fwd, struct fwd_proc *p,
			struct request *rq)
{
	struct fwd_proc *w = fwd->antic_proc;

	if (w && (p == w || p->prio < w->prio ||
		  (fwd->antic_fg && !fwd_rq_async(rq))) &&
	    atomic_read(&fwd->hold) == FWD_HOLD_ANTIC_ON)
		fwd_antic_ended(fwd, atomic_xchg(&fwd->hold, 0));
}

/*
 * Decides the hold again and runs the queue unless it holds.  Completions
 * and the timer come here through hold_work rather than running the queue
 * themselves, so that a hold decided next never costs blk-mq an empty
 * dispatch and its delayed re-run.
 */
void fwd_hold_rerun(struct fwd_data *fwd)
{
	bool held;

	spin_lock(&fwd->lock);
	fwd_hold_update(fwd);
	held = fwd_hold_blocks(fwd);
	spin_unlock(&fwd->lock);
	if (!held)
		blk_mq_run_hw_queues(fwd->q, false);
}

static void fwd_hold_work_fn(struct work_struct *work)
{
	fwd_hold_rerun(container_of(work, struct fwd_data, hold_work));
}

static enum hrtimer_restart fwd_antic_timer_fn(struct hrtimer *timer)
{
	struct fwd_data *fwd = container_of(timer, struct fwd_data,
					    antic_timer);

	if (atomic_cmpxchg(&fwd->hold, FWD_HOLD_ANTIC_ON,
			   FWD_HOLD_TIMED_OUT) == FWD_HOLD_ANTIC_ON)
		kblockd_schedule_work(&fwd->hold_work);
	return HRTIMER_NORESTART;
}

/* ---------------------------------------------------------------- completion */

/* Called by blk-mq at completion with its own timestamp. */
void fwd_owner_done(struct request *rq, u64 now)
{
	struct fwd_data *fwd = rq->q->elevator->elevator_data;
	struct fwd_proc *p = fwd_rq_proc(rq);
	unsigned long t = fwd_ticks(now);

	if (!p || !(fwd_rq_flags(rq) & FWD_RQ_TRACKED))
		return;
	WRITE_ONCE(p->done, t);
	/* Elsewhere insertions move the clock: not worth a shared write. */
	if ((fwd_rq_flags(rq) & FWD_RQ_COUNTED) &&
	    (long)(t - READ_ONCE(fwd->clock)) > 0)
		WRITE_ONCE(fwd->clock, t);
}

/*
 * From blk_mq_free_request(), maybe in interrupt context: no lock.
 * Nothing touches the entry after its count drops: it may be retired.
 */
void fwd_owner_finish(struct request *rq)
{
	struct fwd_data *fwd = rq->q->elevator->elevator_data;
	struct fwd_proc *p = fwd_rq_proc(rq);
	unsigned long flags;
	unsigned int hold;
	int left;

	if (!(rq->rq_flags & RQF_USE_SCHED))
		return;
	flags = fwd_rq_flags(rq);
	rq->elv.priv[0] = NULL;
	if (!(flags & FWD_RQ_TRACKED))
		return;
	/* The completion time, then the count; see fwd_proc_backlogged(). */
	smp_mb__before_atomic();
	atomic_dec(&p->inflight);
	if (!(flags & FWD_RQ_COUNTED))
		return;
	/* Fully ordered: the decrement before the read of the hold. */
	left = atomic_dec_return(&fwd->inflight);
	hold = atomic_read(&fwd->hold);
	if (hold && hold <= FWD_DISPATCH_DEPTH_MAX && left < hold &&
	    atomic_cmpxchg(&fwd->hold, hold, FWD_HOLD_RERUN) == hold)
		kblockd_schedule_work(&fwd->hold_work);
}

/* ---------------------------------------------------------------- set-up */

void fwd_fair_init(struct fwd_data *fwd)
{
	enum fwd_prio prio;

	hash_init(fwd->procs);
	INIT_LIST_HEAD(&fwd->lru);
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++) {
		fwd->cls[prio].backlog = RB_ROOT_CACHED;
		fwd_proc_init(&fwd->shared[prio], prio);
		fwd->shared[prio].serial = ++fwd->proc_serial;
		strscpy(fwd->shared[prio].comm, "(kernel)",
			sizeof(fwd->shared[prio].comm));
	}
	hrtimer_setup(&fwd->antic_timer, fwd_antic_timer_fn, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL);
	INIT_WORK(&fwd->hold_work, fwd_hold_work_fn);
}

void fwd_fair_exit(struct fwd_data *fwd)
{
	struct hlist_node *tmp;
	struct fwd_proc *p;
	int bkt;

	hrtimer_cancel(&fwd->antic_timer);
	cancel_work_sync(&fwd->hold_work);
	hash_for_each_safe(fwd->procs, bkt, tmp, p, hash) {
		put_pid(p->pid);
		kfree(p);
	}
}

/* ---------------------------------------------------------------- debugfs */

#ifdef CONFIG_BLK_DEBUG_FS
static void fwd_proc_show(struct seq_file *m, struct fwd_proc *p)
{
	enum fwd_dir dir;

	if (!p->st.reqs[FWD_READ] && !p->st.reqs[FWD_WRITE] &&
	    !fwd_proc_pending(p) && !atomic_read(&p->inflight))
		return;
	seq_printf(m, "%d %s", fwd_proc_nr(p),
		   p->prio == FWD_PRIO_RT ? "rt" :
		   p->prio == FWD_PRIO_BE ? "be" : "idle");
	for (dir = 0; dir < FWD_DIR_COUNT; dir++)
		seq_printf(m, " %llu %llu %llu %u", p->st.reqs[dir],
			   p->st.sectors[dir],
			   div_u64(jiffies64_to_nsecs(p->st.wait_sum[dir]),
				   NSEC_PER_USEC),
			   jiffies_to_usecs(p->st.wait_max[dir]));
	seq_printf(m, " %u %d %llu %llu %lu %u %s\n", fwd_proc_pending(p),
		   atomic_read(&p->inflight), p->st.max_passed, p->vtime,
		   p->ttime_samples ?
		   (unsigned long)p->ttime * 1024 / 1000 : 0UL,
		   jiffies_to_msecs(jiffies - p->last_used), p->comm);
}

/* debugfs "procs": one line per process and class, see the rst file. */
int fwd_procs_show(void *data, struct seq_file *m)
{
	struct fwd_data *fwd = fwd_of(data);
	enum fwd_prio prio;
	struct fwd_proc *p;
	int bkt;

	seq_puts(m, "# tgid class rd_reqs rd_sectors rd_wait_us rd_wait_max_us wr_reqs wr_sectors wr_wait_us wr_wait_max_us queued inflight max_passed vtime ttime_us idle_ms comm\n");
	seq_printf(m, "# sectors of 512 bytes; waits from insertion to dispatch, summed and maximum, in us with a resolution of %u us; max_passed in dispatches; vtime in 1/%u units of service; ttime_us mean think time (0: none measured)\n",
		   jiffies_to_usecs(1), FWD_VUNIT);
	spin_lock(&fwd->lock);
	hash_for_each(fwd->procs, bkt, p, hash)
		fwd_proc_show(m, p);
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		fwd_proc_show(m, &fwd->shared[prio]);
	spin_unlock(&fwd->lock);
	return 0;
}

/* "reset" zeroes the counters of "procs"; anything else is refused. */
ssize_t fwd_procs_write(void *data, const char __user *buf, size_t count,
			loff_t *ppos)
{
	struct fwd_data *fwd = fwd_of(data);
	enum fwd_prio prio;
	struct fwd_proc *p;
	char cmd[8];
	int bkt;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, buf, count))
		return -EFAULT;
	cmd[count] = '\0';
	if (!sysfs_streq(cmd, "reset"))
		return -EINVAL;
	spin_lock(&fwd->lock);
	hash_for_each(fwd->procs, bkt, p, hash)
		memset(&p->st, 0, sizeof(p->st));
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		memset(&fwd->shared[prio].st, 0,
		       sizeof(fwd->shared[prio].st));
	spin_unlock(&fwd->lock);
	return count;
}
#endif
