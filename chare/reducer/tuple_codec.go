package reducer

import (
	"fmt"

	"github.com/vmihailenco/msgpack/v5"
)

// codecTuple is a tuple whose reducers all have a Codec.
type codecTuple struct{ *tuple }

// EncodePartial writes the partial results as an array, each with its
// reducer's Codec.
func (t *codecTuple) EncodePartial(enc *msgpack.Encoder, partial any) error {
	vs, err := t.values("partial result", partial)
	if err != nil {
		return err
	}
	if err := enc.EncodeArrayLen(len(vs)); err != nil {
		return codecErr(t.name, "encoding", err)
	}
	for i, r := range t.rs {
		if err := EncodePartial(enc, r, vs[i]); err != nil {
			return t.wrap(i, err)
		}
	}
	return nil
}

// DecodePartial reads what EncodePartial wrote, as an []any holding a
// partial result of each reducer.
func (t *codecTuple) DecodePartial(dec *msgpack.Decoder) (any, error) {
	if err := decodeArrayLen(dec, len(t.rs)); err != nil {
		return nil, codecErr(t.name, "decoding", err)
	}
	out := make([]any, len(t.rs))
	for i, r := range t.rs {
		var err error
		if out[i], err = DecodePartial(dec, r); err != nil {
			return nil, t.wrap(i, err)
		}
	}
	return out, nil
}

func (t *codecTuple) namesItself() {}

// whyNoCodec names the first reducer that has no Codec, or is "" if all
// have one.
func (t *tuple) whyNoCodec() string {
	for i, r := range t.rs {
		if _, ok := r.(Codec); !ok {
			return fmt.Sprintf("its value %d, of reducer %s, cannot: %s", i, r.Name(), whyNoCodec(r))
		}
	}
	return ""
}
