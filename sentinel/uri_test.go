package sentinel

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseURI(t *testing.T) {
	for _, c := range []struct {
		in   string
		want URI
	}{
		{"redis+sentinel://127.0.0.1:26380,127.0.0.1:26381/mymaster", URI{Sentinels: []string{"127.0.0.1:26380", "127.0.0.1:26381"}, Master: "mymaster"}},
		{"redis+sentinel://alice:s%40cret@127.0.0.1/m/2", URI{Sentinels: []string{"127.0.0.1:26379"}, Master: "m", DB: 2, User: "alice", Password: "s@cret"}},
		{"redis+sentinel://p@ss@127.0.0.1:1/m", URI{Sentinels: []string{"127.0.0.1:1"}, Master: "m", Password: "p@ss"}},
		{"rediss+sentinel://127.0.0.1:1/m?sentinel_username=w&sentinel_password=x", URI{Sentinels: []string{"127.0.0.1:1"}, Master: "m", TLS: true, SentinelUser: "w", SentinelPassword: "x"}},
		{"redis-sentinel://:pw@127.0.0.1:1,[::1]:2/3?sentinelMasterId=m", URI{Sentinels: []string{"127.0.0.1:1", "[::1]:2"}, Master: "m", DB: 3, Password: "pw"}},
	} {
		got, err := ParseURI(c.in)
		if err != nil || !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v, %v\nwant %+v", c.in, got, err, c.want)
		}
	}
	for _, bad := range []string{
		"redis://127.0.0.1/m",
		"redis+sentinel://127.0.0.1",
		"redis+sentinel://127.0.0.1:0/m",
		"redis+sentinel://127.0.0.1:1/m/x",
		"redis+sentinel://127.0.0.1:1/m/1/2",
		"redis+sentinel://u:hunter2@127.0.0.1:99999/m",
		"redis+sentinel:///m",
		"redis-sentinel://127.0.0.1:1/0",
	} {
		_, err := ParseURI(bad)
		if err == nil {
			t.Errorf("%s: accepted", bad)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the password: %v", bad, err)
		}
	}
	if !IsURI("REDIS+SENTINEL://h/m") || IsURI("redis://h") || IsURI("sentinel") {
		t.Error("IsURI")
	}
}

func TestParseAddrs(t *testing.T) {
	got, err := ParseAddrs(" 127.0.0.1:1, localhost ,[::1]:3")
	if err != nil || !reflect.DeepEqual(got, []string{"127.0.0.1:1", "localhost:26379", "[::1]:3"}) {
		t.Fatalf("%v %v", got, err)
	}
	for _, bad := range []string{"", ",", "h:", ":5", "h:0", "h:x"} {
		if _, err := ParseAddrs(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
