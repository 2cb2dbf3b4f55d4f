// Package drivertest holds what the tests of the open and the closed
// driver (scheduler/openloop, scheduler/closedloop) share: a loopback
// RESP server whose replies a test decides, dialing with the drivers'
// clock, the command streams they send, and the check that a series
// adds up to its test. It imports the packages below the drivers, never
// the drivers, so both drivers' tests can import it.
package drivertest
