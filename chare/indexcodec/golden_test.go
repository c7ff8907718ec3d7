package indexcodec

import (
	"encoding/hex"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestGoldenBytes pins the encoding of representative indices byte for
// byte: they are map keys (core.IndexKey) and are written into
// checkpoints, so they must never change.
func TestGoldenBytes(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{0, "00"}, {127, "7f"}, {128, "cc80"}, {-32, "e0"}, {-33, "d0df"}, {300, "cd012c"},
		{-300, "d1fed4"}, {1 << 20, "ce00100000"}, {math.MinInt32, "d280000000"},
		{1 << 40, "cf0000010000000000"}, {math.MinInt64, "d38000000000000000"},
		{[2]int{0, -1}, "9200ff"}, {[3]int{1, 200, -200}, "9301ccc8d1ff38"},
		{[6]int{1, 2, 3, 4, 5, 70000}, "960102030405ce00011170"},
	} {
		b, err := Append(nil, c.v)
		require.NoError(t, err)
		require.Equal(t, c.want, hex.EncodeToString(b), "%v", c.v)
	}
}
