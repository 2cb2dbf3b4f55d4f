package cluster_test

import (
	"fmt"

	"github.com/pacer-load/pacer/cluster"
)

// A key's hash slot is CRC16 of the key mod 16384, or of its hash tag, the
// part between the first "{" and the next "}", when there is one.
func ExampleSlot() {
	for _, key := range []string{"foo", "{user1000}.following", "{user1000}.followers", "user1000"} {
		fmt.Println(key, cluster.Slot([]byte(key)))
	}
	// Output:
	// foo 12182
	// {user1000}.following 3443
	// {user1000}.followers 3443
	// user1000 3443
}

// Tag finds a short hash tag for a chosen slot: a key written "{tag}:…"
// goes to that slot's primary (redis-benchmark --cluster's way).
func ExampleTag() {
	tag := cluster.Tag(12182)
	fmt.Printf("{%s} %d\n", tag, cluster.Slot([]byte("{"+string(tag)+"}:key")))
	// Output: {9Le} 12182
}

// CommandSlot finds where a command must go; keys in different slots are
// refused, with the advice a user needs.
func ExampleCommandSlot() {
	args := func(s ...string) [][]byte {
		b := make([][]byte, len(s))
		for i := range s {
			b[i] = []byte(s[i])
		}
		return b
	}
	slot, hasKey, err := cluster.CommandSlot(args("GET", "foo"))
	fmt.Println(slot, hasKey, err)
	slot, hasKey, err = cluster.CommandSlot(args("PING"))
	fmt.Println(slot, hasKey, err)
	_, _, err = cluster.CommandSlot(args("MSET", "a", "1", "b", "2"))
	fmt.Println(err)
	// Output:
	// 12182 true <nil>
	// 0 false <nil>
	// MSET keys span slots 15495 and 3300; use a {hash tag}
}

// ParseRedirect reads -MOVED and -ASK replies (their text, without the
// leading "-").
func ExampleParseRedirect() {
	for _, text := range []string{"MOVED 3999 127.0.0.1:6381", "ASK 3999 127.0.0.1:6382", "ERR unknown command"} {
		r, ok := cluster.ParseRedirect([]byte(text))
		if !ok {
			fmt.Println("not a redirect:", text)
			continue
		}
		fmt.Println(r.Ask, r.Slot, r.Addr)
	}
	// Output:
	// false 3999 127.0.0.1:6381
	// true 3999 127.0.0.1:6382
	// not a redirect: ERR unknown command
}

// TagSlot gives a key's "{tag}" the slot the rest of its name hashes to:
// one key always gets one tag, whoever writes or reads it (pacer fill
// --cluster and run --cluster alike).
func ExampleTagSlot() {
	key := []byte("key:{tag}:000000000042")
	slot := cluster.TagSlot(key)
	cluster.PutTag(key[4:9], slot)
	fmt.Println(string(key), slot, cluster.Slot(key))
	// Output: key:{0hu}:000000000042 10516 10516
}

// Redis 7 answers "-MOVED 3999 :6381" when it does not know the endpoint
// to name: that port is on the host of the node that answered.
func ExampleRedirect_Target() {
	r, _ := cluster.ParseRedirect([]byte("MOVED 3999 :6381"))
	fmt.Println(r.Addr, r.Target("127.0.0.2:6379"))
	// Output: :6381 127.0.0.2:6381
}
