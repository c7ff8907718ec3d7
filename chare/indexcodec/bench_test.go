package indexcodec

import "testing"

// BenchmarkIndex: an index encoded into a reused buffer, and decoded, as a
// run's tail and an array's resident lookup do; the values (boxed once, as
// a Header holds them) vary over the one-byte and three-byte integer
// forms.
func BenchmarkIndex(b *testing.B) {
	ints := make([]any, 64)
	triples := make([]any, 64)
	for i := range ints {
		ints[i] = 100 + i
		triples[i] = [3]int{i % 8, i / 8 % 8, 300 + i%4}
	}
	bench := func(b *testing.B, vals []any, decode func([]byte) (any, error)) {
		bufs := make([][]byte, len(vals))
		for i, v := range vals {
			bufs[i], _ = Append(nil, v)
		}
		b.Run("append", func(b *testing.B) {
			var buf []byte
			for i := range b.N {
				buf, _ = Append(buf[:0], vals[i%len(vals)])
			}
		})
		b.Run("decode", func(b *testing.B) {
			for i := range b.N {
				if _, err := decode(bufs[i%len(bufs)]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("int", func(b *testing.B) {
		bench(b, ints, func(p []byte) (any, error) { v, err := Decode[int](p); return v == 0, err })
	})
	b.Run("[3]int", func(b *testing.B) {
		bench(b, triples, func(p []byte) (any, error) { v, err := Decode[[3]int](p); return v[0] == 0, err })
	})
}
