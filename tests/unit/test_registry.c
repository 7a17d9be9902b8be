// SPDX-License-Identifier: GPL-2.0
/* Sessions ietd knows: TSIH allocation, lookups, kernel state and events. */
#include <errno.h>

#include "helpers.h"
#include "registry.h"
#include "test.h"

TEST(registry_tsihs_are_nonzero_and_unique)
{
	struct registry r;
	bool seen[65536] = { false };
	size_t i;

	registry_init(&r);
	for (i = 0; i < 1000; i++) {
		struct reg_session *s = registry_reserve(&r, 1, i, INITIATOR,
							 false);

		REQUIRE(s != NULL);
		CHECK(reg_tsih(s) != 0);
		CHECK(!seen[reg_tsih(s)]);
		seen[reg_tsih(s)] = true;
		CHECK_EQ(reg_isid(s), i);
		CHECK(s->pending);
	}
	registry_free(&r);
}

TEST(registry_freed_tsih_is_not_handed_out_again_at_once)
{
	struct registry r;
	struct reg_session *a, *b;
	uint16_t t;

	registry_init(&r);
	a = registry_reserve(&r, 1, 1, INITIATOR, false);
	t = reg_tsih(a);
	registry_drop(&r, a);
	b = registry_reserve(&r, 1, 1, INITIATOR, false);
	CHECK(reg_tsih(b) != t);
	registry_free(&r);
}

TEST(registry_skips_tsihs_the_kernel_still_has)
{
	struct registry r;
	struct kstate st;
	struct ktarget kt = { .tid = 1 };
	struct ksession ks = { .sid = make_sid(5, 1) };
	struct reg_session *s;

	strcpy(ks.initiator, INITIATOR);
	kt.sessions = &ks;
	kt.nr_sessions = 1;
	st.targets = &kt;
	st.nr_targets = 1;
	registry_init(&r);
	REQUIRE(registry_learn(&r, &st) == 0);
	s = registry_reserve(&r, 2, 9, INITIATOR, false);
	CHECK(reg_tsih(s) != 1);
	registry_free(&r);
}

TEST(registry_learns_sessions_and_connections_from_the_kernel)
{
	struct registry r;
	struct kstate st;
	struct ktarget kt = { .tid = 3 };
	struct kconn kc[2] = { { .cid = 0 }, { .cid = 4 } };
	struct ksession ks = { .sid = make_sid(0xabc, 7), .conns = kc,
			       .nr_conns = 2 };
	struct reg_session *s;

	strcpy(ks.initiator, INITIATOR);
	ks.keys[IET_KEY_MAX_CONNECTIONS] = 2;
	kt.sessions = &ks;
	kt.nr_sessions = 1;
	st.targets = &kt;
	st.nr_targets = 1;
	registry_init(&r);
	REQUIRE(registry_learn(&r, &st) == 0);
	s = registry_find_tsih(&r, 3, 7);
	REQUIRE(s != NULL);
	CHECK_EQ(reg_isid(s), 0xabc);
	CHECK(!s->pending);
	CHECK_EQ(s->keys[IET_KEY_MAX_CONNECTIONS], 2);
	CHECK(registry_has_cid(s, 0) && registry_has_cid(s, 4));
	CHECK(registry_find_isid(&r, 3, 1, INITIATOR, 0xabc) == s);
	CHECK(registry_find_isid(&r, 3, 1, "iqn.other:x", 0xabc) == NULL);
	CHECK(registry_find_isid(&r, 2, 1, INITIATOR, 0xabc) == NULL);
	/* Through another portal group it is another I_T nexus. */
	CHECK(registry_find_isid(&r, 3, 2, INITIATOR, 0xabc) == NULL);
	registry_free(&r);
}

TEST(registry_lookups_ignore_pending_and_discovery_sessions)
{
	struct registry r;
	struct reg_session *p, *d;

	registry_init(&r);
	p = registry_reserve(&r, 1, 0x10, INITIATOR, false);
	d = registry_reserve(&r, 0, 0x11, INITIATOR, true);
	CHECK(registry_find_tsih(&r, 1, reg_tsih(p)) == NULL);
	CHECK(registry_find_isid(&r, 1, 1, INITIATOR, 0x10) == NULL);
	CHECK(registry_find_tsih(&r, 0, reg_tsih(d)) == NULL);
	CHECK_EQ(registry_count(&r, 1), 1);	/* pending counts */
	CHECK_EQ(registry_count(&r, 0), 0);	/* discovery does not */
	registry_free(&r);
}

TEST(registry_session_closed_event_forgets_the_session)
{
	struct registry r;
	struct reg_session *s;
	uint32_t keys[IET_KEY_COUNT] = { 0 };
	struct kevent ev = { .type = KEVENT_SESSION_CLOSED, .tid = 1 };

	registry_init(&r);
	s = registry_reserve(&r, 1, 0x10, INITIATOR, false);
	registry_commit(s, keys);
	ev.sid = s->sid;
	registry_event(&r, &ev);
	CHECK_EQ(r.nr, 0);
	registry_free(&r);
}

TEST(registry_connection_closed_event_forgets_the_cid)
{
	struct registry r;
	struct reg_session *s;
	uint32_t keys[IET_KEY_COUNT] = { 0 };
	struct kevent ev = { .type = KEVENT_CONN_CLOSED, .tid = 1, .cid = 2 };

	registry_init(&r);
	s = registry_reserve(&r, 1, 0x10, INITIATOR, false);
	registry_commit(s, keys);
	registry_add_cid(s, 1);
	registry_add_cid(s, 2);
	ev.sid = s->sid;
	registry_event(&r, &ev);
	CHECK(registry_has_cid(s, 1));
	CHECK(!registry_has_cid(s, 2));
	CHECK_EQ(r.nr, 1);
	registry_free(&r);
}

TEST(registry_events_do_not_touch_pending_reservations)
{
	struct registry r;
	struct reg_session *s;
	struct kevent ev = { .type = KEVENT_SESSION_CLOSED, .tid = 1 };

	registry_init(&r);
	s = registry_reserve(&r, 1, 0x10, INITIATOR, false);
	ev.sid = s->sid;
	registry_event(&r, &ev);
	CHECK_EQ(r.nr, 1);
	registry_free(&r);
}

TEST(registry_relearning_keeps_reservations_and_discovery_sessions)
{
	struct registry r;
	struct kstate st = { 0 };

	registry_init(&r);
	registry_reserve(&r, 1, 0x10, INITIATOR, false);
	registry_reserve(&r, 0, 0x11, INITIATOR, true);
	REQUIRE(registry_learn(&r, &st) == 0);
	CHECK_EQ(r.nr, 2);
	registry_free(&r);
}

TEST(registry_cid_reservation_counts_until_released_and_survives_a_resync)
{
	struct registry r;
	struct kstate st;
	struct ktarget kt = { .tid = 1 };
	struct ksession ks = { .sid = make_sid(5, 1) };
	struct kconn kc = { .cid = 0 };
	struct reg_session *s;

	strcpy(ks.initiator, INITIATOR);
	ks.conns = &kc;
	ks.nr_conns = 1;
	kt.sessions = &ks;
	kt.nr_sessions = 1;
	st.targets = &kt;
	st.nr_targets = 1;
	registry_init(&r);
	REQUIRE(registry_learn(&r, &st) == 0);
	s = registry_find(&r, 1, ks.sid);
	REQUIRE(s != NULL);
	CHECK_EQ(registry_reserve_cid(s, 1), 0);
	CHECK_EQ(registry_reserve_cid(s, 1), -EBUSY);
	CHECK_EQ(registry_conns(s), 2);
	/* Events were lost: the kernel's sessions are read again. */
	REQUIRE(registry_learn(&r, &st) == 0);
	s = registry_find(&r, 1, ks.sid);
	CHECK_EQ(registry_conns(s), 2);
	registry_release_cid(&r, 1, ks.sid, 1);
	CHECK_EQ(registry_conns(s), 1);
	/* Released after its session ended: nothing to do, no crash. */
	registry_release_cid(&r, 1, make_sid(9, 9), 1);
	registry_free(&r);
}
