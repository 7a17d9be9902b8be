/* SPDX-License-Identifier: GPL-2.0 */
/* Portal groups leaving a target under its sessions, never waited for (tpg_retire.c). */
#ifndef IET_USR_TPG_RETIRE_H
#define IET_USR_TPG_RETIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Take group tpgt from target tid: its initiators are asked to log out
 * within wait seconds, and the group goes once they have (or, past that,
 * once ietd has closed what stayed), at a later tpg_retire_poll(). With
 * nobody to ask, or when the kernel cannot ask, what is there is closed
 * and the group deleted at once. Returns 0 (deleted, or on its way), or
 * the -errno of deleting it.
 */
int tpg_retire(uint32_t tid, uint16_t tpgt, unsigned int wait);
/* Whether the group is on its way out. */
bool tpg_retiring(uint32_t tid, uint16_t tpgt);
/* Keep the group after all (a plan undone): whether it was on its way. */
bool tpg_retire_cancel(uint32_t tid, uint16_t tpgt);
/* End the retirements whose sessions are gone or whose time is up. */
void tpg_retire_poll(uint64_t now);
size_t tpg_retire_pending(void);
void tpg_retire_free_all(void);

#endif
