// SPDX-License-Identifier: GPL-2.0
/*
 * mmc_history: a per-host history of MMC requests for stock kernels
 *
 * The records, their pairing and the history file are those of the mmc
 * core patch (core/history.c, built into this module); this file only
 * feeds them.  The mmc_request_start and mmc_request_done tracepoints of
 * mmc_core are not exported, so the module finds them through the
 * tracepoint module notifier (or among the kernel's own tracepoints when
 * MMC is built in) and attaches a probe to each, which records into the
 * ring of the host.  The ring of a host is preallocated: one spare ring
 * is kept ready, a host takes it the first time it is seen and a work
 * item prepares the next spare and the debugfs file
 * /sys/kernel/debug/mmc_history/<host>.  The probes neither allocate nor
 * sleep.  Writing "clear" to /sys/kernel/debug/mmc_history/control
 * empties all rings.
 */
#include <linux/bitops.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/mmc/host.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>

#include "core/history.h"

#ifndef CONFIG_TRACEPOINTS
#error "mmc_history needs CONFIG_TRACEPOINTS"
#endif

/* Hosts mmc0 .. mmc31 are recorded. */
#define MMCH_MAX_HOSTS		32

static unsigned int ring_size = 65536;
module_param(ring_size, uint, 0444);
MODULE_PARM_DESC(ring_size, "Records kept per host, oldest overwritten (0 = off)");

static struct mmc_history *mmch_hosts[MMCH_MAX_HOSTS];
/* Only touched by mmch_work_fn() and exit. */
static struct dentry *mmch_files[MMCH_MAX_HOSTS];
/* Protects mmch_spare, mmch_wanted and the writing of mmch_hosts[]. */
static DEFINE_SPINLOCK(mmch_hosts_lock);
static struct mmc_history *mmch_spare;
static DECLARE_BITMAP(mmch_wanted, MMCH_MAX_HOSTS);

static struct dentry *mmch_dir;
static void mmch_work_fn(struct work_struct *work);
static DECLARE_WORK(mmch_work, mmch_work_fn);

/* Serialises probe (un)registration. */
static DEFINE_MUTEX(mmch_mutex);
static struct tracepoint *mmch_tp_start;
static struct tracepoint *mmch_tp_done;

/* First request of a host: hand it the spare ring (called from a probe). */
static struct mmc_history *mmch_claim(int index)
{
	struct mmc_history *h;
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

static struct mmc_history *mmch_lookup(const struct mmc_host *host)
{
	unsigned int index = host->index;
	struct mmc_history *h;

	if (unlikely(index >= MMCH_MAX_HOSTS))
		return NULL;
	/* Pairs with mmch_claim() and mmch_work_fn(). */
	h = smp_load_acquire(&mmch_hosts[index]);
	if (likely(h))
		return h;
	return mmch_claim(index);
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
	struct mmc_history *h = mmch_lookup(host);

	if (h)
		mmc_history_record_start(h, mrq);
}

static void mmch_probe_done(void *data, struct mmc_host *host,
			    struct mmc_request *mrq)
{
	struct mmc_history *h = mmch_lookup(host);

	if (h)
		mmc_history_record_done(h, mrq);
}

/* "clear" empties the rings of all hosts. */
static ssize_t mmch_control_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	struct mmc_history *h;
	int i, ret;

	ret = mmc_history_parse_control(ubuf, count);
	if (ret)
		return ret;
	for (i = 0; i < MMCH_MAX_HOSTS; i++) {
		/* Pairs with mmch_claim() and mmch_work_fn(). */
		h = smp_load_acquire(&mmch_hosts[i]);
		if (h)
			mmc_history_clear(h);
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
	struct mmc_history *h, *n;
	char name[16];
	int i;

	for (i = 0; i < MMCH_MAX_HOSTS; i++) {
		n = NULL;
		if (test_bit(i, mmch_wanted) && !READ_ONCE(mmch_hosts[i]))
			n = mmc_history_alloc(i, ring_size);
		spin_lock_irq(&mmch_hosts_lock);
		if (n && !mmch_hosts[i]) {
			/* Pairs with mmch_lookup(). */
			smp_store_release(&mmch_hosts[i], n);
			n = NULL;
		}
		if (mmch_hosts[i])
			__clear_bit(i, mmch_wanted);
		h = mmch_hosts[i];
		spin_unlock_irq(&mmch_hosts_lock);
		mmc_history_free(n);
		if (h && !mmch_files[i]) {
			snprintf(name, sizeof(name), "mmc%d", i);
			mmch_files[i] = debugfs_create_file(name, 0400, mmch_dir,
							    h, &mmc_history_fops);
		}
	}

	if (READ_ONCE(mmch_spare))
		return;
	/* Its host index is set when a host claims it. */
	n = mmc_history_alloc(-1, ring_size);
	spin_lock_irq(&mmch_hosts_lock);
	if (!mmch_spare) {
		mmch_spare = n;
		n = NULL;
	}
	spin_unlock_irq(&mmch_hosts_lock);
	mmc_history_free(n);
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

/* Detach both probes and wait until neither runs, nor the work. */
static void mmch_detach_all(void)
{
	mutex_lock(&mmch_mutex);
	mmch_tp_detach(mmch_tp_start);
	mmch_tp_detach(mmch_tp_done);
	mutex_unlock(&mmch_mutex);
	/* No probe runs after this, so none can queue the work. */
	tracepoint_synchronize_unregister();
	cancel_work_sync(&mmch_work);
}

static void mmch_free_all(void)
{
	int i;

	debugfs_remove_recursive(mmch_dir);
	for (i = 0; i < MMCH_MAX_HOSTS; i++)
		mmc_history_free(mmch_hosts[i]);
	mmc_history_free(mmch_spare);
}

static int __init mmch_init(void)
{
	int ret;

	if (ring_size > MMC_HISTORY_MAX) {
		pr_err("mmc_history: ring_size %u is above %u\n", ring_size,
		       MMC_HISTORY_MAX);
		return -EINVAL;
	}
	mmch_dir = debugfs_create_dir("mmc_history", NULL);
	debugfs_create_file("control", 0200, mmch_dir, NULL,
			    &mmch_control_fops);
	if (!ring_size)
		return 0;

	mmch_spare = mmc_history_alloc(-1, ring_size);
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
	mmch_detach_all();
out_free:
	mmch_free_all();
	return ret;
}

static void __exit mmch_exit(void)
{
	if (ring_size) {
		unregister_tracepoint_module_notifier(&mmch_tp_nb);
		mmch_detach_all();
	}
	mmch_free_all();
}

module_init(mmch_init);
module_exit(mmch_exit);

MODULE_AUTHOR("The fwdsched authors");
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("History of MMC requests from the mmc_core tracepoints");
