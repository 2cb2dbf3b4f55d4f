package scheduler

// Fixed is one command sent as it is, request after request: the Commands
// of a load that needs no template, as encoded RESP (conn.AppendCommand
// writes it). Every request is of kind 0. Next only reads it, so one Fixed
// may feed several drivers or closed-loop connections at once. For fresh
// keys or values per request, send a scenarios.Stream instead.
type Fixed []byte

var _ Commands = Fixed(nil)

// Next implements Commands: the command itself, kind 0.
func (f Fixed) Next() ([]byte, uint32) { return f, 0 }
