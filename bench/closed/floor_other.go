//go:build !linux

package main

import "errors"

func floorClient(addr string, clients, pipeline, requests int) error {
	return errors.New("the floor client needs Linux (epoll)")
}
