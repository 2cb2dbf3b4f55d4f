package sentinel_test

import (
	"fmt"

	"github.com/pacer-load/pacer/sentinel"
)

func ExampleParseURI() {
	u, err := sentinel.ParseURI("redis+sentinel://app:secret@127.0.0.1:26379,127.0.0.1:26380/mymaster/2?sentinel_username=watcher&sentinel_password=other")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(u.Sentinels, u.Master, u.DB, u.User, u.SentinelUser, u.TLS)
	// Output: [127.0.0.1:26379 127.0.0.1:26380] mymaster 2 app watcher false
}
