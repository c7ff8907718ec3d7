package wire

import (
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// benchFrame is a typical data frame: 100 messages of 32 bytes.
func benchFrame() *Frame {
	f := &Frame{Kind: KindData, Token: "0123456789abcdef", From: 1, Seq: 123456, Items: make([]Item, 100)}
	for i := range f.Items {
		body := make([]byte, 32)
		for j := range body {
			body[j] = byte(i + j)
		}
		f.Items[i] = Item{PE: int32(i % 8), Kind: 12, Body: body}
	}
	return f
}

// Each benchmark runs its baseline on the same frame: msgpack/v5's own
// reflection-based Marshal and Unmarshal of the Frame struct.
func BenchmarkAppendFrame(b *testing.B) {
	f := benchFrame()
	b.Run("wire", func(b *testing.B) {
		buf, _ := AppendFrame(nil, f)
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = AppendFrame(buf[:0], f)
		}
	})
	b.Run("baseline=msgpack.Marshal", func(b *testing.B) {
		buf, _ := msgpack.Marshal(f)
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for b.Loop() {
			_, _ = msgpack.Marshal(f)
		}
	})
}

func BenchmarkDecodeFrame(b *testing.B) {
	f := benchFrame()
	b.Run("wire", func(b *testing.B) {
		buf, _ := AppendFrame(nil, f)
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeFrame(buf); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("baseline=msgpack.Unmarshal", func(b *testing.B) {
		buf, _ := msgpack.Marshal(f)
		b.SetBytes(int64(len(buf)))
		b.ReportAllocs()
		for b.Loop() {
			var g Frame
			if err := msgpack.Unmarshal(buf, &g); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkSplit(b *testing.B) {
	items := make([]Item, 100_000)
	for i := range items {
		items[i] = Item{PE: int32(i), Kind: 3, Body: make([]byte, 32)}
	}
	b.ReportAllocs()
	for b.Loop() {
		_ = Split(items, MaxFrame-100)
	}
}
