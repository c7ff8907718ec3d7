package tram

import (
	"errors"
	"fmt"

	"github.com/charmgo/charm/array"
	"github.com/charmgo/charm/chare"
	"github.com/charmgo/charm/internal/core"
)

// Array clients (T09, T17, T18): items addressed to an array index go to
// the PE where the map (or, once elements migrate, the location manager)
// puts the element, and are delivered there by one call of the element's
// process method. An item whose element is not on the PE it reached (it
// moved meanwhile) is re-sent to it as an ordinary message, which the
// runtime forwards to wherever the element is now. Staged completion needs
// exact locations (T22): use completion or quiescence steps with arrays
// whose elements migrate.
//
// Two limits while elements move (tram/migrate_test.go shows the rest):
// a re-sent item counts as delivered when it is re-sent, so a completion
// step's Finished may run before it reaches its element (wait for
// quiescence after Finished if elements migrate during the step); and an
// array broadcast through TRAM reaches the elements on each PE when the
// batch arrives there, so an element moving between PEs meanwhile may
// see it twice or not at all (use the runtime's broadcast, which is
// exactly-once, for migrating arrays).

// Indexed is an item on its way to an array element, or, with All, to
// every element of the PE it is sent to.
type Indexed[I comparable, T any] struct {
	Index I
	Item  T
	All   bool
}

// ArrayStreamer is a TRAM instance whose items of type T go to the
// elements of an array of C indexed by I.
type ArrayStreamer[C any, I comparable, T any] struct {
	S Streamer[C, Indexed[I, T]]
	A array.Proxy[C, I]
}

// RegisterArray makes a TRAM instance type for an array client, with the
// elements' process method (an entry method of C taking a T). Call it in
// an init function, in the same order in every process.
func RegisterArray[C any, I comparable, T any](process func(*C, T)) {
	chare.Register[branch[C, Indexed[I, T]]]()
	storeSink(process, sink[C, Indexed[I, T]](func(ctx chare.Context, client chare.Proxy[C]) (giver[Indexed[I, T]], error) {
		pe := chare.PEOf(ctx)
		part, err := core.PartOf(pe, client.Route().Coll)
		if err != nil {
			return giver[Indexed[I, T]]{}, err
		}
		each, ok := part.(interface{ Each(func(any)) })
		if !ok {
			return giver[Indexed[I, T]]{}, errors.New("tram: the client is not a chare array")
		}
		ap := array.Proxy[C, I]{Proxy: client}
		one := func(it Indexed[I, T]) {
			if it.All {
				each.Each(func(obj any) { process(obj.(*C), it.Item) })
				return
			}
			if obj := chare.Local(ctx, ap.At(it.Index)); obj != nil {
				process(obj, it.Item)
				return
			}
			// Not here: it moved (or is not made yet); the runtime knows.
			if err := chare.Send(ctx, ap.At(it.Index), process, it.Item); err != nil {
				pe.Fail(fmt.Errorf("tram: re-sending an item for element %v: %w", it.Index, err))
			}
		}
		return giver[Indexed[I, T]]{one: one, run: func(items []Envelope[Indexed[I, T]]) {
			for i := range items {
				one(items[i].Item)
			}
		}, bare: func(items []Indexed[I, T]) {
			for _, it := range items {
				one(it) // the index travels in the item: only the PE is dropped
			}
		}}, nil
	}))
}

// NewArray creates a streamer for an array client.
func NewArray[C any, I comparable, T any](from chare.Context, client array.Proxy[C, I], process func(*C, T), o Options) (ArrayStreamer[C, I, T], error) {
	id, err := registered(process)
	if err != nil {
		return ArrayStreamer[C, I, T]{}, err
	}
	s, err := create[C, Indexed[I, T]](from, client.Proxy, id, o)
	return ArrayStreamer[C, I, T]{S: s, A: client}, err
}

// Start begins a step, as Streamer.Start does. Staged completion is
// refused: array elements can migrate, and stale locations break it (T22).
func (a ArrayStreamer[C, I, T]) Start(from chare.Context, st Step) error {
	if st.Mode == Staged {
		return errors.New("tram: staged completion needs exact locations, and array elements can migrate: use a completion or quiescence step for an array client (claim T22)")
	}
	return a.S.Start(from, st)
}

// Insert submits an item for the element with the given index (T17).
func (a ArrayStreamer[C, I, T]) Insert(from chare.Context, item T, index I) error {
	pe := chare.PEOf(from)
	if pe == nil {
		return chare.ErrNoContext
	}
	part, err := core.PartOf(pe, a.A.Route().Coll)
	if err != nil {
		return err
	}
	dest, err := array.LocateIn(part, index) // no allocation for the index
	if err != nil {
		return err
	}
	return a.S.Insert(from, Indexed[I, T]{Index: index, Item: item}, dest)
}

// Broadcast submits an item for every element of the array (T18).
func (a ArrayStreamer[C, I, T]) Broadcast(from chare.Context, item T) error {
	return a.S.Broadcast(from, Indexed[I, T]{Item: item, All: true})
}

// Done records that n of this PE's producers finished (T19).
func (a ArrayStreamer[C, I, T]) Done(from chare.Context, n int) error { return a.S.Done(from, n) }
