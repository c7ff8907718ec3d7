package actor

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBackoff(t *testing.T) {
	cases := []struct {
		failures int
		want     time.Duration
	}{
		{0, 0},
		{1, 0},
		{2, 50 * time.Microsecond},
		{3, 100 * time.Microsecond},
		{4, 200 * time.Microsecond},
		{7, 1600 * time.Microsecond},
		{8, 2 * time.Millisecond},
		{100, 2 * time.Millisecond},
	}
	for _, c := range cases {
		require.Equal(t, c.want, backoff(c.failures), "after %d failures", c.failures)
	}
}
