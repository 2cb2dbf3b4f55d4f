//go:build !linux

package conn

import "testing"

func fullBacklog(t *testing.T) string {
	t.Skip("needs Linux's accept-queue behaviour")
	return ""
}
