/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * MMC request history
 */
#ifndef _MMC_CORE_HISTORY_H
#define _MMC_CORE_HISTORY_H

#include <linux/jump_label.h>

struct dentry;
struct mmc_host;
struct mmc_request;

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
