//go:build !linux

package scheduler

import "time"

func preciseSleepUntil(deadline int64) {
	time.Sleep(time.Duration(deadline - nanotime()))
}

const havePreciseSleep = false
