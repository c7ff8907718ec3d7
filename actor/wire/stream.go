package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Frames on a byte stream. A connection that is not message-oriented (a
// Unix-domain socket between the nodes of one host) carries each encoded
// frame after its length: StreamHeader bytes, little-endian. A reader
// checks the length against its limit before it allocates anything.

// StreamHeader is the length of the header before each frame on a stream.
const StreamHeader = 4

// AppendStreamFrame appends f to b as a stream carries it: its header,
// then the frame encoded (see [AppendFrame]). On an error b is returned
// unchanged.
func AppendStreamFrame(b []byte, f *Frame) ([]byte, error) {
	start := len(b)
	b, err := AppendFrame(append(b, make([]byte, StreamHeader)...), f)
	if err != nil {
		return b[:start], err
	}
	binary.LittleEndian.PutUint32(b[start:], uint32(len(b)-start-StreamHeader))
	return b, nil
}

// StreamHeaderOf returns the header for a frame of n bytes.
func StreamHeaderOf(n int) [StreamHeader]byte {
	var h [StreamHeader]byte
	binary.LittleEndian.PutUint32(h[:], uint32(n))
	return h
}

// ReadStream reads the next frame from r: its bytes, not decoded (see
// [DecodeFrame]). A frame longer than max bytes, or empty, is an error
// that wraps ErrCorrupt, read no further. At the end of the stream between
// frames it returns io.EOF; inside a frame, io.ErrUnexpectedEOF.
func ReadStream(r io.Reader, max int) ([]byte, error) {
	var h [StreamHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint32(h[:])
	switch {
	case n == 0:
		return nil, &corruptError{"wire: an empty frame on the stream"}
	case uint64(n) > uint64(max):
		return nil, &corruptError{fmt.Sprintf("wire: a frame of %d bytes on the stream, over the limit of %d", n, max)}
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return nil, fmt.Errorf("wire: a frame of %d bytes on the stream: %w", n, err)
	}
	return b, nil
}
