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

/* Limits of the tunables. */
#define FWD_EXPIRE_MAX_MS	600000U
#define FWD_WRITES_STARVED_MAX	64U
#define FWD_FIFO_BATCH_MAX	1024U

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
};

struct fwd_data {
	struct request_queue *q;

	/*
	 * Protects everything below.  Taken from process context only
	 * (insert, dispatch, merge, sysfs, debugfs); the completion path
	 * does not touch this structure, so no irq-safe variant is needed.
	 */
	spinlock_t lock;

	/* At-head insertions and requeues, served before the sweep. */
	struct list_head dispatch;

	/* Pending requests sorted by start sector, per direction. */
	struct rb_root sort_list[FWD_DIR_COUNT];
	/* The same requests in insertion order, for deadline expiry. */
	struct list_head fifo_list[FWD_DIR_COUNT];
	unsigned int queued[FWD_DIR_COUNT];

	/* End sector of the last dispatched request. */
	sector_t sweep_pos;
	enum fwd_dir batch_dir;
	/* Requests dispatched in the current batch. */
	unsigned int batch_count;
	/* Read batches served since the last write batch. */
	unsigned int starved;

	u64 stats[FWD_STAT_COUNT];

	/* Tunables. */
	unsigned int fifo_expire_ms[FWD_DIR_COUNT];
	unsigned long fifo_expire[FWD_DIR_COUNT];	/* in jiffies */
	unsigned int writes_starved;
	unsigned int fifo_batch;
	unsigned int front_merges;
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

static inline unsigned int *fwd_async_depth(struct fwd_data *fwd)
{
#ifdef FWD_HAVE_Q_ASYNC_DEPTH
	return &fwd->q->async_depth;
#else
	return &fwd->async_depth;
#endif
}

/*
 * Requests marked this way went through fwd_insert_request().  Only
 * requests that the block layer prepared for the scheduler have valid
 * elv.priv[] (flush and passthrough requests bypass it).
 */
static inline bool fwd_rq_owned(struct request *rq)
{
	return (rq->rq_flags & RQF_USE_SCHED) && rq->elv.priv[0];
}

static void fwd_remove_request(struct fwd_data *fwd, struct request *rq)
{
	enum fwd_dir dir = fwd_rq_dir(rq);

	lockdep_assert_held(&fwd->lock);

	list_del_init(&rq->queuelist);
	elv_rb_del(&fwd->sort_list[dir], rq);
	fwd->queued[dir]--;
	elv_rqhash_del(fwd->q, rq);
	if (fwd->q->last_merge == rq)
		fwd->q->last_merge = NULL;
}

/* Returns the lowest-sector request of @dir starting at or above @pos. */
static struct request *fwd_find_from(struct fwd_data *fwd, enum fwd_dir dir,
				     sector_t pos)
{
	struct rb_node *node = fwd->sort_list[dir].rb_node;
	struct request *found = NULL;

	lockdep_assert_held(&fwd->lock);

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

static bool fwd_head_expired(struct fwd_data *fwd, enum fwd_dir dir)
{
	struct request *rq;

	lockdep_assert_held(&fwd->lock);

	rq = list_first_entry_or_null(&fwd->fifo_list[dir], struct request,
				      queuelist);
	return rq && time_after_eq(jiffies, (unsigned long)rq->fifo_time);
}

/*
 * Picks the direction of the next request.  The direction is kept for a
 * batch of up to fifo_batch requests.  When both directions have work, a
 * write batch follows after writes_starved read batches, or earlier if the
 * oldest write has expired, and a read batch always follows a write batch.
 * So reads wait for at most one write batch, and writes for at most
 * writes_starved read batches once they have expired.
 */
static int fwd_choose_dir(struct fwd_data *fwd)
{
	bool reads = fwd->queued[FWD_READ];
	bool writes = fwd->queued[FWD_WRITE];
	enum fwd_dir dir;

	lockdep_assert_held(&fwd->lock);

	if (!reads && !writes)
		return -ENODATA;

	if (fwd->batch_count < fwd->fifo_batch && fwd->queued[fwd->batch_dir])
		return fwd->batch_dir;

	if (!writes)
		dir = FWD_READ;
	else if (!reads)
		dir = FWD_WRITE;
	else if (fwd->batch_dir == FWD_READ &&
		 (fwd->starved >= fwd->writes_starved ||
		  fwd_head_expired(fwd, FWD_WRITE)))
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

/* Called with the lock held; picks the next request of the sweep. */
static struct request *__fwd_dispatch_request(struct fwd_data *fwd)
{
	struct request *rq;
	int dir;

	lockdep_assert_held(&fwd->lock);

	rq = list_first_entry_or_null(&fwd->dispatch, struct request,
				      queuelist);
	if (rq) {
		list_del_init(&rq->queuelist);
		fwd->stats[FWD_STAT_HEAD]++;
		goto account;
	}

	dir = fwd_choose_dir(fwd);
	if (dir < 0)
		return NULL;

	if (fwd_head_expired(fwd, dir)) {
		rq = list_first_entry(&fwd->fifo_list[dir], struct request,
				      queuelist);
		fwd->stats[FWD_STAT_EXPIRED]++;
	} else {
		rq = fwd_find_from(fwd, dir, fwd->sweep_pos);
		if (!rq) {
			rq = rb_entry_rq(rb_first(&fwd->sort_list[dir]));
			fwd->stats[FWD_STAT_WRAPS]++;
		}
	}
	fwd_remove_request(fwd, rq);
	fwd->batch_count++;

account:
	if (blk_rq_pos(rq) >= fwd->sweep_pos)
		fwd->stats[FWD_STAT_FORWARD]++;
	else
		fwd->stats[FWD_STAT_BACKWARD]++;
	fwd->stats[FWD_STAT_DISPATCHED]++;
	fwd->sweep_pos = blk_rq_pos(rq) + blk_rq_sectors(rq);
	rq->rq_flags |= RQF_STARTED;
	return rq;
}

/*
 * Called from blk_mq_run_hw_queue() -> __blk_mq_sched_dispatch_requests().
 * Returns a request whenever one is pending, so the queue never stalls.
 */
static struct request *fwd_dispatch_request(struct blk_mq_hw_ctx *hctx)
{
	struct fwd_data *fwd = hctx->queue->elevator->elevator_data;
	struct request *rq;

	spin_lock(&fwd->lock);
	rq = __fwd_dispatch_request(fwd);
	spin_unlock(&fwd->lock);

	return rq;
}

static bool fwd_has_work(struct blk_mq_hw_ctx *hctx)
{
	struct fwd_data *fwd = hctx->queue->elevator->elevator_data;

	return !list_empty_careful(&fwd->dispatch) ||
	       !list_empty_careful(&fwd->fifo_list[FWD_READ]) ||
	       !list_empty_careful(&fwd->fifo_list[FWD_WRITE]);
}

static void fwd_insert_request(struct fwd_data *fwd, struct request *rq,
			       blk_insert_t flags, struct list_head *free)
{
	struct request_queue *q = fwd->q;
	enum fwd_dir dir = fwd_rq_dir(rq);

	lockdep_assert_held(&fwd->lock);

	/*
	 * A requeued request comes back here; count it only once, and
	 * serve it first.  Since 6.4 the block layer asks for that with
	 * BLK_MQ_INSERT_AT_HEAD; before, requeues arrive without the flag.
	 */
	if (fwd_rq_owned(rq)) {
		flags |= BLK_MQ_INSERT_AT_HEAD;
	} else {
		rq->elv.priv[0] = (void *)1UL;
		fwd->stats[FWD_STAT_INSERTED]++;
	}

	if (flags & BLK_MQ_INSERT_AT_HEAD) {
		trace_block_rq_insert(rq);
		list_add(&rq->queuelist, &fwd->dispatch);
		return;
	}

	if (blk_mq_sched_try_insert_merge(q, rq, free)) {
		fwd->stats[FWD_STAT_INSERT_MERGES]++;
		return;
	}

	trace_block_rq_insert(rq);
	elv_rb_add(&fwd->sort_list[dir], rq);
	if (rq_mergeable(rq)) {
		elv_rqhash_add(q, rq);
		if (!q->last_merge)
			q->last_merge = rq;
	}
	rq->fifo_time = jiffies + fwd->fifo_expire[dir];
	list_add_tail(&rq->queuelist, &fwd->fifo_list[dir]);
	fwd->queued[dir]++;
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

static void fwd_prepare_request(struct request *rq)
{
	rq->elv.priv[0] = NULL;
}

/*
 * Callback from inside blk_mq_free_request().  Flush and passthrough
 * requests never reach the scheduler, and requests merged into another
 * one are freed without being dispatched; neither may be counted.
 */
static void fwd_finish_request(struct request *rq)
{
	if (!fwd_rq_owned(rq))
		return;
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
	enum fwd_dir dir = bio_data_dir(bio) == READ ? FWD_READ : FWD_WRITE;
	struct request *found;

	lockdep_assert_held(&fwd->lock);

	if (!fwd->front_merges)
		return ELEVATOR_NO_MERGE;

	found = elv_rb_find(&fwd->sort_list[dir], bio_end_sector(bio));
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
	struct rb_root *root = &fwd->sort_list[fwd_rq_dir(rq)];

	lockdep_assert_held(&fwd->lock);

	if (type != ELEVATOR_FRONT_MERGE)
		return;
	elv_rb_del(root, rq);
	elv_rb_add(root, rq);
}

/* @next was merged into @rq; @rq inherits the earlier deadline. */
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
	fwd_remove_request(fwd, next);
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
	enum fwd_dir dir;

	fwd = kzalloc_node(sizeof(*fwd), GFP_KERNEL, q->node);
	if (!fwd)
		return -ENOMEM;

	fwd->q = q;
	spin_lock_init(&fwd->lock);
	INIT_LIST_HEAD(&fwd->dispatch);
	for (dir = 0; dir < FWD_DIR_COUNT; dir++) {
		fwd->sort_list[dir] = RB_ROOT;
		INIT_LIST_HEAD(&fwd->fifo_list[dir]);
	}
	fwd->fifo_expire_ms[FWD_READ] = read_expire_ms;
	fwd->fifo_expire_ms[FWD_WRITE] = write_expire_ms;
	for (dir = 0; dir < FWD_DIR_COUNT; dir++)
		fwd->fifo_expire[dir] = msecs_to_jiffies(fwd->fifo_expire_ms[dir]);
	fwd->writes_starved = writes_starved;
	fwd->fifo_batch = fifo_batch;
	fwd->front_merges = 1;
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
 * request has been dispatched; anything left would be lost.
 */
static void fwd_exit_sched(struct elevator_queue *e)
{
	struct fwd_data *fwd = e->elevator_data;

	WARN_ONCE(fwd->queued[FWD_READ] || fwd->queued[FWD_WRITE] ||
		  !list_empty(&fwd->dispatch),
		  "fwdsched: exit with %u reads, %u writes queued\n",
		  fwd->queued[FWD_READ], fwd->queued[FWD_WRITE]);
	kfree(fwd);
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

static ssize_t fwd_store_expire(struct fwd_data *fwd, enum fwd_dir dir,
				const char *page, size_t count)
{
	unsigned int ms;

	if (kstrtouint(page, 10, &ms) || ms < 1 || ms > FWD_EXPIRE_MAX_MS)
		return -EINVAL;

	spin_lock(&fwd->lock);
	fwd->fifo_expire_ms[dir] = ms;
	fwd->fifo_expire[dir] = msecs_to_jiffies(ms);
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
	return fwd_store_expire(e->elevator_data, FWD_READ, page, count);
}

static ssize_t fwd_write_expire_show(struct elevator_queue *e, char *page)
{
	struct fwd_data *fwd = e->elevator_data;

	return sysfs_emit(page, "%u\n", fwd->fifo_expire_ms[FWD_WRITE]);
}

static ssize_t fwd_write_expire_store(struct elevator_queue *e,
				      const char *page, size_t count)
{
	return fwd_store_expire(e->elevator_data, FWD_WRITE, page, count);
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

	return fwd_store_uint(fwd, &fwd->writes_starved, page, count, 0,
			      FWD_WRITES_STARVED_MAX);
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

	return fwd_store_uint(fwd, &fwd->fifo_batch, page, count, 1,
			      FWD_FIFO_BATCH_MAX);
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
	unsigned int reads, writes, head = 0;
	struct request *rq;

	spin_lock(&fwd->lock);
	reads = fwd->queued[FWD_READ];
	writes = fwd->queued[FWD_WRITE];
	list_for_each_entry(rq, &fwd->dispatch, queuelist)
		head++;
	spin_unlock(&fwd->lock);

	seq_printf(m, "reads %u writes %u head %u\n", reads, writes, head);
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

FWD_DEBUGFS_LIST(read_fifo, &fwd->fifo_list[FWD_READ]);
FWD_DEBUGFS_LIST(write_fifo, &fwd->fifo_list[FWD_WRITE]);
FWD_DEBUGFS_LIST(dispatch, &fwd->dispatch);
#undef FWD_DEBUGFS_LIST

static const struct blk_mq_debugfs_attr fwd_queue_debugfs_attrs[] = {
	{"stats", 0400, fwd_stats_show},
	{"sweep_pos", 0400, fwd_sweep_pos_show},
	{"queued", 0400, fwd_queued_show},
	{"batch", 0400, fwd_batch_show},
	{"read_fifo_list", 0400, .seq_ops = &fwd_read_fifo_seq_ops},
	{"write_fifo_list", 0400, .seq_ops = &fwd_write_fifo_seq_ops},
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
