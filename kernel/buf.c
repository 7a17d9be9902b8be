// SPDX-License-Identifier: GPL-2.0
/* Page buffers that data is received into and sent from, and their CRC32C. */
#include <linux/crc32c.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/uio.h>

#include "iet.h"

/*
 * Room for len bytes without the pages: they come with iet_buf_grow(), so
 * that a command holds memory only for data it is about to move.
 */
int iet_buf_reserve(struct iet_buf *buf, u32 len)
{
	unsigned int noio;

	buf->bvec = NULL;
	buf->nr = 0;
	buf->cap = DIV_ROUND_UP(len, PAGE_SIZE);
	buf->len = 0;
	buf->lent = false;
	buf->pool = NULL;
	if (!len)
		return 0;
	/* The scope, not the flags, lets kvmalloc fall back to vmalloc. */
	noio = memalloc_noio_save();
	buf->bvec = kvmalloc_array(buf->cap, sizeof(*buf->bvec), GFP_KERNEL);
	memalloc_noio_restore(noio);
	if (!buf->bvec) {
		buf->cap = 0;
		return -ENOMEM;
	}
	return 0;
}

void iet_page_pool_init(struct iet_page_pool *pool)
{
	spin_lock_init(&pool->lock);
	pool->nr = 0;
}

void iet_page_pool_drain(struct iet_page_pool *pool)
{
	while (pool->nr)
		put_page(pool->pages[--pool->nr]);
}

static struct page *pool_get(struct iet_page_pool *pool)
{
	struct page *page = NULL;
	unsigned long flags;

	if (pool && READ_ONCE(pool->nr)) {
		spin_lock_irqsave(&pool->lock, flags);
		if (pool->nr)
			page = pool->pages[--pool->nr];
		spin_unlock_irqrestore(&pool->lock, flags);
	}
	return page ?: alloc_page(GFP_NOIO | __GFP_NOWARN);
}

/*
 * Kept only while nobody else holds the page: a socket may, until the
 * peer has acknowledged what was sent from it, and it must not change
 * under a retransmission.
 */
static void pool_put(struct iet_page_pool *pool, struct page *page)
{
	unsigned long flags;
	bool kept = false;

	if (page_ref_count(page) == 1 && READ_ONCE(pool->nr) < IET_POOL_PAGES) {
		spin_lock_irqsave(&pool->lock, flags);
		if (pool->nr < IET_POOL_PAGES) {
			pool->pages[pool->nr++] = page;
			kept = true;
		}
		spin_unlock_irqrestore(&pool->lock, flags);
	}
	if (!kept)
		put_page(page);
}

/* Pages until the buffer holds len bytes (at most what was reserved). */
int iet_buf_grow(struct iet_buf *buf, u32 len)
{
	unsigned int nr = DIV_ROUND_UP(len, PAGE_SIZE);

	if (len <= buf->len)
		return 0;
	if (WARN_ON_ONCE(nr > buf->cap))
		return -EINVAL;
	/* A partly used last page becomes whole. */
	if (buf->nr)
		buf->bvec[buf->nr - 1].bv_len = PAGE_SIZE;
	for (; buf->nr < nr; buf->nr++) {
		struct page *page = pool_get(buf->pool);

		if (!page) {
			buf->len = buf->nr * PAGE_SIZE;
			return -ENOMEM;
		}
		buf->bvec[buf->nr].bv_page = page;
		buf->bvec[buf->nr].bv_offset = 0;
		buf->bvec[buf->nr].bv_len = PAGE_SIZE;
	}
	buf->bvec[nr - 1].bv_len = len - (nr - 1) * PAGE_SIZE;
	buf->len = len;
	return 0;
}

int iet_buf_alloc(struct iet_buf *buf, u32 len)
{
	int ret = iet_buf_reserve(buf, len) ?: iet_buf_grow(buf, len);

	if (ret)
		iet_buf_free(buf);
	return ret;
}

/*
 * Pages lent to a read (iet_backend_ops.lend) rather than allocated: a
 * reference the buffer takes over, to len bytes of the page (at most a
 * page) appended to it. Only the last page may be short: false, with the
 * reference left to the caller, where the buffer is full or its last page
 * is.
 */
bool iet_buf_lend(struct iet_buf *buf, struct page *page, u32 len)
{
	struct bio_vec *bv;

	if (buf->nr == buf->cap || buf->len % PAGE_SIZE || !len ||
	    len > PAGE_SIZE)
		return false;
	bv = &buf->bvec[buf->nr++];
	bv->bv_page = page;
	bv->bv_offset = 0;
	bv->bv_len = len;
	buf->len += len;
	buf->lent = true;
	return true;
}

/*
 * Drop the pages, allocated or lent; the buffer stays reserved. Its own
 * go back to its pool, if it has one.
 */
void iet_buf_return(struct iet_buf *buf)
{
	while (buf->nr) {
		struct page *page = buf->bvec[--buf->nr].bv_page;

		if (buf->pool && !buf->lent)
			pool_put(buf->pool, page);
		else
			put_page(page);
	}
	buf->len = 0;
	buf->lent = false;
}

/* Read by nobody's writes: lent to every read of zeros. */
static struct page *zero_page;

/* Fill a reserved, empty buffer with len bytes of zeros, by reference. */
int iet_buf_lend_zeros(struct iet_buf *buf, u32 len)
{
	while (buf->len < len) {
		get_page(zero_page);
		if (!iet_buf_lend(buf, zero_page,
				  min_t(u32, len - buf->len, PAGE_SIZE))) {
			put_page(zero_page);
			iet_buf_return(buf);
			return -EAGAIN;
		}
	}
	return 0;
}

int iet_buf_init(void)
{
	zero_page = alloc_page(GFP_KERNEL | __GFP_ZERO);
	return zero_page ? 0 : -ENOMEM;
}

/* Sockets may hold the page a while yet: it goes with the last of them. */
void iet_buf_exit(void)
{
	put_page(zero_page);
}

void iet_buf_free(struct iet_buf *buf)
{
	iet_buf_return(buf);
	kvfree(buf->bvec);
	buf->bvec = NULL;
	buf->nr = 0;
	buf->cap = 0;
	buf->len = 0;
}

void iet_buf_iter(const struct iet_buf *buf, struct iov_iter *iter,
		  unsigned int dir, u32 off, u32 len)
{
	iov_iter_bvec(iter, dir, buf->bvec, buf->nr, buf->len);
	iov_iter_advance(iter, off);
	iov_iter_truncate(iter, len);
}

/* Copies that run past the end of the buffer are cut short. */
void iet_buf_copy_to(struct iet_buf *buf, u32 off, const void *src, u32 len)
{
	struct iov_iter iter;

	if (off >= buf->len)
		return;
	len = min(len, buf->len - off);
	iet_buf_iter(buf, &iter, ITER_DEST, off, len);
	WARN_ON_ONCE(copy_to_iter(src, len, &iter) != len);
}

void iet_buf_copy_from(const struct iet_buf *buf, u32 off, void *dst, u32 len)
{
	struct iov_iter iter;

	if (off >= buf->len)
		return;
	len = min(len, buf->len - off);
	iet_buf_iter(buf, &iter, ITER_SOURCE, off, len);
	WARN_ON_ONCE(copy_from_iter(dst, len, &iter) != len);
}

void iet_buf_zero(struct iet_buf *buf, u32 off, u32 len)
{
	struct iov_iter iter;

	if (off >= buf->len)
		return;
	len = min(len, buf->len - off);
	iet_buf_iter(buf, &iter, ITER_DEST, off, len);
	iov_iter_zero(len, &iter);
}

u32 iet_crc32c(u32 crc, const void *data, u32 len)
{
	return crc32c(crc, data, len);
}

u32 iet_crc32c_buf(u32 crc, const struct iet_buf *buf, u32 off, u32 len)
{
	unsigned int i = off / PAGE_SIZE;

	off %= PAGE_SIZE;
	while (len && i < buf->nr) {
		u32 n = min_t(u32, len, buf->bvec[i].bv_len - off);
		void *p = kmap_local_page(buf->bvec[i].bv_page);

		crc = crc32c(crc, p + off, n);
		kunmap_local(p);
		len -= n;
		off = 0;
		i++;
	}
	return crc;
}

/*
 * Where len bytes of a at aoff and of b at boff first differ, or len if
 * they do not (both must hold them).
 */
u32 iet_buf_cmp(const struct iet_buf *a, u32 aoff, const struct iet_buf *b,
		u32 boff, u32 len)
{
	u32 done = 0;

	if (WARN_ON_ONCE(aoff + len > a->len || boff + len > b->len))
		return 0;
	while (done < len) {
		u32 ao = aoff % PAGE_SIZE, bo = boff % PAGE_SIZE;
		u32 n = min3(len - done, (u32)PAGE_SIZE - ao, (u32)PAGE_SIZE - bo);
		u8 *pa = kmap_local_page(a->bvec[aoff / PAGE_SIZE].bv_page);
		u8 *pb = kmap_local_page(b->bvec[boff / PAGE_SIZE].bv_page);
		u32 i = 0;

		if (memcmp(pa + ao, pb + bo, n))
			while (pa[ao + i] == pb[bo + i])
				i++;
		else
			i = n;
		kunmap_local(pb);
		kunmap_local(pa);
		done += i;
		if (i < n)
			break;
		aoff += n;
		boff += n;
	}
	return done;
}

/* dst |= src, len bytes of each at doff and soff (ORWRITE). */
void iet_buf_or(struct iet_buf *dst, u32 doff, const struct iet_buf *src,
		u32 soff, u32 len)
{
	if (WARN_ON_ONCE(doff + len > dst->len || soff + len > src->len))
		return;
	while (len) {
		u32 d = doff % PAGE_SIZE, s = soff % PAGE_SIZE;
		u32 n = min3(len, (u32)PAGE_SIZE - d, (u32)PAGE_SIZE - s), i;
		u8 *pd = kmap_local_page(dst->bvec[doff / PAGE_SIZE].bv_page);
		u8 *ps = kmap_local_page(src->bvec[soff / PAGE_SIZE].bv_page);

		if (!((d | s | n) % sizeof(long))) {
			unsigned long *ld = (unsigned long *)(pd + d);
			const unsigned long *ls = (const unsigned long *)(ps + s);

			for (i = 0; i < n / sizeof(long); i++)
				ld[i] |= ls[i];
		} else {
			for (i = 0; i < n; i++)
				pd[d + i] |= ps[s + i];
		}
		kunmap_local(ps);
		kunmap_local(pd);
		doff += n;
		soff += n;
		len -= n;
	}
}
