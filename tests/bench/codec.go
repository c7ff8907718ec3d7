package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor/codec"
)

// The codec benchmarks encode and decode a 16-byte message (m2mMsg, two
// int64s) n times, as a message body crossing processes is, with the
// codec the runtime picks for it, against msgpack/v5 by reflection with a
// reused encoder and decoder (structs as arrays): the way every message
// body was encoded before actor/codec.
func init() {
	registerPaired("codec/generated", func(cfg config) ([]figure, error) {
		return benchCodec(cfg, "codec/generated", codec.For[m2mMsg](), m2mMsg{From: 3, Seq: 1 << 33})
	})
	registerPaired("codec/marshalmsg", func(cfg config) ([]figure, error) {
		return benchCodec(cfg, "codec/marshalmsg", codec.For[ownMsg](), ownMsg{From: 3, Seq: 1 << 33})
	})
}

// ownMsg is m2mMsg with its own MarshalMsg and UnmarshalMsg (the msgp
// convention), in a fixed binary layout.
type ownMsg struct{ From, Seq int64 }

func (m ownMsg) MarshalMsg(b []byte) ([]byte, error) {
	return binary.LittleEndian.AppendUint64(binary.LittleEndian.AppendUint64(b, uint64(m.From)), uint64(m.Seq)), nil
}

func (m *ownMsg) UnmarshalMsg(b []byte) ([]byte, error) {
	if len(b) < 16 {
		return b, errors.New("ownMsg: fewer than 16 bytes")
	}
	m.From, m.Seq = int64(binary.LittleEndian.Uint64(b)), int64(binary.LittleEndian.Uint64(b[8:]))
	return b[16:], nil
}

func benchCodec[T comparable](cfg config, name string, c *codec.Codec, v T) ([]figure, error) {
	n := int(2_000_000 * cfg.scale)
	fig := figure{name: name, unit: "msgs/s"}
	for range pairsOf(cfg) {
		a, err := codecRun(c, v, n)
		if err != nil {
			return nil, err
		}
		b, err := reflectRun(v, n)
		if err != nil {
			return nil, err
		}
		fig.value, fig.baseline = append(fig.value, a), append(fig.baseline, b)
	}
	return []figure{fig}, nil
}

func codecRun[T comparable](c *codec.Codec, v T, n int) (float64, error) {
	buf := make([]byte, 0, 64)
	var back T
	t0 := time.Now()
	for range n {
		var err error
		if buf, err = codec.Append(c, buf[:0], &v); err != nil {
			return 0, err
		}
		if err := codec.Decode(c, buf, &back); err != nil {
			return 0, err
		}
	}
	rate := float64(n) / time.Since(t0).Seconds()
	if back != v {
		return 0, fmt.Errorf("%v came back as %v", v, back)
	}
	return rate, nil
}

func reflectRun[T comparable](v T, n int) (float64, error) {
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseArrayEncodedStructs(true)
	var r bytes.Reader
	dec := msgpack.NewDecoder(&r)
	var back T
	t0 := time.Now()
	for range n {
		buf.Reset()
		if err := enc.Encode(&v); err != nil {
			return 0, err
		}
		r.Reset(buf.Bytes())
		dec.Reset(&r)
		if err := dec.Decode(&back); err != nil {
			return 0, err
		}
	}
	rate := float64(n) / time.Since(t0).Seconds()
	if back != v {
		return 0, fmt.Errorf("%v came back as %v", v, back)
	}
	return rate, nil
}
