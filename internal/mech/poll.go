package mech

import "context"

// Poll lets a mechanism's long loop stop when its statement's context ends
// (the statement timeout, KILL QUERY, the client gone): the loop reports
// the work it does with Tick, which reads the context only once per
// PollEvery units, so the check costs an addition and a branch. A
// mechanism that stops returns the context's error (wrapped or not), and
// its caller maps it to the statement's typed timeout or cancellation
// error. Stopping is decided by the clock and the client, never by the
// data's values; the statement's budget is charged as for any failure
// after data was read.
type Poll struct {
	ctx  context.Context
	work uint64
}

// PollEvery is how many units of work pass between two reads of the
// context.
const PollEvery = 4096

// NewPoll returns a Poll of ctx.
func NewPoll(ctx context.Context) *Poll { return &Poll{ctx: ctx} }

// Tick counts units ≥ 1 units of work (an iteration, or an iteration's
// inner loop of that length) and returns the context's error when the
// count passes a multiple of PollEvery, else nil.
func (p *Poll) Tick(units int64) error {
	before := p.work
	p.work += uint64(max(units, 1))
	if before/PollEvery == p.work/PollEvery {
		return nil
	}
	return p.ctx.Err()
}
