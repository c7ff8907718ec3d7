package actor

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The bound on messages in flight counts a message as one, a Multi as its
// messages, and a Sized Multi by its bytes in envelopes' worth, at least one.

type testOne struct{}

func (testOne) Deliver(*PE) {}

type testMulti struct{ n int }

func (testMulti) Deliver(*PE)  {}
func (m testMulti) Count() int { return m.n }

type testSized struct{ n, bytes int }

func (testSized) Deliver(*PE)  {}
func (m testSized) Count() int { return m.n }
func (m testSized) Bytes() int { return m.bytes }

func TestWeight(t *testing.T) {
	tests := []struct {
		name string
		m    Message
		want int
	}{
		{"a message", testOne{}, 1},
		{"a multi of 7", testMulti{7}, 7},
		{"a sized multi of 1 byte", testSized{3, 1}, 1},
		{"ten envelopes' worth", testSized{500, 10 * EnvelopeBytes}, 10},
		{"a byte more", testSized{500, 10*EnvelopeBytes + 1}, 11},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, weight(tc.m))
		})
	}
}
