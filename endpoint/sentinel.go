package endpoint

import (
	"context"

	"github.com/pacer-load/pacer/conn"
	"github.com/pacer-load/pacer/sentinel"
)

// FollowSentinels finds the primary through the sentinels (t.Sentinels),
// points Options at it and follows its failovers until Close: Current and
// Redial then reach the primary of the moment. A sentinel that does not
// answer is skipped, and said; none answering is an error naming each.
func (t *Target) FollowSentinels(ctx context.Context) error {
	c := *t.Sentinels
	if c.Options.Now == nil {
		c.Options.Now = t.Options.Now
	}
	top, err := sentinel.Discover(ctx, c)
	if err != nil {
		return err
	}
	for _, s := range top.Skipped {
		t.say("pacer: sentinel %s (skipped)", s)
	}
	t.Options = t.Options.ForAddr(top.Primary)
	t.follower = sentinel.Follow(context.WithoutCancel(ctx), c, top, t.Options.Now)
	return nil
}

// Follower is what follows the primary through the sentinels (nil
// without them).
func (t *Target) Follower() *sentinel.Follower { return t.follower }

// Current returns the options that reach the primary now: Options, with
// the address of the primary the sentinels name when they do.
func (t *Target) Current() conn.Options {
	if t.follower == nil {
		return t.Options
	}
	addr, _ := t.follower.Primary()
	return t.Options.ForAddr(addr)
}

// Primary returns the options that reach the primary now and how many
// failovers were followed to it (0 without sentinels).
func (t *Target) Primary() (conn.Options, uint64) {
	if t.follower == nil {
		return t.Options, 0
	}
	addr, epoch := t.follower.Primary()
	return t.Options.ForAddr(addr), epoch
}

// Close stops following the primary. Idempotent.
func (t *Target) Close() {
	if t.follower != nil {
		t.follower.Close()
	}
}
