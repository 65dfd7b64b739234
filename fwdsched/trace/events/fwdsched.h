/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Tracepoints of the fwdsched I/O scheduler: they fire where the
 * scheduler departs from the plain sweep (a wrap, an expiry, a fairness
 * skip or detour, a direction switched for fairness, the sweep served
 * because the least served process had nothing waiting), where it holds
 * back, and where an anticipation ends.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM fwdsched

#if !defined(_TRACE_FWDSCHED_H) || defined(TRACE_HEADER_MULTI_READ)
#define _TRACE_FWDSCHED_H

#include <linux/blkdev.h>
#include <linux/tracepoint.h>

#ifndef _FWDSCHED_TRACE_TYPES
#define _FWDSCHED_TRACE_TYPES
/* Why a request was dispatched (FWD_DECIDE_SWEEP: the plain sweep). */
enum fwd_decision {
	FWD_DECIDE_SWEEP,
	FWD_DECIDE_WRAP,
	FWD_DECIDE_EXPIRED,
	FWD_DECIDE_AGED,
	FWD_DECIDE_HEAD,
	FWD_DECIDE_FAIR_SKIP,
	FWD_DECIDE_DETOUR,
	FWD_DECIDE_FAIR_SWITCH,
	FWD_DECIDE_FAIR_IDLE,
};

/* Why nothing was dispatched although requests were waiting. */
enum fwd_hold_reason {
	FWD_HOLD_DEPTH,
	FWD_HOLD_FAIR,
	FWD_HOLD_ANTIC,
	FWD_HOLD_FOREGROUND,
};
#endif

TRACE_DEFINE_ENUM(FWD_DECIDE_WRAP);
TRACE_DEFINE_ENUM(FWD_DECIDE_EXPIRED);
TRACE_DEFINE_ENUM(FWD_DECIDE_AGED);
TRACE_DEFINE_ENUM(FWD_DECIDE_HEAD);
TRACE_DEFINE_ENUM(FWD_DECIDE_FAIR_SKIP);
TRACE_DEFINE_ENUM(FWD_DECIDE_DETOUR);
TRACE_DEFINE_ENUM(FWD_DECIDE_FAIR_SWITCH);
TRACE_DEFINE_ENUM(FWD_DECIDE_FAIR_IDLE);
TRACE_DEFINE_ENUM(FWD_HOLD_DEPTH);
TRACE_DEFINE_ENUM(FWD_HOLD_FAIR);
TRACE_DEFINE_ENUM(FWD_HOLD_ANTIC);
TRACE_DEFINE_ENUM(FWD_HOLD_FOREGROUND);

/* A dispatch that departs from the plain sweep (which is not traced). */
TRACE_EVENT(fwdsched_decide,
	    TP_PROTO(struct request *rq, int decision, sector_t sweep_pos,
		     pid_t owner),
	    TP_ARGS(rq, decision, sweep_pos, owner),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(sector_t, sector)
			     __field(unsigned int, nr_sector)
			     __field(sector_t, sweep_pos)
			     __field(int, decision)
			     __field(pid_t, owner)
			     __field(bool, write)),
	    TP_fast_assign(__entry->dev = rq->q->disk ?
					  disk_devt(rq->q->disk) : 0;
			   __entry->sector = blk_rq_pos(rq);
			   __entry->nr_sector = blk_rq_sectors(rq);
			   __entry->sweep_pos = sweep_pos;
			   __entry->decision = decision;
			   __entry->owner = owner;
			   __entry->write = op_is_write(req_op(rq));),
	    TP_printk("%d,%d %s %c %llu + %u sweep %llu owner %d",
		      MAJOR(__entry->dev), MINOR(__entry->dev),
		      __print_symbolic(__entry->decision,
				       { FWD_DECIDE_WRAP, "wrap" },
				       { FWD_DECIDE_EXPIRED, "expired" },
				       { FWD_DECIDE_AGED, "aged" },
				       { FWD_DECIDE_HEAD, "head" },
				       { FWD_DECIDE_FAIR_SKIP, "fair_skip" },
				       { FWD_DECIDE_DETOUR, "detour" },
				       { FWD_DECIDE_FAIR_SWITCH, "fair_switch" },
				       { FWD_DECIDE_FAIR_IDLE, "fair_idle" }),
		      __entry->write ? 'W' : 'R',
		      (unsigned long long)__entry->sector, __entry->nr_sector,
		      (unsigned long long)__entry->sweep_pos, __entry->owner)
);

/* Nothing dispatched although requests wait, and what it waits for. */
TRACE_EVENT(fwdsched_hold,
	    TP_PROTO(struct request_queue *q, int reason, unsigned int inflight,
		     pid_t waiting_for),
	    TP_ARGS(q, reason, inflight, waiting_for),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(int, reason)
			     __field(unsigned int, inflight)
			     __field(pid_t, waiting_for)),
	    TP_fast_assign(__entry->dev = q->disk ? disk_devt(q->disk) : 0;
			   __entry->reason = reason;
			   __entry->inflight = inflight;
			   __entry->waiting_for = waiting_for;),
	    TP_printk("%d,%d %s inflight %u waiting_for %d",
		      MAJOR(__entry->dev), MINOR(__entry->dev),
		      __print_symbolic(__entry->reason,
				       { FWD_HOLD_DEPTH, "depth" },
				       { FWD_HOLD_FAIR, "fair" },
				       { FWD_HOLD_ANTIC, "anticipate" },
				       { FWD_HOLD_FOREGROUND, "foreground" }),
		      __entry->inflight, __entry->waiting_for)
);

/* An anticipation ended before its timer ("arrived"), or by the timer. */
TRACE_EVENT(fwdsched_anticipated,
	    TP_PROTO(struct request_queue *q, pid_t owner, bool arrived),
	    TP_ARGS(q, owner, arrived),
	    TP_STRUCT__entry(__field(dev_t, dev)
			     __field(pid_t, owner)
			     __field(bool, arrived)),
	    TP_fast_assign(__entry->dev = q->disk ? disk_devt(q->disk) : 0;
			   __entry->owner = owner;
			   __entry->arrived = arrived;),
	    TP_printk("%d,%d owner %d %s", MAJOR(__entry->dev),
		      MINOR(__entry->dev), __entry->owner,
		      __entry->arrived ? "arrived" : "timed out")
);

#endif /* _TRACE_FWDSCHED_H */

/* This part must be outside the multi-read protection. */
#include <trace/define_trace.h>
