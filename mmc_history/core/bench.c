// SPDX-License-Identifier: GPL-2.0
/*
 * Cost of one record of the mmc_core history patch, measured in a guest
 * without swapping mmc_core: this module is built from the same history.c
 * as the patch (tools/setup/build-mmc-core), registers a dummy host and runs
 * the request hooks N times; an empty function called the same way gives
 * the loop's own cost.
 *
 *   insmod mmc_history_bench.ko history_size=1024
 *   echo 100000 > /sys/kernel/debug/mmc_history_bench/bench
 *   cat /sys/kernel/debug/mmc_history_bench/bench
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/minmax.h>
#include <linux/mmc/core.h>
#include <linux/mmc/host.h>
#include <linux/mmc/mmc.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/seq_file.h>

#include "history.h"

#define BENCH_INDEX	1000
#define BENCH_MAX	10000000U

typedef void (*bench_fn_t)(struct mmc_host *host, struct mmc_request *mrq);

static struct dentry *bench_dir;
/* Only its index is read. */
static struct mmc_host bench_host_store;
static struct mmc_host *bench_host = &bench_host_store;
/* Protects the results below. */
static DEFINE_MUTEX(bench_mutex);
static u32 bench_n;
static u64 bench_hook_ns;
static u64 bench_null_ns;

static noinline void bench_start(struct mmc_host *host,
				 struct mmc_request *mrq)
{
	mmc_history_start(host, mrq);
}

static noinline void bench_done(struct mmc_host *host,
				struct mmc_request *mrq)
{
	mmc_history_done(host, mrq);
}

static noinline void bench_null(struct mmc_host *host,
				struct mmc_request *mrq)
{
	/* Keep the call: pretend to use the arguments. */
	asm volatile("" : : "r" (host), "r" (mrq) : "memory");
}

static u64 bench_loop(bench_fn_t start, bench_fn_t done,
		      struct mmc_request *mrq, u32 n)
{
	u64 t0, t1;
	u32 i;

	preempt_disable();
	t0 = ktime_get_ns();
	for (i = 0; i < n; i++) {
		mrq->data->blk_addr = i * 8;
		start(bench_host, mrq);
		done(bench_host, mrq);
	}
	t1 = ktime_get_ns();
	preempt_enable();
	return t1 - t0;
}

static void bench_run(u32 n)
{
	bench_fn_t start = bench_start, done = bench_done, null = bench_null;
	struct mmc_command cmd = { .opcode = MMC_READ_MULTIPLE_BLOCK };
	struct mmc_data data = { .blksz = 512, .blocks = 8,
				 .flags = MMC_DATA_READ };
	struct mmc_request mrq = { .cmd = &cmd, .data = &data };
	u64 hook_ns = 0, null_ns = 0;
	u32 left, c;

	OPTIMIZER_HIDE_VAR(start);
	OPTIMIZER_HIDE_VAR(done);
	OPTIMIZER_HIDE_VAR(null);
	for (left = n; left; left -= c) {
		c = min(left, 1000U);
		hook_ns += bench_loop(start, done, &mrq, c);
		null_ns += bench_loop(null, null, &mrq, c);
		cond_resched();
	}
	bench_n = n;
	bench_hook_ns = hook_ns;
	bench_null_ns = null_ns;
}

static ssize_t bench_write(struct file *file, const char __user *ubuf,
			   size_t count, loff_t *ppos)
{
	unsigned int n;
	int ret;

	ret = kstrtouint_from_user(ubuf, count, 0, &n);
	if (ret)
		return ret;
	if (!n || n > BENCH_MAX)
		return -EINVAL;
	mutex_lock(&bench_mutex);
	bench_run(n);
	mutex_unlock(&bench_mutex);
	return count;
}

static void bench_print(struct seq_file *m, const char *name, u64 ns)
{
	u64 milli = div_u64(ns * 1000, bench_n);

	seq_printf(m, " %s=%llu.%03u", name, div_u64(milli, 1000),
		   (unsigned int)(milli % 1000));
}

static int bench_show(struct seq_file *m, void *v)
{
	mutex_lock(&bench_mutex);
	if (bench_n) {
		seq_printf(m, "records=%u", bench_n);
		bench_print(m, "probe_ns", bench_hook_ns);
		bench_print(m, "null_ns", bench_null_ns);
		bench_print(m, "record_ns", bench_hook_ns > bench_null_ns ?
			    bench_hook_ns - bench_null_ns : 0);
		seq_putc(m, '\n');
	}
	mutex_unlock(&bench_mutex);
	return 0;
}

static int bench_open(struct inode *inode, struct file *file)
{
	return single_open(file, bench_show, NULL);
}

static const struct file_operations bench_fops = {
	.owner		= THIS_MODULE,
	.open		= bench_open,
	.read		= seq_read,
	.write		= bench_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static int __init bench_init(void)
{
	bench_host->index = BENCH_INDEX;
	bench_dir = debugfs_create_dir("mmc_history_bench", NULL);
	mmc_history_add(bench_host, bench_dir);
	debugfs_create_file("bench", 0600, bench_dir, NULL, &bench_fops);
	return 0;
}

static void __exit bench_exit(void)
{
	debugfs_remove_recursive(bench_dir);
	mmc_history_remove(bench_host);
}

module_init(bench_init);
module_exit(bench_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Cost of one record of the mmc_core history");
