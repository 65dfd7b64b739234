/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MMC request history
 */
#ifndef _MMC_CORE_HISTORY_H
#define _MMC_CORE_HISTORY_H

#include <linux/compiler.h>
#include <linux/jump_label.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct dentry;
struct file_operations;
struct mmc_host;
struct mmc_request;

/* Requests in flight per host: CQE has at most 32 tasks and a DCMD. */
#define MMC_HISTORY_INFLIGHT	64
/* Largest ring, in records. */
#define MMC_HISTORY_MAX		SZ_4M

struct mmc_history_rec {
	u64 issue_ns;		/* CLOCK_MONOTONIC */
	u64 done_ns;
	u64 sector;		/* 512-byte units */
	u32 nr_sectors;
	s32 err;
	s32 tag;
	u8 op;			/* 'R', 'W' or 'O' */
};

struct mmc_history_inflight {
	const struct mmc_request *mrq;	/* key only, never dereferenced */
	struct mmc_history_rec rec;
};

/* The ring of one host. */
struct mmc_history {
	/* Taken in the request path, possibly in hard interrupt context. */
	spinlock_t lock;
	int index;		/* host index, set before the ring is shown */
	u32 size;		/* records in recs[] */
	u32 next;		/* slot of the next record */
	u64 total;		/* records written since the ring was made */
	u64 cleared;		/* value of total at the last clear */
	u64 unmatched;		/* completions without a recorded start */
	u64 evicted;		/* starts dropped because inflight[] was full */
	unsigned int nr_inflight;
	struct mmc_history_inflight inflight[MMC_HISTORY_INFLIGHT];
	struct mmc_history_rec recs[];
};

struct mmc_history *mmc_history_alloc(int index, unsigned int size);
void mmc_history_free(struct mmc_history *h);
void mmc_history_record_start(struct mmc_history *h,
			      const struct mmc_request *mrq);
void mmc_history_record_done(struct mmc_history *h,
			     const struct mmc_request *mrq);
void mmc_history_clear(struct mmc_history *h);
int mmc_history_parse_control(const char __user *ubuf, size_t count);

/* The history file of one ring, which is the inode's private data. */
extern const struct file_operations mmc_history_fops;

/* The hooks of the MMC core, in history_hooks.c. */
#ifdef CONFIG_DEBUG_FS

DECLARE_STATIC_KEY_FALSE(mmc_history_enabled);

void __mmc_history_start(struct mmc_host *host, struct mmc_request *mrq);
void __mmc_history_done(struct mmc_host *host, struct mmc_request *mrq);
void mmc_history_add(struct mmc_host *host, struct dentry *root);
void mmc_history_remove(struct mmc_host *host);

/* Both hooks cost a patched-out jump while no host keeps a history. */
static inline void mmc_history_start(struct mmc_host *host,
				     struct mmc_request *mrq)
{
	if (static_branch_unlikely(&mmc_history_enabled))
		__mmc_history_start(host, mrq);
}

static inline void mmc_history_done(struct mmc_host *host,
				    struct mmc_request *mrq)
{
	if (static_branch_unlikely(&mmc_history_enabled))
		__mmc_history_done(host, mrq);
}

#else

static inline void mmc_history_start(struct mmc_host *host,
				     struct mmc_request *mrq)
{
}

static inline void mmc_history_done(struct mmc_host *host,
				    struct mmc_request *mrq)
{
}

#endif

#endif
