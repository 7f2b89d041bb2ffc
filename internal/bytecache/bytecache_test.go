package bytecache

import "testing"

func TestByteBound(t *testing.T) {
	c := New[string, string](0, 10, 0)
	for _, k := range []string{"a", "b", "c"} {
		if !c.Add(k, k, 4) {
			t.Fatalf("%s not kept", k)
		}
	}
	// 12 bytes > 10: the oldest ("a") went.
	if _, ok := c.Get("a"); ok || c.Len() != 2 || c.Bytes() != 8 {
		t.Errorf("after 3 adds: a kept %v, %d entries, %d bytes", ok, c.Len(), c.Bytes())
	}
	// Using "b" makes "c" the oldest.
	c.Get("b")
	c.Add("d", "d", 4)
	if _, ok := c.Get("c"); ok {
		t.Error("the least recently used entry was kept")
	}
	if _, ok := c.Get("b"); !ok {
		t.Error("the recently used entry was evicted")
	}
	if c.Bytes() > 10 {
		t.Errorf("%d bytes, bound 10", c.Bytes())
	}
}

func TestEntryBound(t *testing.T) {
	c := New[int, int](2, 100, 30)
	if c.Add(1, 1, 31) {
		t.Error("an entry over the per-entry bound was kept")
	}
	c.Add(1, 1, 10)
	c.Add(2, 2, 10)
	c.Add(3, 3, 10)
	if c.Len() != 2 || c.Bytes() != 20 {
		t.Errorf("%d entries, %d bytes; want 2, 20", c.Len(), c.Bytes())
	}
}

func TestKeepsFirstValue(t *testing.T) {
	c := New[string, string](0, 100, 0)
	c.Add("k", "first", 5)
	if c.Add("k", "second", 6) {
		t.Error("a second value replaced the first")
	}
	if v, _ := c.Get("k"); v != "first" || c.Bytes() != 5 {
		t.Errorf("got %q, %d bytes", v, c.Bytes())
	}
}
