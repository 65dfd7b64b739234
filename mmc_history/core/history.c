// SPDX-License-Identifier: GPL-2.0-only
/*
 * MMC request history
 *
 * Keeps, per host, the last history_size requests started and completed
 * by the core, legacy and CQE alike, and shows them in debugfs:
 *
 *   /sys/kernel/debug/<host>/history
 *	one "#" header line, then one line per request, oldest first:
 *	issue_ns done_ns R|W|O sector nr_sectors err tag
 *   /sys/kernel/debug/<host>/history_control
 *	write "clear" to empty the history
 *
 * Times are CLOCK_MONOTONIC nanoseconds; sectors are 512-byte units
 * whatever the card's addressing.  A request is a read or a write when
 * its command is a block read or write (or, for CQE, by its data
 * direction), anything else is "O".  err is the first error among sbc,
 * cmd, data and stop.
 *
 * The ring of a host is allocated when the host is added; recording a
 * request takes the host's spinlock and copies a few words, and never
 * allocates or fails.  With history_size = 0 (the default) nothing is
 * allocated and the hooks are a patched-out jump.
 */
#include <linux/blk_types.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/jump_label.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mmc/core.h>
#include <linux/mmc/host.h>
#include <linux/mmc/mmc.h>
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>

#include "history.h"

/* Requests in flight per host: CQE has at most 32 tasks and a DCMD. */
#define MMC_HISTORY_INFLIGHT	64
#define MMC_HISTORY_MAX		SZ_4M

static unsigned int history_size;
module_param(history_size, uint, 0444);
MODULE_PARM_DESC(history_size,
		 "Requests kept per host in debugfs <host>/history (0 = off)");

DEFINE_STATIC_KEY_FALSE(mmc_history_enabled);

/* struct mmc_history of each host that keeps one, by host index. */
static DEFINE_XARRAY(mmc_histories);

struct mmc_history_rec {
	u64 issue_ns;
	u64 done_ns;
	u64 sector;
	u32 nr_sectors;
	s32 err;
	s32 tag;
	u8 op;
};

struct mmc_history_inflight {
	const struct mmc_request *mrq;	/* key only, never dereferenced */
	struct mmc_history_rec rec;
};

struct mmc_history {
	/* Taken in the request path, possibly in hard interrupt context. */
	spinlock_t lock;
	int index;
	u32 size;
	u32 next;		/* slot of the next record */
	u64 total;		/* records written since the host was added */
	u64 cleared;		/* value of total at the last clear */
	u64 unmatched;		/* completions without a recorded start */
	u64 evicted;		/* starts dropped because inflight[] was full */
	unsigned int nr_inflight;
	struct mmc_history_inflight inflight[MMC_HISTORY_INFLIGHT];
	struct mmc_history_rec recs[];
};

static u8 mmc_history_op(const struct mmc_request *mrq)
{
	if (mrq->cmd) {
		switch (mrq->cmd->opcode) {
		case MMC_READ_SINGLE_BLOCK:
		case MMC_READ_MULTIPLE_BLOCK:
			return 'R';
		case MMC_WRITE_BLOCK:
		case MMC_WRITE_MULTIPLE_BLOCK:
			return 'W';
		default:
			return 'O';
		}
	}
	/* A CQE task has data and no command. */
	if (mrq->data && (mrq->data->flags & MMC_DATA_READ))
		return 'R';
	if (mrq->data && (mrq->data->flags & MMC_DATA_WRITE))
		return 'W';
	return 'O';
}

static s32 mmc_history_err(const struct mmc_request *mrq)
{
	if (mrq->sbc && mrq->sbc->error)
		return mrq->sbc->error;
	if (mrq->cmd && mrq->cmd->error)
		return mrq->cmd->error;
	if (mrq->data && mrq->data->error)
		return mrq->data->error;
	if (mrq->stop && mrq->stop->error)
		return mrq->stop->error;
	return 0;
}

static struct mmc_history_inflight *
mmc_history_find(struct mmc_history *h, const struct mmc_request *mrq)
{
	unsigned int i;

	for (i = 0; i < h->nr_inflight; i++)
		if (h->inflight[i].mrq == mrq)
			return &h->inflight[i];
	return NULL;
}

static struct mmc_history_inflight *
mmc_history_slot(struct mmc_history *h, const struct mmc_request *mrq)
{
	struct mmc_history_inflight *f;
	unsigned int i;

	/* A retry restarts the same request: its old start is superseded. */
	f = mmc_history_find(h, mrq);
	if (f)
		return f;
	if (h->nr_inflight < MMC_HISTORY_INFLIGHT)
		return &h->inflight[h->nr_inflight++];

	/* Full of starts that never completed: drop the oldest. */
	f = &h->inflight[0];
	for (i = 1; i < MMC_HISTORY_INFLIGHT; i++)
		if (h->inflight[i].rec.issue_ns < f->rec.issue_ns)
			f = &h->inflight[i];
	h->evicted++;
	return f;
}

static void mmc_history_start_locked(struct mmc_history *h,
				     const struct mmc_request *mrq, u64 now)
{
	struct mmc_history_inflight *f = mmc_history_slot(h, mrq);

	f->mrq = mrq;
	f->rec.issue_ns = now;
	f->rec.op = mmc_history_op(mrq);
	if (mrq->data) {
		f->rec.sector = mrq->data->blk_addr;
		f->rec.nr_sectors = (u64)mrq->data->blocks *
				    mrq->data->blksz >> SECTOR_SHIFT;
	} else {
		f->rec.sector = 0;
		f->rec.nr_sectors = 0;
	}
	f->rec.tag = mrq->tag;
}

static void mmc_history_done_locked(struct mmc_history *h,
				    const struct mmc_request *mrq, u64 now)
{
	struct mmc_history_inflight *f = mmc_history_find(h, mrq);
	struct mmc_history_rec *r;

	if (!f) {
		/* Failed before it started, e.g. by re-tuning. */
		h->unmatched++;
		return;
	}
	r = &h->recs[h->next];
	*r = f->rec;
	r->done_ns = now;
	r->err = mmc_history_err(mrq);
	if (++h->next == h->size)
		h->next = 0;
	h->total++;
	*f = h->inflight[--h->nr_inflight];
}

/*
 * The one way into a history from the request path: the time is taken
 * first, the history is looked up under RCU (mmc_history_remove() waits
 * for it) and changed under its lock.
 */
static void mmc_history_record(struct mmc_host *host,
			       const struct mmc_request *mrq, bool done)
{
	u64 now = ktime_get_ns();
	struct mmc_history *h;
	unsigned long flags;

	rcu_read_lock();
	h = xa_load(&mmc_histories, host->index);
	if (h) {
		spin_lock_irqsave(&h->lock, flags);
		if (done)
			mmc_history_done_locked(h, mrq, now);
		else
			mmc_history_start_locked(h, mrq, now);
		spin_unlock_irqrestore(&h->lock, flags);
	}
	rcu_read_unlock();
}

/* Called from __mmc_start_request() and mmc_cqe_start_req(). */
void __mmc_history_start(struct mmc_host *host, struct mmc_request *mrq)
{
	mmc_history_record(host, mrq, false);
}

/* Called from mmc_request_done() and mmc_cqe_request_done(). */
void __mmc_history_done(struct mmc_host *host, struct mmc_request *mrq)
{
	mmc_history_record(host, mrq, true);
}

struct mmc_history_iter {
	struct mmc_history *h;
	u64 first;		/* sequence number of the first record shown */
	u64 end;		/* records written when the file was opened */
	u64 seq;		/* record being shown */
	u64 overwritten;
	u64 unmatched;
	u64 evicted;
};

static void *mmc_history_seq_at(struct mmc_history_iter *it, loff_t pos)
{
	if (pos == 0)
		return SEQ_START_TOKEN;
	if (it->first + pos - 1 >= it->end)
		return NULL;
	it->seq = it->first + pos - 1;
	return it;
}

static void *mmc_history_seq_start(struct seq_file *m, loff_t *pos)
{
	return mmc_history_seq_at(m->private, *pos);
}

static void *mmc_history_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	return mmc_history_seq_at(m->private, ++*pos);
}

static void mmc_history_seq_stop(struct seq_file *m, void *v)
{
}

static int mmc_history_seq_show(struct seq_file *m, void *v)
{
	struct mmc_history_iter *it = m->private;
	struct mmc_history *h = it->h;
	struct mmc_history_rec rec;
	unsigned long flags;
	u64 back;

	if (v == SEQ_START_TOKEN) {
		seq_printf(m, "# host=mmc%d clock=monotonic ring_size=%u records=%llu overwritten=%llu unmatched=%llu evicted=%llu fields=issue_ns,done_ns,op,sector,nr_sectors,err,tag\n",
			   h->index, h->size, it->end - it->first,
			   it->overwritten, it->unmatched, it->evicted);
		return 0;
	}

	/* Copy one record at a time: the request path waits for no reader. */
	spin_lock_irqsave(&h->lock, flags);
	back = h->total - it->seq;
	if (back > h->size) {
		/* Overwritten since the file was opened. */
		spin_unlock_irqrestore(&h->lock, flags);
		return SEQ_SKIP;
	}
	rec = h->recs[h->next >= back ? h->next - back :
		      h->next + h->size - back];
	spin_unlock_irqrestore(&h->lock, flags);

	seq_printf(m, "%llu %llu %c %llu %u %d %d\n", rec.issue_ns,
		   rec.done_ns, rec.op, rec.sector, rec.nr_sectors, rec.err,
		   rec.tag);
	return 0;
}

static const struct seq_operations mmc_history_seq_ops = {
	.start	= mmc_history_seq_start,
	.next	= mmc_history_seq_next,
	.stop	= mmc_history_seq_stop,
	.show	= mmc_history_seq_show,
};

static int mmc_history_open(struct inode *inode, struct file *file)
{
	struct mmc_history *h = inode->i_private;
	struct mmc_history_iter *it;
	unsigned long flags;
	u64 kept;

	it = __seq_open_private(file, &mmc_history_seq_ops, sizeof(*it));
	if (!it)
		return -ENOMEM;
	it->h = h;
	spin_lock_irqsave(&h->lock, flags);
	kept = min_t(u64, h->total - h->cleared, h->size);
	it->end = h->total;
	it->first = h->total - kept;
	it->overwritten = h->total - h->cleared - kept;
	it->unmatched = h->unmatched;
	it->evicted = h->evicted;
	spin_unlock_irqrestore(&h->lock, flags);
	return 0;
}

static const struct file_operations mmc_history_fops = {
	.owner		= THIS_MODULE,
	.open		= mmc_history_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= seq_release_private,
};

static ssize_t mmc_history_control_write(struct file *file,
					 const char __user *ubuf,
					 size_t count, loff_t *ppos)
{
	struct mmc_history *h = file->private_data;
	unsigned long flags;
	char buf[16];

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (!sysfs_streq(buf, "clear"))
		return -EINVAL;

	spin_lock_irqsave(&h->lock, flags);
	h->cleared = h->total;
	h->unmatched = 0;
	h->evicted = 0;
	spin_unlock_irqrestore(&h->lock, flags);
	return count;
}

static const struct file_operations mmc_history_control_fops = {
	.owner		= THIS_MODULE,
	.open		= simple_open,
	.write		= mmc_history_control_write,
	.llseek		= noop_llseek,
};

/* Called from mmc_add_host_debugfs(). */
void mmc_history_add(struct mmc_host *host, struct dentry *root)
{
	struct mmc_history *h;
	unsigned int size = min_t(unsigned int, history_size,
				  MMC_HISTORY_MAX);

	if (!size)
		return;

	h = vzalloc(struct_size(h, recs, size));
	if (!h)
		goto out_warn;
	spin_lock_init(&h->lock);
	h->index = host->index;
	h->size = size;
	if (xa_err(xa_store(&mmc_histories, host->index, h, GFP_KERNEL))) {
		vfree(h);
		goto out_warn;
	}
	static_branch_inc(&mmc_history_enabled);

	debugfs_create_file("history", 0400, root, h, &mmc_history_fops);
	debugfs_create_file("history_control", 0200, root, h,
			    &mmc_history_control_fops);
	return;

out_warn:
	pr_warn("%s: no memory for a history of %u requests\n",
		mmc_hostname(host), size);
}

/* Called from mmc_remove_host_debugfs(), after the files are removed. */
void mmc_history_remove(struct mmc_host *host)
{
	struct mmc_history *h;

	h = xa_erase(&mmc_histories, host->index);
	if (!h)
		return;
	static_branch_dec(&mmc_history_enabled);
	/* The request path looks the history up under RCU. */
	synchronize_rcu();
	vfree(h);
}
