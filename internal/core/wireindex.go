package core

import (
	"github.com/charmgo/charm/chare/indexcodec"
)

// Indices from another process stay in their wire form (package
// indexcodec) until the collection decodes them with its own index type.

// rawIndex is an index still in its wire form (package indexcodec).
type rawIndex []byte

// String shows a built-in index as %v shows the index itself.
func (r rawIndex) String() string { return indexcodec.Format(r) }

// wireIndex is the wire form of an index short enough to be held in a
// value of its own: the header of an envelope from another process keeps
// a *wireIndex, which goes in an any without an allocation (a rawIndex
// would take two: its bytes and its boxed slice) and comes from a slab
// when a wire run is read tail by tail. The array that receives the
// envelope reads the index from it without boxing it (RawDeliverer).
type wireIndex struct {
	n uint8
	b [15]byte
}

func (w *wireIndex) raw() rawIndex  { return w.b[:w.n:w.n] }
func (w *wireIndex) String() string { return w.raw().String() }

// rawOf returns an index's wire form if it is still in one.
func rawOf(i any) (rawIndex, bool) {
	switch r := i.(type) {
	case rawIndex:
		return r, true
	case *wireIndex:
		return r.raw(), true
	}
	return nil, false
}

// indexSlab hands out wireIndex values for the envelopes of one wire run.
type indexSlab struct {
	free []wireIndex
	n    int // the size of the next array: 4, doubling up to slabMax
}

// index returns b (which aliases a frame) as a header's index: a copy in
// a wireIndex from s, or a rawIndex if it is too long for one. left is
// how many of the run's envelopes are still to be read, this one
// included: no array is made longer than that.
func (s *indexSlab) index(b []byte, left int) any {
	if len(b) > len(wireIndex{}.b) {
		return rawIndex(append([]byte(nil), b...))
	}
	if len(s.free) == 0 {
		s.n = min(max(2*s.n, 4), slabMax)
		s.free = make([]wireIndex, min(s.n, max(left, 1)))
	}
	w := &s.free[0]
	s.free = s.free[1:]
	w.n = uint8(copy(w.b[:], b))
	return w
}

// withIndex allocates an envelope of type E for a message from another
// process that is not carved from a run's slab (a lone one), and its
// index b (nil for none, aliasing a frame) as a header's index. A short
// index is copied into a wireIndex allocated with the envelope, in one
// allocation; the envelope keeps it alive.
func withIndex[E any](b []byte) (*E, any) {
	switch {
	case b == nil:
		return new(E), nil
	case len(b) > len(wireIndex{}.b):
		return new(E), rawIndex(append([]byte(nil), b...))
	}
	p := new(struct {
		e  E
		ix wireIndex
	})
	p.ix.n = uint8(copy(p.ix.b[:], b))
	return &p.e, &p.ix
}

// runSlabs are what the envelopes of one wire run read tail by tail are
// carved from: the typed decoder's envelope slab (an *envSlab) and the
// indices' slab. left counts the run's envelopes still to be read, so
// that a run of one makes one envelope, not a slab of four.
type runSlabs struct {
	env  any
	ix   indexSlab
	left int
}

// Spec describes a collection so that another process can rebuild it.
