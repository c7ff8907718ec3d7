package core

import (
	"fmt"

	"github.com/charmgo/charm/actor"
)

// Detector is a completion detection session (Charm++'s
// CkCompletionDetector): a known number of producers, anywhere in the job,
// produce items that are consumed anywhere; once every producer called
// Done and every produced item was consumed, the finished callback runs.
// TRAM uses it to know when a step's items have all arrived. Detectors are
// values and can travel in messages.
type Detector struct {
	ID actor.DetectorID
}

// Completion holds the callbacks of a detection session; each receives a
// nil value.
type Completion struct {
	Producers   int      // producers across the job that will call Done
	Started     Callback // every PE knows the session: production may begin
	AllProduced Callback // every producer called Done
	Finished    Callback // and every produced item was consumed
}

// StartCompletion begins a completion detection session.
func StartCompletion(from Context, c Completion) (Detector, error) {
	pe, err := peFrom(from)
	if err != nil {
		return Detector{}, err
	}
	fire := func(what string, cb Callback) func(*actor.PE) {
		return func(ap *actor.PE) {
			if err := cb.Send(ContextOf(peOf(ap)), nil); err != nil {
				peOf(ap).fail(fmt.Errorf("chare: completion detection %s callback: %w", what, err))
			}
		}
	}
	id, err := pe.ap.StartDetection(actor.Detection{
		Producers:   int64(c.Producers),
		Started:     fire("started", c.Started),
		AllProduced: fire("all-produced", c.AllProduced),
		Finished:    fire("finished", c.Finished),
	})
	return Detector{ID: id}, err
}

// Produce counts n items produced by the caller.
func (d Detector) Produce(from Context, n int) error {
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	pe.ap.Produce(d.ID, int64(n))
	return nil
}

// Consume counts n items consumed by the caller.
func (d Detector) Consume(from Context, n int) error {
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	pe.ap.Consume(d.ID, int64(n))
	return nil
}

// Done records that n producers (usually 1: the caller) finished.
func (d Detector) Done(from Context, n int) error {
	pe, err := peFrom(from)
	if err != nil {
		return err
	}
	pe.ap.ProducerDone(d.ID, int64(n))
	return nil
}
