// SPDX-License-Identifier: GPL-2.0-only
/*
 * MMC request history: the hooks of the core
 *
 * With mmc_core.history_size=N, each host added gets a history of its
 * last N requests (history.c), recorded for the legacy and CQE paths
 * alike, and two debugfs files next to its others:
 *
 *   /sys/kernel/debug/<host>/history		the records
 *   /sys/kernel/debug/<host>/history_control	write "clear" to empty it
 *
 * With history_size = 0 (the default) nothing is allocated and the hooks
 * are a patched-out jump.
 */
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/jump_label.h>
#include <linux/minmax.h>
#include <linux/mmc/host.h>
#include <linux/moduleparam.h>
#include <linux/rcupdate.h>
#include <linux/xarray.h>

#include "history.h"

static unsigned int history_size;
module_param(history_size, uint, 0444);
MODULE_PARM_DESC(history_size,
		 "Requests kept per host in debugfs <host>/history (0 = off)");

DEFINE_STATIC_KEY_FALSE(mmc_history_enabled);

/* struct mmc_history of each host that keeps one, by host index. */
static DEFINE_XARRAY(mmc_histories);

/*
 * The one way into a history from the request path: looked up under RCU
 * (mmc_history_remove() waits for it), changed under its own lock.
 */
static void mmc_history_hook(struct mmc_host *host,
			     const struct mmc_request *mrq, bool done)
{
	struct mmc_history *h;

	rcu_read_lock();
	h = xa_load(&mmc_histories, host->index);
	if (h && done)
		mmc_history_record_done(h, mrq);
	else if (h)
		mmc_history_record_start(h, mrq);
	rcu_read_unlock();
}

/* Called from __mmc_start_request() and mmc_cqe_start_req(). */
void __mmc_history_start(struct mmc_host *host, struct mmc_request *mrq)
{
	mmc_history_hook(host, mrq, false);
}

/* Called from mmc_request_done() and mmc_cqe_request_done(). */
void __mmc_history_done(struct mmc_host *host, struct mmc_request *mrq)
{
	mmc_history_hook(host, mrq, true);
}

static ssize_t mmc_history_control_write(struct file *file,
					 const char __user *ubuf,
					 size_t count, loff_t *ppos)
{
	int ret;

	ret = mmc_history_parse_control(ubuf, count);
	if (ret)
		return ret;
	mmc_history_clear(file->private_data);
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
	unsigned int size = min_t(unsigned int, history_size,
				  MMC_HISTORY_MAX);
	struct mmc_history *h;

	if (!size)
		return;

	h = mmc_history_alloc(host->index, size);
	if (!h)
		goto out_warn;
	if (xa_err(xa_store(&mmc_histories, host->index, h, GFP_KERNEL))) {
		mmc_history_free(h);
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
	mmc_history_free(h);
}
