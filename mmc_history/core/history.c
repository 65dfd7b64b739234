// SPDX-License-Identifier: GPL-2.0-only
/*
 * MMC request history: the records
 *
 * A history is a ring of the last N requests of one host.  Its owner
 * calls mmc_history_record_start() when a request goes to the host and
 * mmc_history_record_done() when it completes; the two are paired by
 * request, so CQE tasks completing out of order are recorded correctly.
 * Recording takes the ring's spinlock and copies a few words: it never
 * allocates, sleeps or fails.  mmc_history_fops shows the ring:
 *
 *   # host=mmc0 clock=monotonic ring_size=N records=... fields=...
 *   issue_ns done_ns R|W|O sector nr_sectors err tag
 *
 * one line per request, oldest completion first.  Times are
 * CLOCK_MONOTONIC nanoseconds; sectors are 512-byte units whatever the
 * card's addressing.  A request is a read or a write when its command is
 * a block read or write (or, for CQE, by its data direction), anything
 * else is "O".  err is the first error among sbc, cmd, data and stop.
 */
#include <linux/blk_types.h>
#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mmc/core.h>
#include <linux/mmc/mmc.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "history.h"

/* A ring of @size records for host @index; may sleep. */
struct mmc_history *mmc_history_alloc(int index, unsigned int size)
{
	struct mmc_history *h;

	h = vzalloc(struct_size(h, recs, size));
	if (!h)
		return NULL;
	spin_lock_init(&h->lock);
	h->index = index;
	h->size = size;
	return h;
}

void mmc_history_free(struct mmc_history *h)
{
	vfree(h);
}

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

	lockdep_assert_held(&h->lock);
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

/* Called when @mrq goes to the host, in any context. */
void mmc_history_record_start(struct mmc_history *h,
			      const struct mmc_request *mrq)
{
	u64 now = ktime_get_ns();
	struct mmc_history_inflight *f;
	unsigned long flags;

	spin_lock_irqsave(&h->lock, flags);
	f = mmc_history_slot(h, mrq);
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
	spin_unlock_irqrestore(&h->lock, flags);
}

/* Called when @mrq completes, possibly in hard interrupt context. */
void mmc_history_record_done(struct mmc_history *h,
			     const struct mmc_request *mrq)
{
	u64 now = ktime_get_ns();
	struct mmc_history_inflight *f;
	struct mmc_history_rec *r;
	unsigned long flags;

	spin_lock_irqsave(&h->lock, flags);
	f = mmc_history_find(h, mrq);
	if (!f) {
		/* Failed before it started, e.g. by re-tuning. */
		h->unmatched++;
		goto out_unlock;
	}
	r = &h->recs[h->next];
	*r = f->rec;
	r->done_ns = now;
	r->err = mmc_history_err(mrq);
	if (++h->next == h->size)
		h->next = 0;
	h->total++;
	*f = h->inflight[--h->nr_inflight];
out_unlock:
	spin_unlock_irqrestore(&h->lock, flags);
}

/* Forget the records and counts; requests in flight are still paired. */
void mmc_history_clear(struct mmc_history *h)
{
	unsigned long flags;

	spin_lock_irqsave(&h->lock, flags);
	h->cleared = h->total;
	h->unmatched = 0;
	h->evicted = 0;
	spin_unlock_irqrestore(&h->lock, flags);
}

/*
 * A write to a control file: 0 for "clear" (a trailing newline allowed),
 * -EINVAL for anything else.
 */
int mmc_history_parse_control(const char __user *ubuf, size_t count)
{
	char buf[16];

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	return sysfs_streq(buf, "clear") ? 0 : -EINVAL;
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

/* The file shows the records there were when it was opened. */
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

const struct file_operations mmc_history_fops = {
	.owner		= THIS_MODULE,
	.open		= mmc_history_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= seq_release_private,
};
