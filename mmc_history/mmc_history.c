// SPDX-License-Identifier: GPL-2.0
/*
 * mmc_history: a per-host history of MMC requests for stock kernels
 *
 * The mmc_request_start and mmc_request_done tracepoints of mmc_core are
 * not exported, so this module finds them through the tracepoint module
 * notifier (or among the kernel's own tracepoints when MMC is built in)
 * and attaches a probe to each.  The start probe notes the issue time of
 * a request; the done probe pairs it with its start by request pointer
 * and writes one record into a ring of the host:
 *
 *   issue_ns done_ns R|W|O sector nr_sectors err tag
 *
 * Times are CLOCK_MONOTONIC nanoseconds, sectors are 512-byte units
 * whatever the card's addressing.  The ring of a host is preallocated:
 * one spare ring is kept ready, a host takes it the first time it is seen
 * and a work item prepares the next spare and the debugfs file
 * /sys/kernel/debug/mmc_history/<host>.  The probes neither allocate nor
 * sleep.  Writing "clear" to /sys/kernel/debug/mmc_history/control empties
 * all rings.
 */
#include <linux/bitops.h>
#include <linux/blk_types.h>
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mmc/core.h>
#include <linux/mmc/host.h>
#include <linux/mmc/mmc.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/overflow.h>
#include <linux/seq_file.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#ifndef CONFIG_TRACEPOINTS
#error "mmc_history needs CONFIG_TRACEPOINTS"
#endif

/* Hosts mmc0 .. mmc31 are recorded. */
#define MMCH_MAX_HOSTS		32
/* Requests in flight per host: CQE has at most 32 tasks and a DCMD. */
#define MMCH_INFLIGHT		64
#define MMCH_MAX_RING		SZ_4M

static unsigned int ring_size = 65536;
module_param(ring_size, uint, 0444);
MODULE_PARM_DESC(ring_size, "Records kept per host, oldest overwritten (0 = off)");

struct mmch_rec {
	u64 issue_ns;
	u64 done_ns;
	u64 sector;		/* 512-byte units */
	u32 nr_sectors;
	s32 err;
	s32 tag;
	u8 op;			/* 'R', 'W' or 'O' */
};

struct mmch_inflight {
	const struct mmc_request *mrq;	/* key only, never dereferenced */
	struct mmch_rec rec;
};

struct mmch_host {
	/* Taken by the probes, which may run in hard interrupt context. */
	spinlock_t lock;
	int index;
	u32 size;		/* records in recs[] */
	u32 next;		/* slot of the next record */
	u64 total;		/* records written since the ring was made */
	u64 cleared;		/* value of total at the last clear */
	u64 unmatched;		/* completions without a recorded start */
	u64 evicted;		/* starts dropped because inflight[] was full */
	unsigned int nr_inflight;
	struct mmch_inflight inflight[MMCH_INFLIGHT];
	struct dentry *file;	/* only touched by mmch_work and exit */
	struct mmch_rec recs[];
};

static struct mmch_host *mmch_hosts[MMCH_MAX_HOSTS];
/* Protects mmch_spare, mmch_wanted and the writing of mmch_hosts[]. */
static DEFINE_SPINLOCK(mmch_hosts_lock);
static struct mmch_host *mmch_spare;
static DECLARE_BITMAP(mmch_wanted, MMCH_MAX_HOSTS);

static struct dentry *mmch_dir;
static void mmch_work_fn(struct work_struct *work);
static DECLARE_WORK(mmch_work, mmch_work_fn);

/* Serialises probe (un)registration. */
static DEFINE_MUTEX(mmch_mutex);
static struct tracepoint *mmch_tp_start;
static struct tracepoint *mmch_tp_done;

static struct mmch_host *mmch_alloc(void)
{
	struct mmch_host *h;

	h = vzalloc(struct_size(h, recs, ring_size));
	if (!h)
		return NULL;
	spin_lock_init(&h->lock);
	h->size = ring_size;
	return h;
}

/* First request of a host: hand it the spare ring (called from a probe). */
static struct mmch_host *mmch_claim(int index)
{
	struct mmch_host *h;
	unsigned long flags;

	spin_lock_irqsave(&mmch_hosts_lock, flags);
	h = mmch_hosts[index];
	if (!h) {
		h = mmch_spare;
		if (h) {
			mmch_spare = NULL;
			h->index = index;
			/* Pairs with mmch_lookup(): publish an initialised ring. */
			smp_store_release(&mmch_hosts[index], h);
		} else {
			__set_bit(index, mmch_wanted);
		}
	}
	spin_unlock_irqrestore(&mmch_hosts_lock, flags);
	schedule_work(&mmch_work);
	return h;
}

static struct mmch_host *mmch_lookup(const struct mmc_host *host)
{
	unsigned int index = host->index;
	struct mmch_host *h;

	if (unlikely(index >= MMCH_MAX_HOSTS))
		return NULL;
	/* Pairs with mmch_claim() and mmch_work_fn(). */
	h = smp_load_acquire(&mmch_hosts[index]);
	if (likely(h))
		return h;
	return mmch_claim(index);
}

static u8 mmch_op(const struct mmc_request *mrq)
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

static s32 mmch_err(const struct mmc_request *mrq)
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

static struct mmch_inflight *mmch_find(struct mmch_host *h,
				       const struct mmc_request *mrq)
{
	unsigned int i;

	for (i = 0; i < h->nr_inflight; i++)
		if (h->inflight[i].mrq == mrq)
			return &h->inflight[i];
	return NULL;
}

static void mmch_start(struct mmch_host *h, const struct mmc_request *mrq,
		       u64 now)
{
	struct mmch_inflight *f;
	unsigned long flags;
	unsigned int i;

	spin_lock_irqsave(&h->lock, flags);
	/* A retry restarts the same request: its old start is superseded. */
	f = mmch_find(h, mrq);
	if (!f && h->nr_inflight < MMCH_INFLIGHT) {
		f = &h->inflight[h->nr_inflight++];
	} else if (!f) {
		/* Full of starts that never completed: drop the oldest. */
		f = &h->inflight[0];
		for (i = 1; i < MMCH_INFLIGHT; i++)
			if (h->inflight[i].rec.issue_ns < f->rec.issue_ns)
				f = &h->inflight[i];
		h->evicted++;
	}
	f->mrq = mrq;
	f->rec.issue_ns = now;
	f->rec.op = mmch_op(mrq);
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

static void mmch_done(struct mmch_host *h, const struct mmc_request *mrq,
		      u64 now)
{
	struct mmch_inflight *f;
	struct mmch_rec *r;
	unsigned long flags;

	spin_lock_irqsave(&h->lock, flags);
	f = mmch_find(h, mrq);
	if (!f) {
		h->unmatched++;
		goto out_unlock;
	}
	r = &h->recs[h->next];
	*r = f->rec;
	r->done_ns = now;
	r->err = mmch_err(mrq);
	if (++h->next == h->size)
		h->next = 0;
	h->total++;
	*f = h->inflight[--h->nr_inflight];
out_unlock:
	spin_unlock_irqrestore(&h->lock, flags);
}

/*
 * The probes run where the tracepoints are: mmc_request_start just before
 * host->ops->request() (or after ->cqe_request()), mmc_request_done in
 * mmc_request_done() or mmc_cqe_request_done(), possibly in hard
 * interrupt context.
 */
static void mmch_probe_start(void *data, struct mmc_host *host,
			     struct mmc_request *mrq)
{
	u64 now = ktime_get_ns();
	struct mmch_host *h = mmch_lookup(host);

	if (h)
		mmch_start(h, mrq, now);
}

static void mmch_probe_done(void *data, struct mmc_host *host,
			    struct mmc_request *mrq)
{
	u64 now = ktime_get_ns();
	struct mmch_host *h = mmch_lookup(host);

	if (h)
		mmch_done(h, mrq, now);
}

struct mmch_iter {
	struct mmch_host *h;
	u64 first;		/* sequence number of the first record shown */
	u64 end;		/* records written when the file was opened */
	u64 seq;		/* record being shown */
	u64 overwritten;
	u64 unmatched;
	u64 evicted;
};

static void *mmch_seq_at(struct mmch_iter *it, loff_t pos)
{
	if (pos == 0)
		return SEQ_START_TOKEN;
	if (it->first + pos - 1 >= it->end)
		return NULL;
	it->seq = it->first + pos - 1;
	return it;
}

static void *mmch_seq_start(struct seq_file *m, loff_t *pos)
{
	return mmch_seq_at(m->private, *pos);
}

static void *mmch_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	return mmch_seq_at(m->private, ++*pos);
}

static void mmch_seq_stop(struct seq_file *m, void *v)
{
}

static int mmch_seq_show(struct seq_file *m, void *v)
{
	struct mmch_iter *it = m->private;
	struct mmch_host *h = it->h;
	struct mmch_rec rec;
	unsigned long flags;
	u64 back;

	if (v == SEQ_START_TOKEN) {
		seq_printf(m, "# host=mmc%d clock=monotonic ring_size=%u records=%llu overwritten=%llu unmatched=%llu evicted=%llu fields=issue_ns,done_ns,op,sector,nr_sectors,err,tag\n",
			   h->index, h->size, it->end - it->first,
			   it->overwritten, it->unmatched, it->evicted);
		return 0;
	}

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

static const struct seq_operations mmch_seq_ops = {
	.start	= mmch_seq_start,
	.next	= mmch_seq_next,
	.stop	= mmch_seq_stop,
	.show	= mmch_seq_show,
};

static int mmch_history_open(struct inode *inode, struct file *file)
{
	struct mmch_host *h = inode->i_private;
	struct mmch_iter *it;
	unsigned long flags;
	u64 kept;

	it = __seq_open_private(file, &mmch_seq_ops, sizeof(*it));
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

static const struct file_operations mmch_history_fops = {
	.owner		= THIS_MODULE,
	.open		= mmch_history_open,
	.read		= seq_read,
	.llseek		= seq_lseek,
	.release	= seq_release_private,
};

static void mmch_clear(struct mmch_host *h)
{
	unsigned long flags;

	spin_lock_irqsave(&h->lock, flags);
	h->cleared = h->total;
	h->unmatched = 0;
	h->evicted = 0;
	spin_unlock_irqrestore(&h->lock, flags);
}

static ssize_t mmch_control_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct mmch_host *h;
	char buf[16];
	int i;

	if (count >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, count))
		return -EFAULT;
	buf[count] = '\0';
	if (!sysfs_streq(buf, "clear"))
		return -EINVAL;

	for (i = 0; i < MMCH_MAX_HOSTS; i++) {
		/* Pairs with mmch_claim() and mmch_work_fn(). */
		h = smp_load_acquire(&mmch_hosts[i]);
		if (h)
			mmch_clear(h);
	}
	return count;
}

static const struct file_operations mmch_control_fops = {
	.owner		= THIS_MODULE,
	.open		= simple_open,
	.write		= mmch_control_write,
	.llseek		= noop_llseek,
};

/* Process context: debugfs files for new hosts, rings for the ones missed. */
static void mmch_work_fn(struct work_struct *work)
{
	struct mmch_host *h, *n;
	char name[16];
	int i;

	for (i = 0; i < MMCH_MAX_HOSTS; i++) {
		n = NULL;
		if (test_bit(i, mmch_wanted) && !READ_ONCE(mmch_hosts[i]))
			n = mmch_alloc();
		spin_lock_irq(&mmch_hosts_lock);
		if (n && !mmch_hosts[i]) {
			n->index = i;
			/* Pairs with mmch_lookup(). */
			smp_store_release(&mmch_hosts[i], n);
			n = NULL;
		}
		if (mmch_hosts[i])
			__clear_bit(i, mmch_wanted);
		h = mmch_hosts[i];
		spin_unlock_irq(&mmch_hosts_lock);
		vfree(n);
		if (h && !h->file) {
			snprintf(name, sizeof(name), "mmc%d", i);
			h->file = debugfs_create_file(name, 0400, mmch_dir, h,
						      &mmch_history_fops);
		}
	}

	if (READ_ONCE(mmch_spare))
		return;
	n = mmch_alloc();
	spin_lock_irq(&mmch_hosts_lock);
	if (!mmch_spare) {
		mmch_spare = n;
		n = NULL;
	}
	spin_unlock_irq(&mmch_hosts_lock);
	vfree(n);
}

/* Called with mmch_mutex held. */
static void mmch_tp_attach(struct tracepoint *tp, void *priv)
{
	struct tracepoint **slot;
	void *probe;
	int ret;

	if (!strcmp(tp->name, "mmc_request_start")) {
		slot = &mmch_tp_start;
		probe = mmch_probe_start;
	} else if (!strcmp(tp->name, "mmc_request_done")) {
		slot = &mmch_tp_done;
		probe = mmch_probe_done;
	} else {
		return;
	}
	if (*slot)
		return;
	ret = tracepoint_probe_register(tp, probe, NULL);
	if (ret) {
		pr_warn("mmc_history: cannot attach to %s: %d\n", tp->name,
			ret);
		return;
	}
	*slot = tp;
}

static void mmch_tp_detach(struct tracepoint *tp)
{
	if (tp && tp == mmch_tp_start) {
		tracepoint_probe_unregister(tp, mmch_probe_start, NULL);
		mmch_tp_start = NULL;
	}
	if (tp && tp == mmch_tp_done) {
		tracepoint_probe_unregister(tp, mmch_probe_done, NULL);
		mmch_tp_done = NULL;
	}
}

/*
 * mmc_core coming or going (also replayed for loaded modules when the
 * notifier is registered or unregistered).  Going is called after the
 * module's exit function, when it has no request left in flight.
 */
static int mmch_tp_notify(struct notifier_block *nb, unsigned long val,
			  void *data)
{
	struct tp_module *tp_mod = data;
	struct module *mod = tp_mod->mod;
	tracepoint_ptr_t *p;

	mutex_lock(&mmch_mutex);
	for (p = mod->tracepoints_ptrs;
	     p < mod->tracepoints_ptrs + mod->num_tracepoints; p++) {
		if (val == MODULE_STATE_COMING)
			mmch_tp_attach(tracepoint_ptr_deref(p), NULL);
		else if (val == MODULE_STATE_GOING)
			mmch_tp_detach(tracepoint_ptr_deref(p));
	}
	mutex_unlock(&mmch_mutex);
	return NOTIFY_OK;
}

static struct notifier_block mmch_tp_nb = {
	.notifier_call = mmch_tp_notify,
};

static void mmch_free_all(void)
{
	int i;

	debugfs_remove_recursive(mmch_dir);
	for (i = 0; i < MMCH_MAX_HOSTS; i++)
		vfree(mmch_hosts[i]);
	vfree(mmch_spare);
}

static int __init mmch_init(void)
{
	int ret;

	if (ring_size > MMCH_MAX_RING) {
		pr_err("mmc_history: ring_size %u is above %u\n", ring_size,
		       MMCH_MAX_RING);
		return -EINVAL;
	}
	mmch_dir = debugfs_create_dir("mmc_history", NULL);
	debugfs_create_file("control", 0200, mmch_dir, NULL,
			    &mmch_control_fops);
	if (!ring_size)
		return 0;

	mmch_spare = mmch_alloc();
	if (!mmch_spare) {
		ret = -ENOMEM;
		goto out_free;
	}

	/* MMC built in: its tracepoints are the kernel's own. */
	mutex_lock(&mmch_mutex);
	for_each_kernel_tracepoint(mmch_tp_attach, NULL);
	mutex_unlock(&mmch_mutex);

	ret = register_tracepoint_module_notifier(&mmch_tp_nb);
	if (ret)
		goto out_detach;
	return 0;

out_detach:
	mutex_lock(&mmch_mutex);
	mmch_tp_detach(mmch_tp_start);
	mmch_tp_detach(mmch_tp_done);
	mutex_unlock(&mmch_mutex);
	tracepoint_synchronize_unregister();
	cancel_work_sync(&mmch_work);
out_free:
	mmch_free_all();
	return ret;
}

static void __exit mmch_exit(void)
{
	if (ring_size) {
		unregister_tracepoint_module_notifier(&mmch_tp_nb);
		mutex_lock(&mmch_mutex);
		mmch_tp_detach(mmch_tp_start);
		mmch_tp_detach(mmch_tp_done);
		mutex_unlock(&mmch_mutex);
		/* No probe runs after this, so none can queue the work. */
		tracepoint_synchronize_unregister();
		cancel_work_sync(&mmch_work);
	}
	mmch_free_all();
}

module_init(mmch_init);
module_exit(mmch_exit);

MODULE_AUTHOR("The fwdsched authors");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("History of MMC requests from the mmc_core tracepoints");
