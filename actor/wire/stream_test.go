package wire

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// streamOf writes frames to a stream as a sender does.
func streamOf(t testing.TB, frames ...*Frame) []byte {
	var s []byte
	for _, f := range frames {
		var err error
		s, err = AppendStreamFrame(s, f)
		require.NoError(t, err)
	}
	return s
}

func TestReadStreamFrames(t *testing.T) {
	a := &Frame{Kind: KindData, Token: "job", From: 1, Items: []Item{{PE: 3, Kind: 100, Body: []byte{0x90}}}}
	b := &Frame{Kind: KindCredit, Token: "job", From: 1, Body: []byte{0x05}}
	r := bytes.NewReader(streamOf(t, a, b))
	for _, want := range []*Frame{a, b} {
		raw, err := ReadStream(r, MaxFrame)
		require.NoError(t, err)
		got, err := DecodeFrame(raw)
		require.NoError(t, err)
		require.Equal(t, want.Kind, got.Kind)
		require.Equal(t, want.Token, got.Token)
		require.Equal(t, len(want.Items), len(got.Items))
	}
	_, err := ReadStream(r, MaxFrame)
	require.ErrorIs(t, err, io.EOF, "the end of the stream between frames")
}

func TestReadStreamRejects(t *testing.T) {
	whole := streamOf(t, &Frame{Kind: KindBeat, Token: "job", From: 1})
	hdr := StreamHeaderOf(MaxFrame + 1)
	for _, tc := range []struct {
		name    string
		b       []byte
		corrupt bool
		want    string
	}{
		{"empty frame", []byte{0, 0, 0, 0}, true, "empty frame"},
		{"over the limit", append(hdr[:], 1, 2, 3), true, "over the limit"},
		{"huge length", []byte{0xff, 0xff, 0xff, 0xff}, true, "over the limit"},
		{"cut in the header", whole[:2], false, "unexpected EOF"},
		{"cut in the frame", whole[:len(whole)-1], false, "unexpected EOF"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadStream(bytes.NewReader(tc.b), MaxFrame)
			require.Error(t, err)
			require.Contains(t, err.Error(), tc.want)
			require.Equal(t, tc.corrupt, errors.Is(err, ErrCorrupt), err.Error())
		})
	}
}

// FuzzReadStream feeds arbitrary bytes to a stream reader, as a node reads
// its peers' Unix socket, and decodes every frame it yields: neither may
// panic, every error says what went wrong, and what decodes re-encodes to
// an equal frame.
func FuzzReadStream(f *testing.F) {
	f.Add(streamOf(f, &Frame{Kind: KindData, Token: "job", From: 1, Items: []Item{{PE: 3, Kind: 100, Tails: 1, Head: []byte{1}, Body: AppendTail(nil, []byte{2})}}}))
	f.Add([]byte{0xff, 0xff, 0xff, 0x7f, 1})
	f.Add([]byte{3, 0, 0, 0, 0x93, 1, 2})
	f.Fuzz(func(t *testing.T, s []byte) {
		r := bytes.NewReader(s)
		for {
			b, err := ReadStream(r, 1<<16)
			if err != nil {
				require.NotEmpty(t, err.Error())
				return
			}
			checkDecode(t, b)
		}
	})
}
