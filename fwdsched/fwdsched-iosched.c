// SPDX-License-Identifier: GPL-2.0
/*
 * fwdsched: a forward-sweep I/O scheduler for flash storage.
 *
 * On eMMC and SD cards a request above the previous one completes faster
 * than one below it, so fwdsched sweeps one way (C-LOOK): the lowest
 * pending sector at or above the end of the last dispatch, else a wrap to
 * the lowest.  An expired request is served next and the sweep continues
 * from it.  Reads and writes share the position and go in batches;
 * classes in order, with aging.  Per-process service and the hold are in
 * fwdsched-fair.c.  See Documentation/block/fwdsched-iosched.rst.
 */
#include <linux/kernel.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/bio.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/init.h>
#include <linux/jiffies.h>
#include <linux/seq_file.h>
#include <uapi/linux/major.h>

#include <trace/events/block.h>

#include "elevator.h"
#include "blk.h"
#include "blk-mq.h"
#include "blk-mq-debugfs.h"
#include "blk-mq-sched.h"
/* Out of tree only: what older kernels lack. */
#include "compat.h"

#include "fwdsched.h"

#define CREATE_TRACE_POINTS
#include <trace/events/fwdsched.h>

/* Defaults of the tunables; see Documentation/block/fwdsched-iosched.rst. */
static const unsigned int read_expire_ms = 500;
static const unsigned int write_expire_ms = 5000;
static const unsigned int prio_aging_ms = 10000;
static const unsigned int writes_starved = 2;	/* read batches per write batch */
static const unsigned int fifo_batch = 16;	/* requests per batch */
static const unsigned int fair_slack = 8;	/* units of service of lead */
static const unsigned int anticipate_us = 4000;	/* longest think time waited for */
static const unsigned int foreground_us = 50000; /* a reader's, against writes */

#define FWD_EXPIRE_MAX_MS	600000U
#define FWD_WRITES_STARVED_MAX	64U
#define FWD_FIFO_BATCH_MAX	1024U
#define FWD_ANTICIPATE_MAX_US	100000U

/*
 * Default dispatch_depth of an MMC card without command queueing: one
 * request on the card, the next being prepared.  The MMC driver gives a
 * CQE host one tag per slot (at most 32), any other host 64.
 */
#define FWD_MMC_DEPTH		2U
#define FWD_MMC_CQ_MAX_TAGS	32U
/* Requests of others a reader between two requests may find ahead. */
#define FWD_SYNC_DEPTH		1U

static const enum fwd_time fwd_expire_time[FWD_DIR_COUNT] = {
	[FWD_READ]	= FWD_TIME_READ_EXPIRE,
	[FWD_WRITE]	= FWD_TIME_WRITE_EXPIRE,
};

/* ---------------------------------------------------------------- queues */

/* The lowest-sector request of @root starting at or above @pos. */
struct request *fwd_find_from(struct rb_root *root, sector_t pos)
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

static inline struct request *fwd_oldest(struct fwd_data *fwd,
					 enum fwd_prio prio, enum fwd_dir dir)
{
	return list_first_entry_or_null(&fwd->cls[prio].fifo[dir],
					struct request, queuelist);
}

/* rq->fifo_time is the insertion time, in jiffies. */
static bool fwd_waited(struct request *rq, unsigned long limit)
{
	return time_after_eq(jiffies, (unsigned long)rq->fifo_time + limit);
}

bool fwd_head_expired(struct fwd_data *fwd, enum fwd_prio prio,
		      enum fwd_dir dir)
{
	struct request *rq = fwd_oldest(fwd, prio, dir);

	return rq && fwd_waited(rq, fwd->time[fwd_expire_time[dir]]);
}

/* The highest class with requests in the sweep, or FWD_PRIO_COUNT. */
enum fwd_prio fwd_first_prio(struct fwd_data *fwd)
{
	enum fwd_prio prio;

	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		if (fwd->cls[prio].queued[FWD_READ] ||
		    fwd->cls[prio].queued[FWD_WRITE])
			break;
	return prio;
}

/*
 * Classes are served in order; a request of a lower class that waited
 * prio_aging_expire is served next (oldest first, reads before writes).
 */
struct request *__fwd_aged_request(struct fwd_data *fwd, enum fwd_prio prio)
{
	struct request *rq;
	enum fwd_dir dir;

	while (++prio < FWD_PRIO_COUNT)
		for (dir = 0; dir < FWD_DIR_COUNT; dir++) {
			rq = fwd_oldest(fwd, prio, dir);
			if (rq && fwd_waited(rq, fwd->time[FWD_TIME_PRIO_AGING]))
				return rq;
		}
	return NULL;
}

/* Queues @rq in the sweep. */
static void fwd_add_request(struct fwd_data *fwd, struct request *rq,
			    struct fwd_proc *p)
{
	enum fwd_dir dir = fwd_rq_dir(rq);
	struct fwd_class *c = &fwd->cls[fwd_rq_prio(rq)];

	elv_rb_add(&c->sort[dir], rq);
	rq->fifo_time = jiffies;
	list_add_tail(&rq->queuelist, &c->fifo[dir]);
	c->queued[dir]++;
	if (fwd_rq_async(rq)) {
		c->async_writes++;
		fwd->async_seen = jiffies;
	}
	fwd->nr_queued++;
	fwd_owner_queue(fwd, p, dir);
}

/* @rq leaves the sweep, dispatched or merged away. */
static inline void fwd_remove_request(struct fwd_data *fwd, struct request *rq)
{
	enum fwd_dir dir = fwd_rq_dir(rq);
	struct fwd_class *c = &fwd->cls[fwd_rq_prio(rq)];

	list_del_init(&rq->queuelist);
	elv_rb_del(&c->sort[dir], rq);
	elv_rqhash_del(fwd->q, rq);
	if (fwd->q->last_merge == rq)
		fwd->q->last_merge = NULL;
	c->queued[dir]--;
	c->async_writes -= fwd_rq_async(rq);
	fwd->nr_queued--;
	fwd_rq_proc(rq)->queued[dir]--;
}

/* ---------------------------------------------------------------- picks */

static void fwd_start_batch(struct fwd_data *fwd, enum fwd_dir dir)
{
	if (dir == FWD_WRITE)
		fwd->starved = 0;
	fwd->batch_dir = dir;
	fwd->batch_count = 0;
}

/*
 * The direction of the next request of @prio, kept for up to fifo_batch.
 * With both waiting, a write batch follows writes_starved read batches
 * (not for asynchronous writes while a foreground is active), or an
 * expired write; a read batch always follows a write batch.
 */
static enum fwd_dir fwd_choose_dir(struct fwd_data *fwd, enum fwd_prio prio)
{
	struct fwd_class *c = &fwd->cls[prio];
	bool reads = c->queued[FWD_READ], writes = c->queued[FWD_WRITE];
	enum fwd_dir dir;

	/* A foreground's read ends a batch of asynchronous writes. */
	if (fwd->batch_count < fwd->fifo_batch && c->queued[fwd->batch_dir] &&
	    !(fwd->batch_dir == FWD_WRITE && reads &&
	      fwd_fg_holds_writes(fwd, prio) &&
	      !fwd_head_expired(fwd, prio, FWD_WRITE)))
		return fwd->batch_dir;
	if (!writes)
		dir = FWD_READ;
	else if (!reads)
		dir = FWD_WRITE;
	else if (fwd->batch_dir == FWD_READ &&
		 fwd_head_expired(fwd, prio, FWD_WRITE))
		dir = FWD_WRITE;
	else if (fwd->batch_dir == FWD_READ &&
		 fwd->starved >= fwd->writes_starved &&
		 !fwd_fg_holds_writes(fwd, prio))
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
	struct rb_root *root = &fwd->cls[prio].sort[dir];
	struct request *rq = fwd_find_from(root, fwd->sweep_pos);

	if (rq)
		return rq;
	*why = FWD_DECIDE_WRAP;
	return fwd_first_rq(root);
}

/* Picks from class @prio: the sweep, bounded by deadlines and fairness. */
static struct request *fwd_pick(struct fwd_data *fwd, enum fwd_prio prio,
				enum fwd_decision *why, bool *fair_idle)
{
	enum fwd_dir dir = fwd_choose_dir(fwd, prio);
	u64 limit;

	fwd->batch_count++;
	if (fwd_head_expired(fwd, prio, dir)) {
		*why = FWD_DECIDE_EXPIRED;
		return fwd_oldest(fwd, prio, dir);
	}
	if (!fwd_fair_limit(fwd, prio, &limit))
		return fwd_sweep(fwd, prio, dir, why);
	if (fwd_dir_eligible(fwd, prio, dir, limit))
		return fwd_sweep_fair(fwd, prio, dir, limit, why);
	if (fwd_dir_eligible(fwd, prio, !dir, limit)) {
		/* A process within the limit waits in the other direction. */
		fwd_start_batch(fwd, !dir);
		fwd->batch_count++;
		fwd->stats[FWD_STAT_FAIR_SWITCHES]++;
		*why = FWD_DECIDE_FAIR_SWITCH;
		return fwd_sweep_fair(fwd, prio, !dir, limit, why);
	}
	if (fwd_head_expired(fwd, prio, !dir)) {
		fwd_start_batch(fwd, !dir);
		fwd->batch_count++;
		*why = FWD_DECIDE_EXPIRED;
		return fwd_oldest(fwd, prio, !dir);
	}
	/* Nobody within the limit waits: the sweep goes on. */
	*fair_idle = true;
	return fwd_sweep(fwd, prio, dir, why);
}

/* Accounts the dispatch of @rq, chosen for @why, and moves the sweep. */
static void fwd_dispatched(struct fwd_data *fwd, struct request *rq,
			   struct fwd_proc *p, enum fwd_decision why)
{
	static const enum fwd_stat why_stat[] = {
		[FWD_DECIDE_WRAP]	= FWD_STAT_WRAPS,
		[FWD_DECIDE_EXPIRED]	= FWD_STAT_EXPIRED,
		[FWD_DECIDE_AGED]	= FWD_STAT_AGED,
		[FWD_DECIDE_HEAD]	= FWD_STAT_HEAD,
	};
	sector_t pos = fwd->sweep_pos;

	fwd_owner_dispatch(fwd, rq);
	fwd->seq++;
	fwd->stats[FWD_STAT_DISPATCHED]++;
	fwd->stats[blk_rq_pos(rq) >= pos ? FWD_STAT_FORWARD :
					   FWD_STAT_BACKWARD]++;
	if (why < ARRAY_SIZE(why_stat) && why_stat[why])
		fwd->stats[why_stat[why]]++;
	/* The sweep continues from a detour too, see fwd_sweep_fair(). */
	fwd->sweep_pos = blk_rq_pos(rq) + blk_rq_sectors(rq);
	if (why != FWD_DECIDE_SWEEP)
		trace_fwdsched_decide(rq, why, pos, fwd_proc_nr(p));
}

static struct request *__fwd_dispatch_request(struct fwd_data *fwd)
{
	enum fwd_decision why = FWD_DECIDE_SWEEP;
	bool fair_idle = false;
	struct fwd_proc *p;
	struct request *rq;
	enum fwd_prio prio;

	lockdep_assert_held(&fwd->lock);

	rq = list_first_entry_or_null(&fwd->dispatch, struct request,
				      queuelist);
	if (rq) {
		list_del_init(&rq->queuelist);
		p = fwd_rq_proc(rq);
		if (p)
			p->head_queued--;
		why = FWD_DECIDE_HEAD;
		goto account;
	}
	/*
	 * Nothing while a hold is in effect: fwd_has_work() is then false,
	 * and whatever ends the hold runs the queue.
	 */
	if (fwd_hold_wanted(fwd) && fwd_hold_check(fwd)) {
		fwd->stats[FWD_STAT_EMPTY_DISPATCHES]++;
		return NULL;
	}
	if (!fwd->nr_queued)
		return NULL;
	prio = fwd_first_prio(fwd);
	rq = fwd_aged_request(fwd, prio);
	if (rq)
		why = FWD_DECIDE_AGED;
	else
		rq = fwd_pick(fwd, prio, &why, &fair_idle);
	fwd_remove_request(fwd, rq);
	p = fwd_rq_proc(rq);
account:
	fwd_dispatched(fwd, rq, p, why);
	if (fair_idle) {
		fwd->stats[FWD_STAT_FAIR_IDLE]++;
		fwd_fair_idle(fwd, p);
		trace_fwdsched_decide(rq, FWD_DECIDE_FAIR_IDLE, fwd->sweep_pos,
				      fwd_proc_nr(p));
	}
	fwd_hold_update(fwd);
	rq->rq_flags |= RQF_STARTED;
	return rq;
}

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
	/*
	 * False while a hold is in effect, so that blk-mq neither asks for
	 * a request it would not get nor schedules its delayed re-run.
	 */
	if (fwd_hold_blocks(fwd))
		return false;
	return READ_ONCE(fwd->nr_queued);
}

/* ---------------------------------------------------------------- insertion */

static void fwd_insert_request(struct fwd_data *fwd, struct request *rq,
			       blk_insert_t flags, struct list_head *free)
{
	struct request_queue *q = fwd->q;
	struct fwd_proc *p;

	/* Nothing to charge it to (flush, passthrough): serve it first. */
	if (!(rq->rq_flags & RQF_USE_SCHED)) {
		trace_block_rq_insert(rq);
		list_add_tail(&rq->queuelist, &fwd->dispatch);
		return;
	}
	/*
	 * A requeued request comes back here with its owner: serve it
	 * first (before 6.4 requeues arrive without the flag).
	 */
	if (rq->elv.priv[0])
		flags |= BLK_MQ_INSERT_AT_HEAD;
	else
		fwd->stats[FWD_STAT_INSERTED]++;

	if (!(flags & BLK_MQ_INSERT_AT_HEAD) &&
	    blk_mq_sched_try_insert_merge(q, rq, free)) {
		fwd->stats[FWD_STAT_INSERT_MERGES]++;
		return;
	}

	trace_block_rq_insert(rq);
	p = fwd_owner_enqueue(fwd, rq);
	fwd_hold_arrival(fwd, p, rq);
	if (flags & BLK_MQ_INSERT_AT_HEAD) {
		list_add(&rq->queuelist, &fwd->dispatch);
		p->head_queued++;
		rq->fifo_time = jiffies;
		return;
	}
	fwd_add_request(fwd, rq, p);
	if (rq_mergeable(rq)) {
		elv_rqhash_add(q, rq);
		if (!q->last_merge)
			q->last_merge = rq;
	}
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
	fwd_hold_update(fwd);
	spin_unlock(&fwd->lock);

	blk_mq_free_requests(&free);
}

/* Called by blk_mq_rq_ctx_init() when a request is allocated. */
static void fwd_prepare_request(struct request *rq)
{
	rq->elv.priv[0] = NULL;
}

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

	if (!fwd->front_merges)
		return ELEVATOR_NO_MERGE;
	found = elv_rb_find(&fwd->cls[prio].sort[dir], bio_end_sector(bio));
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

	if (type != ELEVATOR_FRONT_MERGE || RB_EMPTY_NODE(&rq->rb_node))
		return;
	root = &fwd->cls[fwd_rq_prio(rq)].sort[fwd_rq_dir(rq)];
	elv_rb_del(root, rq);
	elv_rb_add(root, rq);
}

/* @next was merged into @rq, which takes its FIFO place if older. */
static void fwd_requests_merged(struct request_queue *q, struct request *rq,
				struct request *next)
{
	struct fwd_data *fwd = q->elevator->elevator_data;

	/* On an insert merge @next, being inserted, was never queued. */
	if (RB_EMPTY_NODE(&next->rb_node)) {
		elv_rqhash_del(q, next);
		if (q->last_merge == next)
			q->last_merge = NULL;
	} else {
		if (!RB_EMPTY_NODE(&rq->rb_node) &&
		    fwd_rq_prio(rq) == fwd_rq_prio(next) &&
		    time_before((unsigned long)next->fifo_time,
				(unsigned long)rq->fifo_time)) {
			list_move(&rq->queuelist, &next->queuelist);
			rq->fifo_time = next->fifo_time;
		}
		fwd_remove_request(fwd, next);
	}
	/* Freed without being dispatched, it is no longer charged. */
	if (next->rq_flags & RQF_USE_SCHED)
		next->elv.priv[0] = NULL;
	fwd->stats[FWD_STAT_RQ_MERGES]++;
}

/* ---------------------------------------------------------------- depth */

/*
 * Anything but a synchronous read may use at most async_depth tags, so
 * that writeback cannot take the tags that readers wait for.
 */
static void fwd_limit_depth(blk_opf_t opf, struct blk_mq_alloc_data *data)
{
	struct fwd_data *fwd = data->q->elevator->elevator_data;
	unsigned int depth;

	if (op_is_sync(opf) && !op_is_write(opf))
		return;
	depth = min(READ_ONCE(*fwd_async_depth(fwd)), data->q->nr_requests);
	data->shallow_depth = fwd_shallow_depth(data, depth);
}

/*
 * At init and when nr_requests (@nr) changes.  Before 7.0 async_depth is
 * the scheduler's, following @nr unless written, kept within it.  The
 * minimum shallow depth stays 1: async_depth may be set that low.
 */
static void fwd_set_depth(struct request_queue *q, unsigned int nr)
{
#ifndef FWD_HAVE_Q_ASYNC_DEPTH
	struct fwd_data *fwd = q->elevator->elevator_data;

	if (!fwd->async_depth_set)
		fwd->async_depth = max(1UL, nr * FWD_ASYNC_PERCENT / 100UL);
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
 * Before the per-queue callback: called per hardware context after its
 * tags were resized, before nr_requests changes; the tags have the depth.
 */
static void fwd_depth_updated_hctx(struct blk_mq_hw_ctx *hctx)
{
	struct blk_mq_tags *tags = hctx->sched_tags;

	fwd_set_depth(hctx->queue, tags ? tags->bitmap_tags.sb.depth +
				   tags->nr_reserved_tags :
				   hctx->queue->nr_requests);
}
#endif

/*
 * FWD_MMC_DEPTH on an MMC card without command queueing, where the driver
 * turns a third request away; none elsewhere (CQE eMMC, UFS, NVMe).
 */
static unsigned int fwd_default_dispatch_depth(struct request_queue *q)
{
	if (q->disk && q->disk->major == MMC_BLOCK_MAJOR &&
	    q->tag_set->queue_depth > FWD_MMC_CQ_MAX_TAGS)
		return FWD_MMC_DEPTH;
	return 0;
}

/*
 * FWD_SYNC_DEPTH with command queueing and at most FWD_MMC_CQ_MAX_TAGS
 * tags (UFS, CQE eMMC, SATA NCQ: few tags a deep reader fills), else 0.
 */
static unsigned int fwd_default_sync_depth(struct request_queue *q)
{
	if (fwd_default_dispatch_depth(q) ||
	    q->tag_set->queue_depth > FWD_MMC_CQ_MAX_TAGS)
		return 0;
	return FWD_SYNC_DEPTH;
}

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
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++)
		for (dir = 0; dir < FWD_DIR_COUNT; dir++) {
			fwd->cls[prio].sort[dir] = RB_ROOT;
			INIT_LIST_HEAD(&fwd->cls[prio].fifo[dir]);
		}
	fwd_fair_init(fwd);

	fwd->time_ms[FWD_TIME_READ_EXPIRE] = read_expire_ms;
	fwd->time_ms[FWD_TIME_WRITE_EXPIRE] = write_expire_ms;
	fwd->time_ms[FWD_TIME_PRIO_AGING] = prio_aging_ms;
	for (i = 0; i < FWD_TIME_COUNT; i++)
		fwd->time[i] = msecs_to_jiffies(fwd->time_ms[i]);
	fwd->writes_starved = writes_starved;
	fwd->fifo_batch = fifo_batch;
	fwd->front_merges = 1;
	fwd->fair_slack = fair_slack;
	fwd->dispatch_depth = fwd_default_dispatch_depth(q);
	fwd->sync_depth = fwd_default_sync_depth(q);
	fwd->anticipate_us = anticipate_us;
	fwd->foreground_us = foreground_us;
	fwd->batch_dir = FWD_READ;

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

/* The queue is frozen and quiesced: every request finished. */
static void fwd_exit_sched(struct elevator_queue *e)
{
	struct fwd_data *fwd = e->elevator_data;

	WARN_ONCE(fwd->nr_queued || !list_empty(&fwd->dispatch),
		  "fwdsched: exit with %u requests queued\n", fwd->nr_queued);
	fwd_fair_exit(fwd);
	kfree(fwd);
}

/* ---------------------------------------------------------------- sysfs */

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

/* A count within [@min, @max]; the hold is decided again. */
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
	fwd_hold_rerun(fwd);
	return count;
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

/* The show and store methods of a count within [@min, @max]. */
#define FWD_UINT_ATTR(name, min, max)					\
static const size_t fwd_##name##_off = offsetof(struct fwd_data, name); \
static ssize_t fwd_##name##_show(struct elevator_queue *e, char *page)	\
{									\
	return fwd_show_uint(e, fwd_##name##_off, page);		\
}									\
static ssize_t fwd_##name##_store(struct elevator_queue *e,		\
				  const char *page, size_t count)	\
{									\
	return fwd_store_uint(e, fwd_##name##_off, min, max, page, count); \
}

/* Those of a time in ms, see fwd_store_ms(). */
#define FWD_MS_ATTR(name, t)						\
static const enum fwd_time fwd_##name##_t = t;				\
static ssize_t fwd_##name##_show(struct elevator_queue *e, char *page)	\
{									\
	return fwd_show_uint(e, offsetof(struct fwd_data,		\
					 time_ms[fwd_##name##_t]), page); \
}									\
static ssize_t fwd_##name##_store(struct elevator_queue *e,		\
				  const char *page, size_t count)	\
{									\
	return fwd_store_ms(e, fwd_##name##_t, page, count);		\
}

FWD_MS_ATTR(read_expire, FWD_TIME_READ_EXPIRE)
FWD_MS_ATTR(write_expire, FWD_TIME_WRITE_EXPIRE)
FWD_MS_ATTR(prio_aging_expire, FWD_TIME_PRIO_AGING)
FWD_UINT_ATTR(writes_starved, 0, FWD_WRITES_STARVED_MAX)
FWD_UINT_ATTR(fifo_batch, 1, FWD_FIFO_BATCH_MAX)
FWD_UINT_ATTR(front_merges, 0, 1)
FWD_UINT_ATTR(fair_slack, 0, FWD_FAIR_SLACK_OFF)
FWD_UINT_ATTR(dispatch_depth, 0, FWD_DISPATCH_DEPTH_MAX)
FWD_UINT_ATTR(sync_depth, 0, FWD_DISPATCH_DEPTH_MAX)
FWD_UINT_ATTR(anticipate_us, 0, FWD_ANTICIPATE_MAX_US)
FWD_UINT_ATTR(foreground_us, 0, FWD_ANTICIPATE_MAX_US)
FWD_UINT_ATTR(foreground_idle, 0, 1)

#undef FWD_MS_ATTR
#undef FWD_UINT_ATTR

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
	FWD_ATTR(fair_slack),
	FWD_ATTR(dispatch_depth),
	FWD_ATTR(sync_depth),
	FWD_ATTR(anticipate_us),
	FWD_ATTR(foreground_us),
	FWD_ATTR(foreground_idle),
	FWD_ATTR(prio_aging_expire),
	__ATTR_NULL
};

#undef FWD_ATTR

/* ---------------------------------------------------------------- debugfs */

#ifdef CONFIG_BLK_DEBUG_FS
/* In the order of enum fwd_stat. */
static const char *const fwd_stat_names[] = {
	"inserted", "dispatched", "forward", "backward", "wraps", "expired",
	"head", "bio_merges", "rq_merges", "insert_merges", "aged",
	"fair_skips", "detours", "fair_switches", "fair_fallbacks",
	"fair_idle", "fair_holds", "depth_holds", "antic_holds", "antic_hits",
	"antic_timeouts", "fg_holds", "empty_dispatches", "procs_created",
	"procs_retired", "procs_nomem",
};

static int fwd_stats_show(void *data, struct seq_file *m)
{
	struct fwd_data *fwd = fwd_of(data);
	u64 stats[FWD_STAT_COUNT];
	int i;

	BUILD_BUG_ON(ARRAY_SIZE(fwd_stat_names) != FWD_STAT_COUNT);
	spin_lock(&fwd->lock);
	memcpy(stats, fwd->stats, sizeof(stats));
	spin_unlock(&fwd->lock);
	for (i = 0; i < FWD_STAT_COUNT; i++)
		seq_printf(m, "%s %llu\n", fwd_stat_names[i], stats[i]);
	return 0;
}

static int fwd_queued_show(void *data, struct seq_file *m)
{
	struct fwd_data *fwd = fwd_of(data);
	unsigned int n[FWD_DIR_COUNT] = { }, head = 0, hold;
	enum fwd_prio prio;
	struct request *rq;

	spin_lock(&fwd->lock);
	for (prio = 0; prio < FWD_PRIO_COUNT; prio++) {
		n[FWD_READ] += fwd->cls[prio].queued[FWD_READ];
		n[FWD_WRITE] += fwd->cls[prio].queued[FWD_WRITE];
	}
	list_for_each_entry(rq, &fwd->dispatch, queuelist)
		head++;
	hold = atomic_read(&fwd->hold);
	seq_printf(m, "reads %u writes %u head %u inflight %u hold %s\n",
		   n[FWD_READ], n[FWD_WRITE], head, atomic_read(&fwd->inflight),
		   !hold ? "none" : hold > FWD_DISPATCH_DEPTH_MAX ?
		   "anticipate" : "completion");
	spin_unlock(&fwd->lock);
	return 0;
}

static const struct blk_mq_debugfs_attr fwd_queue_debugfs_attrs[] = {
	{"stats", 0400, fwd_stats_show},
	{"queued", 0400, fwd_queued_show},
	{"procs", 0600, fwd_procs_show, fwd_procs_write},
	{},
};
#endif /* CONFIG_BLK_DEBUG_FS */

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
		.prepare_request	= fwd_prepare_request,
		.completed_request	= fwd_owner_done,
		.finish_request		= fwd_owner_finish,
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
