package reducer

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// maxPrealloc bounds the elements decodeSlice allocates before it has
// read them, so that a corrupt length header costs little.
const maxPrealloc = 1024

// encodeSlice writes s as a msgpack array, each element with elem, or as
// nil for a nil slice (so that nil and empty slices round-trip). Writing
// the elements one by one, rather than with enc.Encode(s), keeps []uint8
// an array instead of msgpack's binary string.
func encodeSlice[E any](enc *msgpack.Encoder, s []E, elem func(E) error) error {
	if s == nil {
		return enc.EncodeNil()
	}
	if err := enc.EncodeArrayLen(len(s)); err != nil {
		return err
	}
	for _, e := range s {
		if err := elem(e); err != nil {
			return err
		}
	}
	return nil
}

// decodeSlice reads an array written by encodeSlice, each element with
// elem. It grows the slice as elements arrive instead of trusting the
// length header: msgpack v5.4.1 decodes a slice by allocating all the
// elements its header claims (its allocation limit never applies, see
// decodeSliceValue), so that five bytes of garbage can cost gigabytes.
func decodeSlice[E any](dec *msgpack.Decoder, elem func() (E, error)) ([]E, error) {
	n, err := dec.DecodeArrayLen()
	if err != nil || n < 0 {
		return nil, err
	}
	s := make([]E, 0, min(n, maxPrealloc))
	for range n {
		e, err := elem()
		if err != nil {
			return nil, err
		}
		s = append(s, e)
	}
	return s, nil
}

// decodeArrayLen reads an array header and checks that it holds n
// elements.
func decodeArrayLen(dec *msgpack.Decoder, n int) error {
	got, err := dec.DecodeArrayLen()
	if err != nil {
		return err
	}
	if got != n {
		return fmt.Errorf("array of %d values, want %d", got, n)
	}
	return nil
}
