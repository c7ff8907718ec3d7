package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/charmgo/charm/actor/codec"
	"github.com/charmgo/charm/chare/indexcodec"
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

// codec/index/<type>: an element index crossing processes, encoded into a
// reused buffer and decoded into its type (as a run's tail and an array's
// ResidentRaw do), by chare/indexcodec, against msgpack.Marshal and
// msgpack.Unmarshal (how indices were encoded and decoded before). The
// values vary, as the elements of a run do.
func init() {
	registerPaired("codec/index/int", func(cfg config) ([]figure, error) {
		return benchIndexCodec(cfg, "codec/index/int", func(i int) int { return 1000 + i%64 })
	})
	registerPaired("codec/index/[3]int", func(cfg config) ([]figure, error) {
		return benchIndexCodec(cfg, "codec/index/[3]int", func(i int) [3]int { return [3]int{i % 8, i / 8 % 8, 300 + i%4} })
	})
}

func benchIndexCodec[I comparable](cfg config, name string, at func(int) I) ([]figure, error) {
	n := int(1_000_000 * cfg.scale)
	idx := make([]any, 256) // in an any, as Header.Index holds them
	for k := range idx {
		idx[k] = at(k)
	}
	fig := figure{name: name, unit: "indices/s"}
	var buf []byte
	for range pairsOf(cfg) {
		t0 := time.Now()
		for k := range n {
			var err error
			buf, err = indexcodec.Append(buf[:0], idx[k%len(idx)])
			if err != nil {
				return nil, err
			}
			v, err := indexcodec.Decode[I](buf)
			if err != nil || v != idx[k%len(idx)] {
				return nil, fmt.Errorf("%s: index %v came back as %v (%v)", name, idx[k%len(idx)], v, err)
			}
		}
		a := float64(n) / time.Since(t0).Seconds()
		t0 = time.Now()
		for k := range n {
			b, err := msgpack.Marshal(idx[k%len(idx)])
			if err != nil {
				return nil, err
			}
			var v I
			if err := msgpack.Unmarshal(b, &v); err != nil || v != idx[k%len(idx)] {
				return nil, fmt.Errorf("%s: index %v came back as %v (%v)", name, idx[k%len(idx)], v, err)
			}
		}
		b := float64(n) / time.Since(t0).Seconds()
		fig.value, fig.baseline = append(fig.value, a), append(fig.baseline, b)
	}
	return []figure{fig}, nil
}
