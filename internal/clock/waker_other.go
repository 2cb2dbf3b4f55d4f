//go:build !linux

package clock

import "errors"

func newKernelTimer() (kernelTimer, error) { return nil, errors.New("no timerfd") }
