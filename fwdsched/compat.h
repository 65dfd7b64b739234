/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fwdsched: shims for older elevator APIs.
 *
 * fwdsched-iosched.c is written against the newest elevator API (Linux 7.x).
 * Everything an older kernel lacks is supplied here, keyed on FWD_HAVE_*
 * macros that the Kbuild file sets by probing the kernel's own headers
 * rather than by version number, so that distribution backports are
 * picked up automatically.
 */
#ifndef _FWDSCHED_COMPAT_H
#define _FWDSCHED_COMPAT_H

#include <linux/blk-mq.h>
#include <linux/hrtimer.h>
#include <linux/sbitmap.h>

#include "elevator.h"
#include "blk-mq.h"
#include "blk-mq-sched.h"

/*
 * Linux 6.4 replaced the "bool at_head" argument of ->insert_requests()
 * by a flags word.  A bool with the value true behaves like the flag.
 */
#ifndef FWD_HAVE_BLK_INSERT_T
#define blk_insert_t		bool
#define BLK_MQ_INSERT_AT_HEAD	true
#endif

#ifndef FWD_HAVE_MIN_SHALLOW_HELPER
static inline void blk_mq_set_min_shallow_depth(struct request_queue *q,
						unsigned int depth)
{
	struct blk_mq_hw_ctx *hctx;
	unsigned long i;

	queue_for_each_hw_ctx(q, hctx, i)
		sbitmap_queue_min_shallow_depth(&hctx->sched_tags->bitmap_tags,
						depth);
}
#endif

/*
 * Until lib/sbitmap was changed to count the shallow depth over the whole
 * bitmap (6.17, backported to 6.12.43), the limit applied to each word.
 */
static inline unsigned int fwd_shallow_depth(struct blk_mq_alloc_data *data,
					     unsigned int depth)
{
#ifdef FWD_SBITMAP_WORD_DEPTH
	struct sbitmap_queue *bt = &data->hctx->sched_tags->bitmap_tags;
	unsigned int nr = data->q->nr_requests;

	return max(1U, DIV_ROUND_UP(depth << bt->sb.shift, nr));
#else
	return depth;
#endif
}

/*
 * From 7.0 the async depth is the queue's own (queue/async_depth); before,
 * the scheduler keeps it, FWD_ASYNC_PERCENT of nr_requests by default.
 */
#ifdef FWD_HAVE_Q_ASYNC_DEPTH
#define fwd_async_depth(fwd)	(&(fwd)->q->async_depth)
#else
#define fwd_async_depth(fwd)	(&(fwd)->async_depth)
#define FWD_ASYNC_PERCENT	75UL
#endif

/* Linux 6.13 replaced hrtimer_init() by hrtimer_setup(). */
#ifndef FWD_HAVE_HRTIMER_SETUP
static inline void hrtimer_setup(struct hrtimer *timer,
				 enum hrtimer_restart (*fn)(struct hrtimer *),
				 clockid_t clock_id, enum hrtimer_mode mode)
{
	hrtimer_init(timer, clock_id, mode);
	timer->function = fn;
}
#endif

/*
 * Linux 6.5 replaced RQF_ELVPRIV by RQF_USE_SCHED: both mark requests
 * that were prepared for the scheduler and so have valid elv.priv[].
 */
#if !defined(RQF_USE_SCHED) && defined(RQF_ELVPRIV)
#define RQF_USE_SCHED		RQF_ELVPRIV
#endif

#endif /* _FWDSCHED_COMPAT_H */
