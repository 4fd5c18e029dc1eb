/*
 * tests/hash/test_lflist_api.c: the ordered lock-free list, one behaviour per test,
 * single-threaded (the concurrent behaviour is exercised through the hash stress test).
 */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include <ringflow/lflist.h>

struct item {
	struct rf_lflist_node ln;
	int tag;     /* tie-break key */
	int retired; /* times the list handed it to retire */
};

static void count_retire(struct rf_lflist_node *n, void *arg)
{
	(void)arg;
	((struct item *)n)->retired++;
}

static int tag_cmp(const struct rf_lflist_node *n, const void *ukey, void *arg)
{
	(void)arg;
	int a = ((const struct item *)n)->tag, b = *(const int *)ukey;
	return (a > b) - (a < b);
}

static const struct rf_lflist_ops retire_ops = {NULL, count_retire, NULL};

Test(lflist, empty_list_has_nothing)
{
	struct rf_lflist l;
	rf_lflist_init(&l, NULL);
	cr_assert_null(rf_lflist_first(&l));
	cr_assert_null(rf_lflist_lookup(&l, 5, NULL));
	cr_assert_eq(rf_lflist_delete(&l, 5, NULL), -ENOENT);
}

Test(lflist, iteration_is_in_key_order)
{
	struct rf_lflist l;
	rf_lflist_init(&l, &retire_ops);
	static struct item it[64];
	for (int i = 0; i < 64; i++) {
		it[i].ln.key = (uint64_t)((i * 37) % 64) + 1; /* a permutation of 1..64 */
		cr_assert_eq(rf_lflist_insert(&l, &it[i].ln, NULL), 0);
	}
	uint64_t want = 1;
	for (struct rf_lflist_node *n = rf_lflist_first(&l); n; n = rf_lflist_next(n))
		cr_assert_eq(n->key, want++, "order");
	cr_assert_eq(want, 65);
}

Test(lflist, duplicate_insert_is_eexist_and_leaves_list_unchanged)
{
	struct rf_lflist l;
	rf_lflist_init(&l, NULL);
	struct item a = {.ln.key = 7}, b = {.ln.key = 7};
	cr_assert_eq(rf_lflist_insert(&l, &a.ln, NULL), 0);
	cr_assert_eq(rf_lflist_insert(&l, &b.ln, NULL), -EEXIST);
	cr_assert_eq(rf_lflist_lookup(&l, 7, NULL), &a.ln);
	cr_assert_null(rf_lflist_next(&a.ln));
}

Test(lflist, delete_unlinks_and_retires_exactly_once)
{
	struct rf_lflist l;
	rf_lflist_init(&l, &retire_ops);
	struct item it[3] = {{.ln.key = 1}, {.ln.key = 2}, {.ln.key = 3}};
	for (int i = 0; i < 3; i++)
		cr_assert_eq(rf_lflist_insert(&l, &it[i].ln, NULL), 0);
	cr_assert_eq(rf_lflist_delete(&l, 2, NULL), 0);
	cr_assert_eq(rf_lflist_delete(&l, 2, NULL), -ENOENT);
	cr_assert_null(rf_lflist_lookup(&l, 2, NULL));
	cr_assert_eq(it[1].retired, 1);
	cr_assert(rf_lflist_is_marked(&it[1].ln));
	cr_assert_eq(rf_lflist_next(&it[0].ln), &it[2].ln, "2 is unlinked");
	cr_assert_eq(it[0].retired + it[2].retired, 0);
}

Test(lflist, marked_node_is_invisible_then_unlinked_by_the_next_search)
{
	struct rf_lflist l;
	rf_lflist_init(&l, &retire_ops);
	struct item it[3] = {{.ln.key = 10}, {.ln.key = 20}, {.ln.key = 30}};
	for (int i = 0; i < 3; i++)
		cr_assert_eq(rf_lflist_insert(&l, &it[i].ln, NULL), 0);
	cr_assert(rf_lflist_mark(&it[1].ln));
	cr_assert_not(rf_lflist_mark(&it[1].ln), "second mark reports it was set");
	cr_assert_null(rf_lflist_lookup(&l, 20, NULL), "logically deleted");
	cr_assert_eq(it[1].retired, 0, "lookup never writes, so it did not unlink");
	/* A physical search walks past it and unlinks it. */
	struct rf_lflist_pos pos;
	cr_assert(rf_lflist_find_from(&l.head, 30, NULL, &l.ops, &pos));
	cr_assert_eq(pos.prev, &it[0].ln);
	cr_assert_eq(pos.cur, &it[2].ln);
	cr_assert_eq(it[1].retired, 1);
	/* Nothing can be linked behind a marked node: link after it fails. */
	struct item x = {.ln.key = 25};
	struct rf_lflist_pos stale = {&it[1].ln, &it[2].ln};
	cr_assert_not(rf_lflist_link(&stale, &x.ln));
}

Test(lflist, link_fails_when_the_neighbourhood_changed)
{
	struct rf_lflist l;
	rf_lflist_init(&l, NULL);
	struct item a = {.ln.key = 1}, c = {.ln.key = 3}, b = {.ln.key = 2}, d = {.ln.key = 2};
	rf_lflist_insert(&l, &a.ln, NULL);
	rf_lflist_insert(&l, &c.ln, NULL);
	struct rf_lflist_pos pos;
	cr_assert_not(rf_lflist_find_from(&l.head, 2, NULL, &l.ops, &pos));
	cr_assert_eq(pos.prev, &a.ln);
	cr_assert_eq(pos.cur, &c.ln);
	cr_assert(rf_lflist_link(&pos, &b.ln));
	cr_assert_not(rf_lflist_link(&pos, &d.ln), "a.next is no longer c");
	cr_assert_eq(rf_lflist_lookup(&l, 2, NULL), &b.ln);
}

Test(lflist, comparator_orders_equal_keys)
{
	struct rf_lflist_ops ops = {tag_cmp, count_retire, NULL};
	struct rf_lflist l;
	rf_lflist_init(&l, &ops);
	struct item it[4] = {{.ln.key = 5, .tag = 3}, {.ln.key = 5, .tag = 1},
			     {.ln.key = 5, .tag = 2}, {.ln.key = 4, .tag = 9}};
	for (int i = 0; i < 4; i++)
		cr_assert_eq(rf_lflist_insert(&l, &it[i].ln, &it[i].tag), 0);
	int dup = 2;
	struct item x = {.ln.key = 5, .tag = 2};
	cr_assert_eq(rf_lflist_insert(&l, &x.ln, &dup), -EEXIST);
	int want[4] = {9, 1, 2, 3}, i = 0;
	for (struct rf_lflist_node *n = rf_lflist_first(&l); n; n = rf_lflist_next(n))
		cr_assert_eq(((struct item *)n)->tag, want[i++]);
	cr_assert_eq(i, 4);
	cr_assert_eq(rf_lflist_delete(&l, 5, &dup), 0);
	cr_assert_eq(it[2].retired, 1);
	int one = 1, three = 3;
	cr_assert_eq(rf_lflist_lookup(&l, 5, &one), &it[1].ln);
	cr_assert_eq(rf_lflist_lookup(&l, 5, &three), &it[0].ln);
	cr_assert_null(rf_lflist_lookup(&l, 5, &dup));
}

Test(lflist, lookup_from_a_middle_node)
{
	struct rf_lflist l;
	rf_lflist_init(&l, NULL);
	struct item it[5];
	for (int i = 0; i < 5; i++) {
		memset(&it[i], 0, sizeof(it[i]));
		it[i].ln.key = (uint64_t)(i + 1) * 10;
		rf_lflist_insert(&l, &it[i].ln, NULL);
	}
	cr_assert_eq(rf_lflist_lookup_from(&it[1].ln, 40, NULL, &l.ops), &it[3].ln);
	cr_assert_null(rf_lflist_lookup_from(&it[1].ln, 45, NULL, &l.ops));
}
