package scheduler

// Stamper is a command stream whose commands carry their own place on the
// timeline: a message bus's payloads hold their sequence number and their
// intended instant, so that whoever receives them (a subscriber, a
// stream's consumer) measures from the intended time too. The open pacer
// calls Begin once with the timeline's start, then, for each request it
// queues, Stamp right before Next: index is the request's index on this
// process's timeline (a shard's own, from 0; requests dropped for being too
// late are never stamped), intended its intended instant and now the
// pacer's wake instant, when it is queued (both on the Now clock). A closed
// loop never calls them.
type Stamper interface {
	Commands
	Begin(t0 int64)
	Stamp(index uint64, intended, now int64)
}
